package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/manifest"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/postrender"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/show"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/values"
)

var (
	_ datasource.DataSource                   = (*templateDataSource)(nil)
	_ datasource.DataSourceWithConfigure      = (*templateDataSource)(nil)
	_ datasource.DataSourceWithValidateConfig = (*templateDataSource)(nil)
)

// NewTemplateDataSource returns the helmrelease_template data source.
func NewTemplateDataSource() datasource.DataSource { return &templateDataSource{} }

type templateDataSource struct {
	data *providerData
}

func (d *templateDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_template"
}

func (d *templateDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = templateSchema()
}

func templateSchema() schema.Schema {
	return schema.Schema{
		MarkdownDescription: "Renders a chart as `helmrelease_release` would install it, without writing to any cluster: the same values composition (`values_from`, `values`, `sensitive_values`), the same post-renderers and origin labels. " +
			"The cluster is read only for `values_from` and, when the provider is configured for one, for the Kubernetes version and API versions templates see (`.Capabilities`); otherwise Helm's defaults are used.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "`<namespace>/<release_name>` (`<cluster>:<namespace>/<release_name>` with `cluster`): the ID of a `helmrelease_release` of the same `name`, `namespace` and `cluster` (whose `storage_namespace` defaults to `namespace`).",
				Computed:            true,
			},
			"name": schema.StringAttribute{
				MarkdownDescription: "Name of the release object (HelmRelease `metadata.name`), the base of the release name.",
				Required:            true,
				Validators:          []validator.String{dnsSubdomain()},
			},
			"namespace": schema.StringAttribute{
				MarkdownDescription: "Namespace of the release object (HelmRelease `metadata.namespace`), where `values_from` objects are read. Default: `default`.",
				Optional:            true,
				Computed:            true,
				Validators:          []validator.String{dnsLabel(63)},
			},
			"cluster": schema.StringAttribute{
				MarkdownDescription: clusterDescription("rendered for: its API versions are the `.Capabilities` of the templates, and `values_from` is read there", ""),
				Optional:            true,
				Validators:          []validator.String{clusterNameValidator()},
			},
			"target_namespace": schema.StringAttribute{
				MarkdownDescription: "Namespace the objects are rendered for (HelmRelease `spec.targetNamespace`). Default: `namespace`.",
				Optional:            true,
				Computed:            true,
				Validators:          []validator.String{dnsLabel(63)},
			},
			"release_name": schema.StringAttribute{
				MarkdownDescription: "Helm release name (HelmRelease `spec.releaseName`). Default: `[target_namespace-]name`, shortened to 53 characters with a SHA-256 suffix when longer.",
				Optional:            true,
				Computed:            true,
				Validators:          []validator.String{dnsLabel(reconcile.MaxReleaseNameLength)},
			},
			"chart": chartAttribute(),
			"values": schema.DynamicAttribute{
				MarkdownDescription: "Inline values, any HCL object (HelmRelease `spec.values`). Default: none.",
				Optional:            true,
			},
			"sensitive_values": schema.StringAttribute{
				MarkdownDescription: "Values merged right after `values`, as a YAML or JSON mapping, e.g. `yamlencode({ auth = { password = var.password } })` (beyond Flux). Never shown in plans or logs: a string rather than an object because Terraform itself logs object values of dynamic attributes at debug level. Default: none.",
				Optional:            true,
				Sensitive:           true,
				Validators:          []validator.String{sensitiveValuesMapping()},
			},
			"values_from":     valuesFromAttribute(),
			"post_renderers":  postRenderersAttribute(),
			"common_metadata": commonMetadataAttribute(),
			"chart_version": schema.StringAttribute{
				MarkdownDescription: "Version of the rendered chart.",
				Computed:            true,
			},
			"app_version": schema.StringAttribute{
				MarkdownDescription: "App version of the rendered chart.",
				Computed:            true,
			},
			"resources": schema.MapAttribute{
				MarkdownDescription: "Rendered objects, keyed `<group>/<version>/<Kind>/<namespace>/<name>` (core group: `v1/<Kind>/…`; no namespace segment for cluster-scoped objects), each as YAML. The chart's CRDs are included; hooks and tests are not. Values of Secret `data` and `stringData` are never shown: they read `(sensitive value)` (a data source keeps no key to hash them with; the plan of `helmrelease_release` shows their changes), nor are the strings of `sensitive_values` and of `values_from` Secrets wherever the chart copies them.",
				ElementType:         types.StringType,
				Computed:            true,
			},
			"notes": schema.StringAttribute{
				MarkdownDescription: "Rendered NOTES.txt of the chart. Sensitive: charts may print credentials there, from `sensitive_values` too (use `nonsensitive()` to show it).",
				Computed:            true,
				Sensitive:           true,
			},
			"non_reproducible": schema.ListAttribute{
				MarkdownDescription: "Keys of `resources` that the chart renders differently every time (random values, generated keys and certificates, the current time), sorted; " +
					"`helmrelease_release` plans them as known after apply. Every key when the set of objects itself changes from one render to the next.",
				ElementType: types.StringType,
				Computed:    true,
			},
		},
	}
}

func (d *templateDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	data, err := configureData(req.ProviderData)
	if err != nil {
		resp.Diagnostics.AddError("Provider not configured", err.Error())
		return
	}
	d.data = data
}

func (d *templateDataSource) ValidateConfig(ctx context.Context, req datasource.ValidateConfigRequest, resp *datasource.ValidateConfigResponse) {
	var renderers []postRendererModel
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("post_renderers"), &renderers)...)
	validatePostRenderers(renderers, path.Root("post_renderers"), &resp.Diagnostics)
	var chart types.Object
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("chart"), &chart)...)
	if c := objectAs[chartModel](ctx, chart, path.Root("chart"), &resp.Diagnostics); c != nil {
		validateGit(c, path.Root("chart"), &resp.Diagnostics)
		validateBucket(c, path.Root("chart"), &resp.Diagnostics)
		validateVerify(ctx, c, path.Root("chart"), &resp.Diagnostics)
		validateDependencyUpdate(c, path.Root("chart"), &resp.Diagnostics)
		validatePlainHTTP(c, path.Root("chart"), &resp.Diagnostics)
		validateDigestVersion(c, path.Root("chart"), &resp.Diagnostics)
	}
}

// validatePostRenderExec refuses a command that cannot run here, and
// environment variable names the environment cannot hold.
func validatePostRenderExec(x *postRenderExecModel, at path.Path, diags *diag.Diagnostics) {
	if !x.Command.IsUnknown() && !x.Command.IsNull() {
		if _, err := (&postrender.Exec{Command: x.Command.ValueString()}).Resolve(); err != nil {
			attrError(diags, at.AtName("command"), "Post-renderer command not found",
				fmt.Sprintf("%s: %s. It runs on the machine running Terraform.", at.AtName("command"), err),
				"Install the command there (its directory in PATH), or name it by its path, e.g. \"${path.module}/bin/tool\" (a relative path is taken from the directory Terraform runs in).")
		}
	}
	for name := range x.Env.Elements() {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			attrError(diags, at.AtName("env"), "Invalid environment variable name",
				fmt.Sprintf("%s: %q cannot name an environment variable.", at.AtName("env"), name),
				"Use a name without \"=\", e.g. SOPS_AGE_KEY_FILE.")
		}
	}
}

// validatePostRenderers checks the patches and commands that are known,
// at plan time.
func validatePostRenderers(renderers []postRendererModel, base path.Path, diags *diag.Diagnostics) {
	const remedy = "Write a strategic merge patch as a YAML or JSON object naming its object (apiVersion, kind, metadata.name) unless a target is set, or a JSON 6902 patch as a list of operations like `[{op: replace, path: /spec/replicas, value: 2}]`."
	for i, pr := range renderers {
		if (pr.Exec == nil) == (pr.Kustomize == nil) {
			attrError(diags, base.AtListIndex(i), "Invalid post-renderer",
				fmt.Sprintf("%s sets %s of kustomize and exec.", base.AtListIndex(i), map[bool]string{true: "neither", false: "both"}[pr.Exec == nil]),
				"Set exactly one: kustomize for Kustomize directives, exec for a command; write two elements to run both, in order.")
		}
		if pr.Exec != nil {
			validatePostRenderExec(pr.Exec, base.AtListIndex(i).AtName("exec"), diags)
		}
		if pr.Kustomize == nil {
			continue
		}
		k := base.AtListIndex(i).AtName("kustomize")
		for j, p := range pr.Kustomize.Patches {
			if p.Patch.IsUnknown() || p.Patch.IsNull() {
				continue
			}
			if err := postrender.ValidatePatch(p.Patch.ValueString(), p.Target != nil); err != nil {
				invalidValue(diags, k.AtName("patches").AtListIndex(j).AtName("patch"), "patch", err, remedy)
			}
		}
		for j, p := range pr.Kustomize.PatchesStrategicMerge {
			if p.IsUnknown() || p.IsNull() {
				continue
			}
			if err := postrender.ValidatePatch(p.ValueString(), false); err != nil {
				invalidValue(diags, k.AtName("patches_strategic_merge").AtListIndex(j), "patch", err, remedy)
			}
		}
		for j, p := range pr.Kustomize.PatchesJSON6902 {
			if p.Patch.IsUnknown() || p.Patch.IsNull() {
				continue
			}
			if err := postrender.ValidateJSON6902(p.Patch.ValueString()); err != nil {
				invalidValue(diags, k.AtName("patches_json6902").AtListIndex(j).AtName("patch"), "patch", err, remedy)
			}
		}
	}
}

func (d *templateDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m templateModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if m.Namespace.IsNull() {
		m.Namespace = types.StringValue("default")
	}
	targetNamespace := m.TargetNamespace.ValueString()
	if m.TargetNamespace.IsNull() {
		m.TargetNamespace = m.Namespace
	}
	m.ReleaseName = types.StringValue(reconcile.ReleaseName(m.ReleaseName.ValueString(), targetNamespace, m.Name.ValueString()))
	// As the ID of a helmrelease_release of the same name and namespace
	// (its storage namespace defaults to the namespace).
	m.ID = types.StringValue(releaseID(m.Cluster.ValueString(), m.Namespace.ValueString(), m.ReleaseName.ValueString()))

	if d.data == nil {
		resp.Diagnostics.AddError("Provider not configured", "The helmrelease provider was not configured before this data source was read.")
		return
	}
	c, err := d.data.cluster(m.Cluster)
	if err != nil {
		clusterNotConfigured(&resp.Diagnostics, "helmrelease_template "+m.ID.ValueString(), err)
		return
	}
	red := newRedactor(d.data, c)
	if m.Chart != nil {
		red.add(m.Chart.Password.ValueString())
		red.addURLPassword(m.Chart.Repository.ValueString())
	}
	defer func() { resp.Diagnostics = red.diagnostics(resp.Diagnostics) }()
	in := decodeValues(m.Namespace.ValueString(), m.Values, []sensitiveInput{{path.Root("sensitive_values"), m.SensitiveValues}}, m.ValuesFrom, &resp.Diagnostics)
	composed := composeValues(ctx, c, in, red, &resp.Diagnostics)
	ctx = red.context(ctx)
	if resp.Diagnostics.HasError() {
		return
	}

	src, diags := m.Chart.source(ctx, d.data)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if src.Verify != nil && !m.Chart.Verify.SecretRef.IsNull() && !verificationKeys(ctx, c, m.Namespace.ValueString(), m.Chart.Verify, src.Verify, &resp.Diagnostics) {
		return
	}
	resolved, err := d.data.charts.Resolve(ctx, src)
	if err != nil {
		chartError(&resp.Diagnostics, path.Root("chart"), err)
		return
	}
	staleIndexWarning(&resp.Diagnostics, path.Root("chart").AtName("repository"), resolved.StaleIndex)
	cacheRepairWarning(&resp.Diagnostics, path.Root("chart"), resolved.CacheRepaired)
	chrt := resolved.Chart

	md, diags := m.CommonMetadata.metadata(ctx)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	chain := postrender.Build(ctx, renderers(m.PostRenderers), md, postrender.Origin{Name: m.Name.ValueString(), Namespace: m.Namespace.ValueString()})

	caps, scope := clusterView(c, &resp.Diagnostics)
	render := func(ctx context.Context, c *helm.Chart, values map[string]any, _ bool) (string, string, error) {
		rendered, err := helm.Render(ctx, helm.RenderOptions{
			ReleaseName:  m.ReleaseName.ValueString(),
			Namespace:    m.TargetNamespace.ValueString(),
			Chart:        c,
			Values:       values,
			PostRenderer: chain,
			Capabilities: caps,
			IncludeCRDs:  true,
		})
		if err != nil {
			return "", "", err
		}
		return rendered.Manifest, rendered.Notes, nil
	}
	// No key to hash Secret values with (a data source keeps no private
	// state): they show as "(sensitive value)".
	rendered, err := show.Release(ctx, render, chrt, composed, m.TargetNamespace.ValueString(), scope, show.Options{Sensitive: values.StringsAt(composed, values.SensitivePaths(composed, red.values))})
	if err != nil {
		renderError(&resp.Diagnostics, err, "Chart rendering failed", "Fix the values or the chart so that it renders, e.g. with `helm template` locally.")
		return
	}
	resources, diags := types.MapValueFrom(ctx, types.StringType, rendered.Shown)
	resp.Diagnostics.Append(diags...)
	m.Resources = resources
	unreproducible, diags := types.ListValueFrom(ctx, types.StringType, append([]string{}, rendered.Unreproducible...))
	resp.Diagnostics.Append(diags...)
	m.NonReproducible = unreproducible
	m.Notes = types.StringValue(rendered.Notes)
	m.ChartVersion = types.StringValue(resolved.Version)
	m.AppVersion = types.StringValue(resolved.AppVersion)
	logDebug(ctx, "rendered chart", map[string]any{"chart": chrt.Name(), "version": chrt.Metadata.Version, "objects": len(rendered.Shown)})
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// clusterView returns the capabilities and kind scopes of cluster c, or nil
// when it is not configured. An unreachable cluster is a warning: the chart
// is then rendered with Helm's default capabilities.
func clusterView(c *cluster, diags *diag.Diagnostics) (*helm.Capabilities, manifest.Scope) {
	dc, err := c.clients.Discovery()
	if err == nil {
		var caps *helm.Capabilities
		if caps, err = helm.DiscoverCapabilities(dc); err == nil {
			mapper, _ := c.clients.RESTMapper()
			return caps, mapperScope(mapper)
		}
	}
	if errors.Is(err, kube.ErrNotConfigured) || errors.Is(err, errConfigUnknown) {
		return nil, nil
	}
	diags.AddWarning("Rendered without the cluster's capabilities",
		fmt.Sprintf("The Kubernetes cluster (%s) could not be asked for its version and APIs (%s), so the chart was rendered with Helm's default capabilities.\n\nCheck the provider's settings of the cluster if templates depend on .Capabilities.", c.describe(), err))
	return nil, nil
}
