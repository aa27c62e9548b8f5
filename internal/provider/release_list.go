package provider

import (
	"context"
	"fmt"
	"iter"
	"regexp"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"sigs.k8s.io/yaml"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/manifest"
)

var (
	_ list.ListResource              = (*releaseList)(nil)
	_ list.ListResourceWithConfigure = (*releaseList)(nil)
)

// NewReleaseList returns the list resource helmrelease_release, which
// `terraform query` (Terraform ≥ 1.14) uses to find releases to import.
func NewReleaseList() list.ListResource { return &releaseList{} }

type releaseList struct {
	data *providerData
}

type releaseListModel struct {
	Cluster           types.String `tfsdk:"cluster"`
	Namespace         types.String `tfsdk:"namespace"`
	LabelSelector     types.String `tfsdk:"label_selector"`
	IncludeOtherTools types.Bool   `tfsdk:"include_other_tools"`
}

func (l *releaseList) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_release"
}

func (l *releaseList) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	resp.Schema = listschema.Schema{
		MarkdownDescription: "The Helm releases of one cluster, for `terraform query` (Terraform ≥ 1.14): each result has the identity `{ namespace, name }` (and `cluster` on a named cluster) an import block takes, and with `include_resource` the whole `helmrelease_release`, so that `terraform query -generate-config-out=…` writes blocks that adopt the releases as they are.",
		Attributes: map[string]listschema.Attribute{
			"cluster": listschema.StringAttribute{
				MarkdownDescription: clusterDescription("whose releases are listed", "Each result's identity and resource carry it."),
				Optional:            true,
				Validators:          []validator.String{clusterNameValidator()},
			},
			"namespace": listschema.StringAttribute{
				MarkdownDescription: "Namespace of the releases' Helm storage. Default: every namespace.",
				Optional:            true,
				Validators:          []validator.String{dnsLabel(63)},
			},
			"label_selector": listschema.StringAttribute{
				MarkdownDescription: "Kubernetes label selector on the releases' labels (`helm install --labels`, and Helm's own: `status`, `name`), e.g. `team=web,status=deployed`. Default: every release.",
				Optional:            true,
				Validators:          []validator.String{labelSelector()},
			},
			"include_other_tools": listschema.BoolAttribute{
				MarkdownDescription: "List the releases made by other tools (the Helm CLI, HashiCorp's helm provider, Flux), the ones to import, beside those of `helmrelease_release` resources. Default: `true`.",
				Optional:            true,
			},
		},
	}
}

func (l *releaseList) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	data, err := configureData(req.ProviderData)
	if err != nil {
		resp.Diagnostics.AddError("Provider not configured", err.Error())
		return
	}
	l.data = data
}

// List streams the latest revision of each release, sorted by namespace
// and name.
func (l *releaseList) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	var cfg releaseListModel
	diags := req.Config.Get(ctx, &cfg)
	if diags.HasError() {
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	if l.data == nil {
		diags.AddError("Provider not configured", "The helmrelease provider was not configured before listing releases.")
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	c, err := l.data.cluster(cfg.Cluster)
	if err != nil {
		clusterNotConfigured(&diags, "The helmrelease_release list", err)
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	restConfig, err := c.clients.RESTConfig()
	if err != nil {
		clusterUnavailable(&diags, path.Root("namespace"), err)
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	getter := kube.NewGetter(restConfig, cfg.Namespace.ValueString(), "")
	releases, err := helm.ListReleases(ctx, getter, cfg.Namespace.ValueString(), cfg.LabelSelector.ValueString())
	if err != nil {
		diags.AddError("Releases not listed", fmt.Sprintf("Listing the Helm releases of %s on %s: %s.\n\nCheck that the cluster is reachable and that the provider's credentials may list Secrets there.", describeNamespace(cfg.Namespace), c.describe(), err))
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	includeOthers := cfg.IncludeOtherTools.IsNull() || cfg.IncludeOtherTools.ValueBool()
	var scope manifest.Scope
	if mapper, err := c.clients.RESTMapper(); err == nil {
		scope = mapperScope(mapper)
	}
	stream.Results = l.results(ctx, req, cfg.Cluster, releases, includeOthers, scope)
}

func (l *releaseList) results(ctx context.Context, req list.ListRequest, cluster types.String, releases []helm.StoredRelease, includeOthers bool, scope manifest.Scope) iter.Seq[list.ListResult] {
	return func(push func(list.ListResult) bool) {
		var n int64
		for _, r := range releases {
			_, ours := singleOrigin(r.Release.Manifest, r.Release.Namespace)
			if !ours && !includeOthers {
				continue
			}
			if req.Limit > 0 && n >= req.Limit {
				return
			}
			n++
			result := req.NewListResult(ctx)
			rel := r.Release
			chart := "?"
			if rel.Chart != nil && rel.Chart.Metadata != nil {
				chart = rel.Chart.Metadata.Name + "-" + rel.Chart.Metadata.Version
			}
			result.DisplayName = fmt.Sprintf("%s (%s, %s)", releaseID(cluster.ValueString(), r.StorageNamespace, rel.Name), chart, rel.Info.Status)
			result.Diagnostics.Append(result.Identity.Set(ctx, releaseIdentity{Cluster: cluster, Namespace: types.StringValue(r.StorageNamespace), Name: types.StringValue(rel.Name)})...)
			if req.IncludeResource {
				m := nullReleaseModel()
				m.Cluster = cluster
				m.StorageNamespace = types.StringValue(r.StorageNamespace)
				result.Diagnostics.Append(adoptRelease(ctx, m, rel, scope, nil)...)
				if _, recorded := chartsource.RecordedSource(rel.Chart); !recorded && !result.Diagnostics.HasError() {
					result.Diagnostics.Append(askForRepository(ctx, m, rel)...)
				}
				if !result.Diagnostics.HasError() {
					result.Diagnostics.Append(result.Resource.Set(ctx, m)...)
				}
			}
			if !push(result) {
				return
			}
		}
	}
}

// askForRepository puts in chart.repository of m, a release another tool
// installed, what to fill in: the chart's source is recorded only by this
// provider, and `terraform query -generate-config-out` writes no comments.
// The plan refuses the text until it is replaced.
func askForRepository(ctx context.Context, m *releaseModel, rel *helm.Release) diag.Diagnostics {
	name, version := "?", "?"
	if rel.Chart != nil && rel.Chart.Metadata != nil {
		name, version = rel.Chart.Metadata.Name, rel.Chart.Metadata.Version
	}
	attrs := m.Chart.Attributes()
	attrs["repository"] = types.StringValue(fmt.Sprintf("FILL IN: the https:// or oci:// repository serving chart %s %s (or remove repository and set name to the chart's path)", name, version))
	chart, diags := types.ObjectValue(m.Chart.AttributeTypes(ctx), attrs)
	if !diags.HasError() {
		m.Chart = chart
	}
	return diags
}

// secretName is a values key that holds a secret by its name. Values of
// such keys, and everything under them, go to sensitive_values, which
// `terraform query -generate-config-out` never writes in clear; so do lists
// that mention one (an env list with a DB_PASSWORD entry).
var secretName = regexp.MustCompile(`(?i)(pass(word|wd|phrase)?|pwd|secret|token|credential|private|(api|access|secret|private|client|signing|encryption)[-_]?key|auth|cert(ificate)?|tls|ssh|salt|cookie|dsn|connection[-_]?string)`)

// adoptValues sets the values of m to those of a release taken over:
// those under a key that names a secret (or a list that mentions one) in
// sensitive_values, the others in values.
func adoptValues(m *releaseModel, rel *helm.Release) diag.Diagnostics {
	var diags diag.Diagnostics
	plain, sensitive := splitSensitive(rel.Config)
	if len(plain) > 0 {
		m.Values = types.DynamicValue(terraformValue(plain))
	}
	if len(sensitive) > 0 {
		b, err := yaml.Marshal(sensitive)
		if err != nil {
			diags.AddError("Release values not encodable", "The values of release "+rel.Name+" that look secret cannot be encoded.")
			return diags
		}
		m.SensitiveValues = types.StringValue(string(b))
	}
	return diags
}

// splitSensitive parts values into the values whose key path names no
// secret and those that do.
func splitSensitive(values map[string]any) (plain, sensitive map[string]any) {
	plain, sensitive = map[string]any{}, map[string]any{}
	for k, v := range values {
		if secretName.MatchString(k) {
			sensitive[k] = v
			continue
		}
		if l, ok := v.([]any); ok && mentionsSecret(l) {
			sensitive[k] = v
			continue
		}
		if sub, ok := v.(map[string]any); ok {
			p, s := splitSensitive(sub)
			if len(p) > 0 || len(s) == 0 {
				plain[k] = p
			}
			if len(s) > 0 {
				sensitive[k] = s
			}
			continue
		}
		plain[k] = v
	}
	return plain, sensitive
}

// mentionsSecret reports whether v holds a key or a string that names a
// secret.
func mentionsSecret(v any) bool {
	switch t := v.(type) {
	case string:
		return secretName.MatchString(t)
	case []any:
		return slices.ContainsFunc(t, mentionsSecret)
	case map[string]any:
		for k, e := range t {
			if secretName.MatchString(k) || mentionsSecret(e) {
				return true
			}
		}
	}
	return false
}

func describeNamespace(ns types.String) string {
	if ns.IsNull() || ns.ValueString() == "" {
		return "every namespace"
	}
	return "namespace " + ns.ValueString()
}
