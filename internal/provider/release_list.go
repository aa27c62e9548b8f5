package provider

import (
	"context"
	"fmt"
	"iter"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

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

func describeNamespace(ns types.String) string {
	if ns.IsNull() || ns.ValueString() == "" {
		return "every namespace"
	}
	return "namespace " + ns.ValueString()
}
