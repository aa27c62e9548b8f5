package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// decision is what a plan does with a release whose inputs are known,
// decided in one function (releasePlan.decide) as helm-controller decides
// a release's state.
type decision struct {
	kind decisionKind
	// why the release needs a Helm action (decideAction), or why it
	// stalled (decideStalled).
	why []string
	// atWork is what the engine runs on the release now ("" for
	// nothing).
	atWork string
}

type decisionKind int

const (
	// decideAction: an install, upgrade or reinstall.
	decideAction decisionKind = iota
	// decideInSync: no Helm action; drifted objects are put back.
	decideInSync
	// decideAtWork: the engine is at work on the release on its own:
	// nothing for Terraform to do until it ends.
	decideAtWork
	// decideStalled: retries exhausted, and nothing lifts the stall.
	decideStalled
)

// decide says what the release needs, from its inputs and its refreshed
// status: a create installs; an update acts when its inputs changed since
// the last attempt (or a token asks it to), or when the release is not
// ready; otherwise it is in sync, at work, or stalled.
func (p *releasePlan) decide() decision {
	st := p.st
	changes := releaseChanges(st, p.resolved, p.sameValues, p.spec, reconcile.Digests{Key: p.key})
	if p.state != nil && !p.continuing {
		// The objects' origin labels change hands, in a new revision.
		changes = append(changes, p.engine.handOverChange())
	}
	ready := st.Condition(reconcile.ConditionReady)
	stalled := st.Condition(reconcile.ConditionStalled)
	atWork := p.engine.atWork(st, p.continuing)
	switch {
	case p.state == nil:
	case len(changes) == 0 && atWork != "" && (ready == nil || ready.Reason != reasonChangedOutside):
		return decision{kind: decideAtWork, atWork: atWork}
	case len(changes) == 0 && stalled != nil && stalled.Status:
		return decision{kind: decideStalled, why: []string{stalled.Message}}
	case len(changes) == 0 && ready != nil && ready.Status:
		return decision{kind: decideInSync}
	case len(changes) == 0 && ready != nil:
		changes = []string{"the release is not ready: " + ready.Message}
	case len(changes) == 0:
		changes = []string{"the release was never applied"}
	}
	return decision{kind: decideAction, why: changes, atWork: atWork}
}

// act plans what d decided.
func (p *releasePlan) act(ctx context.Context, d decision) {
	ctx = p.red.context(ctx)
	id := p.m.ID.ValueString()
	switch d.kind {
	case decideAtWork:
		p.driftCorrection(ctx)
		p.diags.AddWarning("Release being reconciled by Flux",
			fmt.Sprintf("helmrelease_release %s: helm-controller is at work on the release now (%s). Nothing is planned for it: plan again when it is done to see its result.", id, d.atWork))
	case decideStalled:
		s := p.state
		p.out.sourceRevision = s.ChartSourceRevision
		p.out.resources, p.out.status = s.Resources, s.Status
		p.out.notes, p.out.description = s.Notes, s.Description
		p.diags.AddWarning("Release stalled: retries exhausted",
			fmt.Sprintf("helmrelease_release %s is not applied again: %s.\n\n%s", id, d.why[0], stallRemedies(p.spec, p.st)))
	case decideInSync:
		p.driftCorrection(ctx)
		switch {
		case resetRequested(p.spec, p.st):
			// The apply records the reset as handled, and clears the
			// failure counters.
			p.out.status = types.ObjectUnknown(statusAttrTypes())
		case p.out.status.IsUnknown():
			// Another attribute changed (an import's first plan, a
			// setting of no Helm action): the status the apply records,
			// when the engine can tell it.
			p.out.status = p.inSyncStatus(ctx)
		}
	case decideAction:
		p.out.status = types.ObjectUnknown(statusAttrTypes())
		p.out.action = p.action(ctx, d)
		if ready := p.st.Condition(reconcile.ConditionReady); ready != nil && ready.Reason == reasonLocked {
			// A pending release cannot be rendered until it is unlocked.
			p.out.unknownObjects()
			return
		}
		p.render(ctx)
	}
}

// inSyncStatus is the status the apply of a release in sync records,
// unknown when the engine cannot tell it at plan.
func (p *releasePlan) inSyncStatus(ctx context.Context) types.Object {
	unknown := types.ObjectUnknown(statusAttrTypes())
	if len(p.key) == 0 || p.st.HasPlainDigests() || p.resolved == nil {
		return unknown
	}
	if verify, ok := p.m.Chart.Attributes()["verify"]; ok && !verify.IsNull() && p.resolved.Chart == nil {
		// The plan read the repository's index alone; the apply verifies
		// the chart it loads.
		return unknown
	}
	digests := reconcile.Digests{Key: p.key}
	config, err := digests.Config(p.values)
	if err != nil {
		return unknown
	}
	want := reconcile.Desired{Spec: p.spec, Digests: digests, ChartName: p.resolved.Name(), ChartVersion: p.resolved.Version,
		ChartDigest: p.resolved.TrackedDigest, ConfigDigest: config, PostRenderersDigest: digests.PostRenderers(p.spec), OptionsDigest: reconcile.OptionsDigest(p.spec)}
	// The refresh compared the cluster under the state's drift detection
	// settings.
	refreshed := p.state != nil && p.state.DriftDetection.Equal(p.m.DriftDetection)
	st := p.engine.inSyncStatus(ctx, &p.m, p.red, p.st, want, refreshed)
	if st == nil {
		return unknown
	}
	markSourceVerified(st, p.resolved.Verified, "")
	out, d := statusObject(ctx, st)
	p.diags.Append(d...)
	return out
}

// action is the planned_action of d: install for a create; for an update,
// install, upgrade or reinstall with why, in the diff rather than as a
// warning (a module of many releases would print one per release for an
// ordinary change).
func (p *releasePlan) action(ctx context.Context, d decision) types.String {
	if p.state == nil {
		return types.StringValue("install")
	}
	action := "upgrade"
	if cur := p.st.Latest(); cur == nil || cur.Status == string(helm.StatusUninstalled) {
		action = "install"
	}
	why := strings.Join(d.why, "; ")
	if name := p.resolved.Name(); action == "upgrade" && name != "" && reconcile.Reinstalls(p.st, p.spec, name) {
		action = "reinstall"
		why += "; upgrade.chart_name_change_strategy " + chartNameReinstall + " uninstalls the release (deleting its objects, under uninstall's settings) and installs the new chart afresh, a new history from revision 1 (" + chartNameInPlaceUpdate + " upgrades it in place)"
	}
	if d.atWork != "" {
		why += "; helm-controller is at work on the release now (" + d.atWork + "): the apply writes the HelmRelease, then waits for the controller to finish and reconcile it"
	}
	logInfo(ctx, "release action planned", map[string]any{"release": p.m.ID.ValueString(), "because": why})
	return types.StringValue(action + ": " + why)
}

// driftCorrection plans the objects Read found drifted or missing back to
// their desired YAML; nothing else changes.
func (p *releasePlan) driftCorrection(ctx context.Context) {
	state, diags := p.state, p.diags
	if state.ChartDigest.ValueString() == "" {
		// Adopted (import, moved): Helm's storage does not record the
		// archive the release was installed from, so its digest stays
		// unknown, shown empty, until an upgrade installs one.
		p.out.chartDigest = state.ChartDigest
	}
	// No Helm action deploys another source revision: a new commit that
	// leaves the chart's revision alone changes nothing. A chart_ref's
	// revision is its object's, which helm-controller follows by itself.
	if p.m.ChartRef.IsNull() {
		p.out.sourceRevision = state.ChartSourceRevision
	}
	p.out.resources = state.Resources
	p.out.notes, p.out.description = state.Notes, state.Description
	if !p.out.status.IsUnknown() {
		p.out.status = state.Status
	}
	raw, d := p.req.Private.GetKey(ctx, privateDrift)
	diags.Append(d...)
	if len(raw) == 0 {
		return
	}
	var desired map[string]string
	if err := json.Unmarshal(raw, &desired); err != nil || len(desired) == 0 {
		return
	}
	elems := make(map[string]attr.Value, len(state.Resources.Elements())+len(desired))
	for k, v := range state.Resources.Elements() {
		elems[k] = v
	}
	for k, v := range desired {
		elems[k] = types.StringValue(v)
	}
	resources, d := types.MapValue(types.StringType, elems)
	diags.Append(d...)
	// Correcting drift of a ready release writes no revision; of the
	// status, only the Drifted condition changes: the cluster is compared
	// again after the correction, and found in sync.
	p.out.resources = resources
	if !p.out.status.IsUnknown() {
		st, d := statusOf(ctx, state.Status)
		diags.Append(d...)
		reconcile.MarkDrift(st, p.engine.spec(ctx, &p.m, diags), reconcile.ReleaseState{Status: reconcile.StateInSync})
		p.out.status, d = statusObject(ctx, st)
		diags.Append(d...)
	}
	if p.m.showsChanges() {
		p.out.changes = driftChanges(ctx, p.req.Private, diags)
	}
}

// resetRequested reports whether spec carries a reset token (reset_at, or
// the helmrelease_reset action's) not handled yet.
func resetRequested(spec *reconcile.Spec, st *reconcile.Status) bool {
	return spec.ResetAt != "" && spec.ResetAt != st.LastHandledResetAt
}

// releaseChanges says why the release needs an install or upgrade: inputs
// that differ from the last attempt, and tokens not yet handled.
func releaseChanges(st *reconcile.Status, chart *chartsource.Resolved, sameValues bool, spec *reconcile.Spec, digests reconcile.Digests) []string {
	out := chartChanges(st, chart)
	if !sameValues {
		out = append(out, "values changed")
	}
	stalled := st.Condition(reconcile.ConditionStalled)
	if stalled != nil && stalled.Status && resetRequested(spec, st) {
		// Elsewhere a reset only clears the failure counters: as in
		// helm-controller, it makes no Helm action of its own.
		out = append(out, "reset_at changed")
	}
	if s := spec.ForceAt; s != "" && s != st.LastHandledForceAt {
		out = append(out, "force_at changed")
	}
	if stalled != nil && stalled.Status {
		// Only what resets the failure counters, or settings under which
		// the engine retries anyway, count while stalled.
		if why := stallLifted(spec, st); why != "" {
			out = append(out, why)
		}
		return out
	}
	switch observed := st.ObservedPostRenderersDigest; {
	case digests.PostRenderers(spec) == observed:
	case observed != "" && digests.PostRenderersBeforePrograms(spec) == observed:
		out = append(out, "post_renderers' digest now covers the content of each exec command's program (an earlier version of this provider recorded it without): one upgrade records it")
	default:
		out = append(out, "post_renderers changed (their settings, or an exec command's program)")
	}
	if reconcile.OptionsDigest(spec) != st.ObservedOptionsDigest {
		out = append(out, "common_metadata changed")
	}
	return out
}

// chartChanges are the reasons of releaseChanges that the chart resolved
// gives: its revision, its name, its digest.
func chartChanges(st *reconcile.Status, chart *chartsource.Resolved) []string {
	out := chart.RevisionChanges(st.LastAttemptedRevision)
	was, renamed := reconcile.ChartRenamed(st, chart.Name())
	switch d := chart.TrackedDigest; {
	case renamed:
		// Another chart: its digest is another one too.
		out = append(out, fmt.Sprintf("chart name changed from %s to %s", was, chart.Name()))
	case d != "" && st.LastAttemptedRevisionDigest != "" && d != st.LastAttemptedRevisionDigest:
		out = append(out, fmt.Sprintf("chart %s published again with another digest (%s, was %s)", chart.Version, d, st.LastAttemptedRevisionDigest))
	}
	return out
}

func stateStatus(state *releaseModel) types.Object {
	if state == nil {
		return types.ObjectNull(statusAttrTypes())
	}
	return state.Status
}
