package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/tfvalue"
)

// chartRefKinds are the kinds chart_ref names (HelmRelease
// spec.chartRef.kind).
var chartRefKinds = enum{chartsource.KindOCIRepository, chartsource.KindHelmChart}

// chartRefAttribute is chart_ref (HelmRelease spec.chartRef).
func chartRefAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: "A Flux source object managed elsewhere (a Flux Kustomization, another team) whose artifact is the chart (HelmRelease `spec.chartRef`), in place of `chart`: exactly one of the two is set. " +
			"The plan reads the object and the Secrets it names, refuses one that is not Ready (saying why), and fetches the chart source-controller fetched from the same origin with the same credentials: " +
			"an OCIRepository's manifest by the digest of its artifact, a HelmChart's chart from its HelmRepository, GitRepository or Bucket at the version and source revision of its artifact (and, from a Helm repository without values files, with the artifact's digest). " +
			"The chart version is helm-controller's: an OCIRepository's adds the manifest digest's first 12 hex digits (`1.2.0+5e1f0c9a2b7d`), a HelmChart's is its artifact revision. `chart_source_revision` shows the artifact or source revision. " +
			"With `engine = \"flux\"` it is written as the HelmRelease's `spec.chartRef`, and the provider writes no source. The provider's credentials need get on the object's kind and its Secrets. Default: none.",
		Optional: true,
		Attributes: map[string]schema.Attribute{
			"kind": schema.StringAttribute{
				MarkdownDescription: "Kind of the object (`kind`): " + chartRefKinds.markdown() + ".",
				Required:            true,
				Validators:          []validator.String{chartRefKinds.validator()},
			},
			"name": schema.StringAttribute{
				MarkdownDescription: "Name of the object (`name`).",
				Required:            true,
				Validators:          []validator.String{dnsSubdomain()},
			},
			"namespace": schema.StringAttribute{
				MarkdownDescription: "Namespace of the object (`namespace`). Default: the release's `namespace`.",
				Optional:            true,
				Validators:          []validator.String{dnsLabel(63)},
			},
		},
	}
}

type chartRefModel struct {
	Kind      types.String `tfsdk:"kind"`
	Name      types.String `tfsdk:"name"`
	Namespace types.String `tfsdk:"namespace"`
}

// chartRef is the object m's chart_ref names, with its namespace
// defaulted; nil when chart_ref is null or not known.
func (m *releaseModel) chartRef(ctx context.Context, diags *diag.Diagnostics) *chartsource.ChartRef {
	if !tfvalue.FullyKnown(m.ChartRef) || m.ChartRef.IsNull() {
		return nil
	}
	c := objectAs[chartRefModel](ctx, m.ChartRef, path.Root("chart_ref"), diags)
	if c == nil {
		return nil
	}
	ref := &chartsource.ChartRef{Kind: c.Kind.ValueString(), Name: c.Name.ValueString(), Namespace: c.Namespace.ValueString()}
	if ref.Namespace == "" {
		ref.Namespace = m.Namespace.ValueString()
		if ref.Namespace == "" {
			ref.Namespace = "default"
		}
	}
	return ref
}

// chartRefSource is the chart source of the object ref names, read from
// the cluster of m; false with a diagnostic on chart_ref when it cannot
// give one.
func (r *releaseResource) chartRefSource(ctx context.Context, m *releaseModel, ref *chartsource.ChartRef, diags *diag.Diagnostics) (chartsource.Source, bool) {
	c := r.clusterOf(m, diags)
	if c == nil {
		return chartsource.Source{}, false
	}
	fc, err := c.fluxClient()
	if err != nil {
		clusterUnavailable(diags, path.Root("chart_ref"), err)
		return chartsource.Source{}, false
	}
	src, err := fc.ChartRefSource(ctx, *ref)
	if err != nil {
		chartRefError(diags, err)
		return chartsource.Source{}, false
	}
	return src, true
}

// chartRefError reports the failure to read the chart of chart_ref.
func chartRefError(diags *diag.Diagnostics, err error) {
	attrError(diags, path.Root("chart_ref"), "Chart reference not usable", err.Error()+".",
		"Check that chart_ref names an existing OCIRepository or HelmChart (and its namespace), that source-controller has made it Ready (flux get sources all), and that the provider's credentials may read it and the Secrets it names.")
}

// validateChartSource refuses a configuration with both or neither of
// chart and chart_ref.
func validateChartSource(m *releaseModel, diags *diag.Diagnostics) {
	if m.Chart.IsUnknown() || m.ChartRef.IsUnknown() {
		return
	}
	switch {
	case m.Chart.IsNull() && m.ChartRef.IsNull():
		attrError(diags, path.Root("chart"), "No chart", "A release needs a chart: chart names it and its source, or chart_ref names a Flux OCIRepository or HelmChart holding it.", "Set chart (name and repository, git or bucket) or chart_ref.")
	case !m.Chart.IsNull() && !m.ChartRef.IsNull():
		attrError(diags, path.Root("chart_ref"), "Both chart and chart_ref", "chart and chart_ref both name the release's chart, as HelmRelease spec.chart and spec.chartRef do: one of them must be set.", "Remove chart, or chart_ref.")
	}
}

// chartRefObject is chart_ref naming ref; namespace is left null when it
// is the release's.
func chartRefObject(ref *chartsource.ChartRef, releaseNamespace string, diags *diag.Diagnostics) types.Object {
	t := chartRefAttribute().GetType().(types.ObjectType)
	ns := types.StringValue(ref.Namespace)
	if ref.Namespace == "" || ref.Namespace == releaseNamespace {
		ns = types.StringNull()
	}
	o, d := types.ObjectValue(t.AttrTypes, map[string]attr.Value{"kind": types.StringValue(ref.Kind), "name": types.StringValue(ref.Name), "namespace": ns})
	diags.Append(d...)
	return o
}
