package provider

import (
	"context"
	"encoding/json"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
)

// privateChartPin: the chart Read resolved for the release's chart as the
// state configures it, or the apply deployed (chartPinState), so that a
// plan is a contract. Terraform plans a resource again as it applies it,
// from the configuration and the refreshed state with its private state,
// never from the plan: a range, a tag, a branch, a bucket or a chart
// reference resolved anew could name another chart by then (a plan saved
// in CI and applied on another machine a day later, or a prompt answered
// late). Both plans take the chart the refresh pinned, as long as the
// configuration's chart is the state's; the apply deploys that chart, or
// fails with this provider's own diagnostic when the source can no longer
// give it. A plan with a refresh pins anew, so that it sees what was
// published since; one without (-refresh=false) plans against the last
// refresh or apply, as Terraform does with everything else it refreshes.
//
// A plan that no pin covers (a create, a replacement, a chart edited in
// the configuration) cannot hand its chart to the apply: unless the
// configuration names one version, it plans the chart as known after
// apply (releasePlan.unpinned).
const privateChartPin = "chart_pin"

// privateDeployedChart: the chart the refresh of a state that no apply
// wrote yet (an import, a move) found deployed, as its record in Helm's
// storage says (a chartsource.Pin: version, and the digest or revision a
// release of this provider records), JSON-encoded. No refresh pins such a
// state's chart as it pins an applied one where it cannot resolve the
// source alone (credentials are configuration, not state): its plans take
// the chart deployed where the configuration's source can give it
// (chartsource.Source.Deployed), so that the plan that takes a release
// over and the apply's plan resolve one chart. The first apply drops it.
const privateDeployedChart = "deployed_chart"

// keepDeployedChart records the chart of latest, the release m's refresh
// found deployed.
func keepDeployedChart(ctx context.Context, private privateSetter, latest *helm.Release, diags *diag.Diagnostics) {
	if latest == nil || latest.Chart == nil || latest.Chart.Metadata == nil || latest.Chart.Metadata.Version == "" {
		return
	}
	recorded, _ := chartsource.RecordedSource(latest.Chart) // another tool's release records nothing more
	raw, err := json.Marshal(recorded.Deployed(latest.Chart.Metadata.Version))
	if err != nil {
		return
	}
	diags.Append(private.SetKey(ctx, privateDeployedChart, raw)...)
}

// deployedChartOf is the chart privateDeployedChart holds, or nil.
func deployedChartOf(ctx context.Context, private privateGetter, diags *diag.Diagnostics) *chartsource.Pin {
	if private == nil {
		return nil
	}
	raw, d := private.GetKey(ctx, privateDeployedChart)
	diags.Append(d...)
	var p chartsource.Pin
	if len(raw) == 0 || json.Unmarshal(raw, &p) != nil || p.Version == "" {
		return nil
	}
	return &p
}

// chartPinState is what privateChartPin holds.
type chartPinState struct {
	// Source is the fingerprint of the chart's source the pin resolves
	// (chartsource.Source.Fingerprint): a plan whose configuration
	// names another chart resolves that one anew.
	Source string `json:"source"`
	// Pin is what resolved. A refresh that cannot resolve the chart (a
	// repository down, credentials that are write-only) keeps no pin.
	Pin *chartsource.Pin `json:"pin,omitempty"`
}

// pinChart resolves the chart of the refreshed release m, as its state
// configures it, and keeps it in the private state for the plans that
// follow. A chart that does not resolve is not pinned: the plan resolves
// it and reports why. Of the resolve, only the cache entries it repaired
// show here (the plan, reading the repaired cache, finds none).
func (r *releaseResource) pinChart(ctx context.Context, m *releaseModel, private privateSetter, diags *diag.Diagnostics) {
	if m.Status.IsNull() || m.Suspend.ValueBool() {
		return
	}
	var scratch diag.Diagnostics
	resolved, src := r.resolveChartSource(ctx, m, writeOnlyOf(ctx, nil, &scratch), true, chartPin{}, &scratch)
	for _, w := range scratch.Warnings() {
		if w.Summary() == cacheRepairSummary {
			diags.Append(w)
		}
	}
	if resolved == nil || scratch.HasError() {
		// The pin of the last refresh or apply would be stale.
		dropChartPin(ctx, private, diags)
		return
	}
	setChartPin(ctx, private, src, resolved, diags)
}

// setChartPin keeps resolved, what src resolved to, in the private state.
func setChartPin(ctx context.Context, private privateSetter, src chartsource.Source, resolved *chartsource.Resolved, diags *diag.Diagnostics) {
	raw, err := json.Marshal(chartPinState{Source: src.Fingerprint(), Pin: chartsource.PinOf(resolved)})
	if err != nil {
		return
	}
	diags.Append(private.SetKey(ctx, privateChartPin, raw)...)
}

// keepAppliedChart keeps the chart an apply deployed, for a plan without a
// refresh (-refresh=false) to plan against, as it plans against the
// objects of the last apply: a local chart's files are the configuration's
// own, which such a plan reads anew (only the dependencies a
// dependency_update resolved are kept); the refresh pins them.
func keepAppliedChart(ctx context.Context, private privateSetter, src chartsource.Source, resolved *chartsource.Resolved, diags *diag.Diagnostics) {
	if resolved.ContentDigest == "" {
		setChartPin(ctx, private, src, resolved, diags)
		return
	}
	if !src.DependencyUpdate {
		dropChartPin(ctx, private, diags)
		return
	}
	pin := chartsource.PinOf(resolved)
	pin.Content = ""
	raw, err := json.Marshal(chartPinState{Source: src.Fingerprint(), Pin: pin})
	if err != nil {
		return
	}
	diags.Append(private.SetKey(ctx, privateChartPin, raw)...)
}

// chartPinOf is the pin of the refreshed private state: a zero one when
// there is none (a create, a plan without refresh after an apply).
func chartPinOf(ctx context.Context, private privateGetter, diags *diag.Diagnostics) chartPin {
	if private == nil {
		return chartPin{}
	}
	raw, d := private.GetKey(ctx, privateChartPin)
	diags.Append(d...)
	var st chartPinState
	if len(raw) == 0 || json.Unmarshal(raw, &st) != nil || st.Pin == nil || st.Source == "" {
		return chartPin{Deployed: deployedChartOf(ctx, private, diags)}
	}
	return chartPin{Resolution: st.Pin, Fingerprint: st.Source}
}

// plannedChartPin is the chart the plan m resolved, for its apply to
// deploy: none when the plan did not know it.
func plannedChartPin(m *releaseModel) chartPin {
	pin := chartPin{Revision: m.ChartSourceRevision}
	if m.ChartVersion.IsUnknown() || m.ChartVersion.IsNull() {
		return pin
	}
	p := &chartsource.Pin{Version: m.ChartVersion.ValueString()}
	if !m.ChartDigest.IsUnknown() {
		p.Digest = m.ChartDigest.ValueString()
	}
	if !m.ChartSourceRevision.IsUnknown() {
		p.SourceRevision = m.ChartSourceRevision.ValueString()
	}
	pin.Resolution = p
	return pin
}

// dropChartPin removes the pin from the private state.
func dropChartPin(ctx context.Context, private privateSetter, diags *diag.Diagnostics) {
	diags.Append(private.SetKey(ctx, privateChartPin, nil)...)
}
