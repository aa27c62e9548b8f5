package provider

import (
	"context"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/flux"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/postrender"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/tfvalue"
)

// fluxFound is a release Flux's helm-controller made for a HelmRelease
// that still exists: the controller runs it.
type fluxFound struct {
	hr     *helmv2.HelmRelease
	client *flux.Client
}

// fluxFoundOf is the HelmRelease whose helm-controller made latest, when
// the release's objects carry one HelmRelease's origin labels and it still
// exists on c.
func fluxFoundOf(ctx context.Context, c *cluster, latest *helm.Release) (fluxFound, bool) {
	owner, ok := singleOriginOf(latest.Manifest, latest.Namespace, postrender.FluxOriginGroup)
	if !ok {
		return fluxFound{}, false
	}
	fc, err := c.fluxClient()
	if err != nil || fc.CheckCRDs() != nil {
		return fluxFound{}, false
	}
	hr, err := fc.Get(ctx, owner[0], owner[1])
	if err != nil || hr == nil {
		return fluxFound{}, false
	}
	return fluxFound{hr: hr, client: fc}, true
}

// adopt imports the release as a resource with engine = "flux": its
// name, chart (from the HelmRelease and its source), values, interval and
// the controller's status.
func (f fluxFound) adopt(ctx context.Context, m *releaseModel, e *reconcile.Reconciler, latest *helm.Release, diags *diag.Diagnostics) {
	hr, fe := f.hr, f.client
	m.Namespace, m.Name = types.StringValue(hr.Namespace), types.StringValue(hr.Name)
	diags.Append(adoptRelease(ctx, m, latest, releaseScope(e), e.Key)...)
	if diags.HasError() {
		return
	}
	chart, err := fe.ChartOf(ctx, hr)
	if err != nil {
		diags.AddError("HelmRelease not importable", fmt.Sprintf("HelmRelease %s/%s: %s.\n\nImport a HelmRelease whose chart source (HelmRepository, OCIRepository, GitRepository or Bucket) exists.", hr.Namespace, hr.Name, err))
		return
	}
	if chart.ChartRef != nil {
		m.Chart = types.ObjectNull(releaseChartAttribute().GetType().(types.ObjectType).AttrTypes)
		m.ChartRef = chartRefObject(chart.ChartRef, hr.Namespace, diags)
	} else {
		f.adoptChart(ctx, m, chart, diags)
	}
	m.Engine = types.StringValue(engineFlux)
	settings := fluxModel{Interval: types.StringNull(), UninstallOnDestroy: types.BoolNull(), Wait: types.BoolNull(), DependsOn: types.ListNull(dependencyType)}
	if iv := hr.Spec.Interval.Duration; iv != flux.DefaultInterval && iv > 0 {
		settings.Interval = types.StringValue(iv.String())
	}
	if len(hr.Spec.DependsOn) > 0 {
		deps := make([]dependencyModel, 0, len(hr.Spec.DependsOn))
		for _, dep := range hr.Spec.DependsOn {
			deps = append(deps, dependencyModel{Name: types.StringValue(dep.Name), Namespace: stringOrNull(dep.Namespace), ReadyExpr: stringOrNull(dep.ReadyExpr)})
		}
		l, d := types.ListValueFrom(ctx, dependencyType, deps)
		diags.Append(d...)
		settings.DependsOn = l
	}
	if !settings.Interval.IsNull() || !settings.DependsOn.IsNull() {
		f, d := tfvalue.ObjectFrom(ctx, m.Flux.AttributeTypes(ctx), settings)
		diags.Append(d...)
		m.Flux = f
	}
	adopted, d := statusOf(ctx, m.Status)
	diags.Append(d...)
	status, d := statusObject(ctx, flux.StatusOf(hr, adopted, fe.AsPlanned(ctx, hr)))
	diags.Append(d...)
	m.Status = status
}

// adoptChart writes chart of m from the chart the HelmRelease names.
func (fluxFound) adoptChart(ctx context.Context, m *releaseModel, chart chartsource.Source, diags *diag.Diagnostics) {
	attrs := m.Chart.Attributes()
	attrs["name"], attrs["repository"], attrs["version"] = types.StringValue(chart.Name), stringOrNull(chart.Repository), stringOrNull(chart.Version)
	if chart.Git != nil {
		attrs["git"] = recordedGitObject(&chartsource.RecordedGit{URL: chart.Git.URL, Ref: chart.Git.Ref, KnownHosts: chart.Git.KnownHosts}, diags)
	}
	if chart.Bucket != nil {
		attrs["bucket"] = recordedBucketObject(chart.Bucket, diags)
	}
	attrs["reconcile_strategy"] = stringOrNull(string(chart.ReconcileStrategy))
	if len(chart.ValuesFiles) > 0 {
		files, d := types.ListValueFrom(ctx, types.StringType, chart.ValuesFiles)
		diags.Append(d...)
		attrs["values_files"] = files
	}
	if chart.Auth.PlainHTTP {
		attrs["plain_http"] = types.BoolValue(true)
	}
	attrs["verify"] = verifyObject(ctx, chart.VerifyConfig, diags)
	c, d := types.ObjectValue(releaseChartAttribute().GetType().(types.ObjectType).AttrTypes, attrs)
	diags.Append(d...)
	m.Chart = c
}
