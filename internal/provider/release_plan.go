package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// ModifyPlan resolves the chart and the values, decides whether the release
// needs a Helm action, and if so renders it (a dry-run install or upgrade
// the API server validates) into the planned resources; otherwise the
// planned resources are the release's as refreshed, with drifted objects
// put back. What is not known yet stays unknown.
//
// Each step below fills p.out, the planned attributes, or ends the plan;
// p.write writes them into the plan, once.
func (r *releaseResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if r.data == nil {
		return
	}
	if req.Plan.Raw.IsNull() {
		r.planDestroy(ctx, req, resp)
		return
	}
	p := r.releasePlanOf(ctx, req, resp)
	if p == nil {
		return
	}
	defer p.write(ctx)
	switch {
	case p.suspended():
	case p.deferred():
	case !p.supported(ctx):
	case !p.inputs(ctx):
	default:
		p.act(ctx, p.decide(ctx))
	}
}

// planDestroy refuses a destroy that cannot reach the release.
func (r *releaseResource) planDestroy(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	var state releaseModel
	resp.Diagnostics.Append(releaseModelOf(ctx, req.State.Raw, &state)...)
	if !resp.Diagnostics.HasError() {
		r.clusterOf(&state, &resp.Diagnostics)
	}
}

// releasePlan is one plan of a release being created or updated: what it
// is given, what the steps learn, and the attributes they plan.
type releasePlan struct {
	r     *releaseResource
	req   resource.ModifyPlanRequest
	resp  *resource.ModifyPlanResponse
	diags *diag.Diagnostics

	// m is the plan Terraform proposed, its identity filled; config the
	// configuration.
	m, config releaseModel
	// state is the prior state; nil for a create, and for a replacement
	// (uninstalled, then installed anew).
	state *releaseModel
	// engine runs the release; continuing says whether it ran it before
	// the plan too.
	engine     engine
	continuing bool
	cluster    *cluster
	red        *redactor

	// Set by inputs.
	wo       writeOnly
	resolved *chartsource.Resolved
	spec     *reconcile.Spec
	values   map[string]any
	// key is the state's key of Secret values' hashes; nil for a create.
	key []byte
	// st is the refreshed status (empty for a create).
	st *reconcile.Status
	// sameValues says whether the values are those of the last attempt.
	sameValues bool

	out planned
}

// planned are the attributes a plan computes, written into the plan in one
// place (releasePlan.write). They start as Terraform proposed them.
type planned struct {
	action                                types.String
	resources, hooks, crds, changes       types.Map
	status                                types.Object
	notes, description                    types.String
	chartVersion, appVersion, chartDigest types.String
}

func plannedOf(m *releaseModel) planned {
	return planned{
		action: m.PlannedAction, resources: m.Resources, hooks: m.PlannedHooks, crds: m.PlannedCRDs, changes: m.PlannedChanges,
		status: m.Status, notes: m.Notes, description: m.Description,
		chartVersion: m.ChartVersion, appVersion: m.AppVersion, chartDigest: m.ChartDigest,
	}
}

func (o planned) into(m *releaseModel) {
	m.PlannedAction, m.Resources, m.PlannedHooks, m.PlannedCRDs, m.PlannedChanges = o.action, o.resources, o.hooks, o.crds, o.changes
	m.Status, m.Notes, m.Description = o.status, o.notes, o.description
	m.ChartVersion, m.AppVersion, m.ChartDigest = o.chartVersion, o.appVersion, o.chartDigest
}

// unknownObjects plans the objects, hooks, CRDs and changes as known after
// apply.
func (o *planned) unknownObjects() {
	o.resources = types.MapUnknown(types.StringType)
	o.hooks, o.crds = types.MapUnknown(types.StringType), types.MapUnknown(types.StringType)
	o.changes = types.MapUnknown(types.StringType)
}

// releasePlanOf decodes the plan, the configuration and the prior state,
// fills the identity, and decides whether the release is replaced (a
// changed identity attribute or cluster: from a cluster the provider
// still reaches). The planned action starts as a create's install, or as
// the state has it. Nil when the plan must stop.
func (r *releaseResource) releasePlanOf(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) *releasePlan {
	p := &releasePlan{r: r, req: req, resp: resp, diags: &resp.Diagnostics}
	p.diags.Append(releaseModelOf(ctx, req.Plan.Raw, &p.m)...)
	p.diags.Append(releaseModelOf(ctx, req.Config.Raw, &p.config)...)
	if !req.State.Raw.IsNull() {
		p.state = &releaseModel{}
		p.diags.Append(releaseModelOf(ctx, req.State.Raw, p.state)...)
	}
	if p.diags.HasError() {
		return nil
	}
	fillIdentity(&p.m, &p.config)
	if p.cluster = r.clusterOf(&p.m, p.diags); p.cluster == nil {
		return nil
	}
	if p.state != nil {
		for _, a := range []struct {
			name          string
			planned, prev types.String
		}{
			{"name", p.m.Name, p.state.Name},
			{"namespace", p.m.Namespace, p.state.Namespace},
			{"release_name", p.m.ReleaseName, p.state.ReleaseName},
			{"target_namespace", p.m.TargetNamespace, p.state.TargetNamespace},
			{"storage_namespace", p.m.StorageNamespace, p.state.StorageNamespace},
			{"cluster", p.m.Cluster, p.state.Cluster},
		} {
			if !a.planned.Equal(a.prev) {
				resp.RequiresReplace = append(resp.RequiresReplace, path.Root(a.name))
			}
		}
		if len(resp.RequiresReplace) > 0 {
			// The release is uninstalled, then installed anew: from a
			// cluster the provider still reaches.
			if r.clusterOf(p.state, p.diags) == nil {
				return nil
			}
			p.state = nil
		}
	}
	p.engine = r.engineOf(&p.m)
	p.continuing = p.state != nil && r.engineOf(p.state).name() == p.engine.name()
	// Only this plan's render may vouch for the apply's objects.
	p.diags.Append(resp.Private.SetKey(ctx, privateValidated, nil)...)
	p.red = newRedactor(nil, nil)

	// A create installs; an update runs no Helm action unless decide
	// finds one (as refreshed: null, or with -refresh=false the last one,
	// rather than show it going away).
	p.out = plannedOf(&p.m)
	p.out.action = types.StringValue("install")
	p.out.hooks, p.out.crds = types.MapUnknown(types.StringType), types.MapUnknown(types.StringType)
	p.out.changes = types.MapUnknown(types.StringType)
	if p.state != nil {
		p.out.action = p.state.PlannedAction
		p.out.hooks, p.out.crds = p.state.PlannedHooks, p.state.PlannedCRDs
		p.out.changes = p.state.PlannedChanges
	}
	return p
}

// write writes the planned attributes into the plan, with secrets masked
// and objects shown as plan_detail says, and masks secrets in the
// diagnostics.
func (p *releasePlan) write(ctx context.Context) {
	m := &p.m
	p.out.into(m)
	p.red.model(ctx, m, p.diags)
	if !m.showsChanges() {
		m.PlannedChanges = types.MapNull(types.StringType)
	}
	if !m.showsNames() {
		// Shown as digests (plan_detail was names): the apply shows
		// them again in full.
		if showsDigests(m.Resources) {
			m.Resources = types.MapUnknown(types.StringType)
		}
		if showsDigests(m.PlannedHooks) || showsDigests(m.PlannedCRDs) {
			m.PlannedHooks, m.PlannedCRDs = types.MapNull(types.StringType), types.MapNull(types.StringType)
		}
	}
	p.diags.Append(setRelease(ctx, &p.resp.Plan.Raw, m)...)
	p.resp.Diagnostics = p.red.diagnostics(p.resp.Diagnostics)
}

// suspended plans a suspended release: the configuration is recorded, and
// nothing else changes (a create plans no action). It reports whether the
// release is suspended; the plan then ends.
func (p *releasePlan) suspended() bool {
	if !p.m.Suspend.ValueBool() {
		return false
	}
	if p.state == nil {
		p.out.action = types.StringNull()
		p.out.hooks, p.out.crds = types.MapNull(types.StringType), types.MapNull(types.StringType)
		p.out.changes = types.MapNull(types.StringType)
	} else {
		s := p.state
		p.out.chartVersion, p.out.appVersion, p.out.chartDigest = s.ChartVersion, s.AppVersion, s.ChartDigest
		p.out.notes, p.out.description = s.Notes, s.Description
		p.out.resources, p.out.status = s.Resources, s.Status
	}
	p.diags.AddWarning("Release suspended",
		fmt.Sprintf("helmrelease_release %s is suspended: the configuration is recorded in the state, but no Helm action runs and drift is not reported.\n\nSet suspend = false to roll the changes out.", p.m.ID.ValueString()))
	return true
}

// deferred defers the plan, where Terraform allows it, while the
// cluster's settings are not known: Terraform plans it again once they
// are. It reports whether the plan was deferred.
func (p *releasePlan) deferred() bool {
	if p.cluster.known() || !p.req.ClientCapabilities.DeferralAllowed {
		return false
	}
	p.resp.Deferred = &resource.Deferred{Reason: resource.DeferredReasonProviderConfigUnknown}
	return true
}

// supported checks that the release's cluster can run it on its engine,
// once the cluster's settings are known.
func (p *releasePlan) supported(ctx context.Context) bool {
	return !p.cluster.known() || p.engine.planSupported(ctx, &p.m, p.diags)
}

// inputs resolves the chart's version and composes the values, and reads
// the state's key and status. It reports whether the plan can say more:
// false when something failed, or when what the release is made of is not
// known yet (what depends on it is then known after apply).
func (p *releasePlan) inputs(ctx context.Context) bool {
	m := &p.m
	// What the next revision says, unless no Helm action runs.
	p.out.notes, p.out.description = types.StringUnknown(), types.StringUnknown()
	p.wo = writeOnlyOf(ctx, &p.config, p.diags)
	if p.diags.HasError() {
		return false
	}
	p.red = p.r.redactorFor(ctx, m, p.wo)
	ctx = p.red.context(ctx)
	if fullyKnown(m.Chart) {
		if p.resolved = p.r.resolveChart(ctx, m, p.wo, true, p.diags); p.resolved == nil {
			return false
		}
		p.out.chartVersion = types.StringValue(p.resolved.Version)
		p.out.appVersion = types.StringValue(p.resolved.AppVersion)
		p.out.chartDigest = types.StringValue(p.resolved.Digest)
	} else {
		p.out.chartVersion, p.out.appVersion, p.out.chartDigest = types.StringUnknown(), types.StringUnknown(), types.StringUnknown()
	}

	// Everything the release is made of must be known to say more.
	known := p.resolved != nil && fullyKnown(m.Values) && fullyKnown(m.SensitiveValues) && fullyKnown(p.wo.SensitiveValues) && fullyKnown(m.ValuesFrom) &&
		specKnown(m) && (isEmpty(m.ValuesFrom) || p.cluster.known())
	if !known {
		p.out.unknownObjects()
		p.out.status = types.ObjectUnknown(statusAttrTypes())
		if p.state != nil {
			p.out.action = types.StringUnknown()
		}
		return false
	}
	p.spec = p.engine.spec(ctx, m, p.diags)
	if p.state != nil {
		requestsOf(ctx, p.req.Private, p.diags).Apply(p.spec)
	}
	p.values = p.r.composeValues(ctx, m, p.wo, p.red, p.diags)
	ctx = p.red.context(ctx)
	if p.diags.HasError() {
		return false
	}
	// The key is the state's: one made here would differ when Terraform
	// plans again during the apply. Without one, Secrets are known after
	// apply, which makes it, and values are compared only with digests
	// an older version recorded.
	if p.state != nil {
		p.key = secretHashKeyOf(ctx, p.req.Private, nil, p.diags)
	}
	st, diags := statusOf(ctx, stateStatus(p.state))
	p.diags.Append(diags...)
	p.st = st
	attempted := st.LastAttemptedConfigDigest
	if cur := st.Latest(); attempted == "" && cur != nil {
		// Cleared as unconfirmed (a plain digest of an older version):
		// the newest revision's values stand for the last attempt.
		attempted = cur.ConfigDigest
	}
	same, err := reconcile.Digests{Key: p.key}.SameConfig(attempted, p.values)
	if errors.Is(err, reconcile.ErrNoDigestKey) {
		err = nil // a state without its key: the values are applied again
	}
	if err == nil {
		_, err = json.Marshal(p.values)
	}
	if err != nil {
		attrError(p.diags, path.Root("values"), "Values not usable", err.Error()+".", "Use values that encode as JSON.")
		return false
	}
	p.sameValues = same
	return true
}

// decision is what a plan does with a release whose inputs are known,
// decided in one function (releasePlan.decide) as helm-controller decides
// a release's state.
type decision struct {
	kind decisionKind
	// why the release needs a Helm action (decideAction); or, for the
	// other kinds, what the engine runs now (decideAtWork), or why the
	// release stalled (decideStalled).
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
func (p *releasePlan) decide(context.Context) decision {
	st := p.st
	changes := releaseChanges(st, p.resolved, p.sameValues, p.spec)
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
		p.out.resources, p.out.status = s.Resources, s.Status
		p.out.notes, p.out.description = s.Notes, s.Description
		p.diags.AddWarning("Release stalled: retries exhausted",
			fmt.Sprintf("helmrelease_release %s is not applied again: %s.\n\n%s", id, d.why[0], stallRemedies(p.spec, p.st)))
	case decideInSync:
		p.driftCorrection(ctx)
		if resetRequested(p.spec, p.st) {
			// The apply records the reset as handled, and clears the
			// failure counters.
			p.out.status = types.ObjectUnknown(statusAttrTypes())
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
func releaseChanges(st *reconcile.Status, chart *chartsource.Resolved, sameValues bool, spec *reconcile.Spec) []string {
	out := chart.RevisionChanges(st.LastAttemptedRevision)
	was, renamed := reconcile.ChartRenamed(st, chart.Name())
	switch d := chart.TrackedDigest; {
	case renamed:
		// Another chart: its digest is another one too.
		out = append(out, fmt.Sprintf("chart name changed from %s to %s", was, chart.Name()))
	case d != "" && st.LastAttemptedRevisionDigest != "" && d != st.LastAttemptedRevisionDigest:
		out = append(out, fmt.Sprintf("chart %s published again with another digest (%s, was %s)", chart.Version, d, st.LastAttemptedRevisionDigest))
	}
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
	if reconcile.PostRenderersDigest(spec) != st.ObservedPostRenderersDigest {
		out = append(out, "post_renderers changed")
	}
	if reconcile.OptionsDigest(spec) != st.ObservedOptionsDigest {
		out = append(out, "common_metadata changed")
	}
	return out
}

func stateStatus(state *releaseModel) types.Object {
	if state == nil {
		return types.ObjectNull(statusAttrTypes())
	}
	return state.Status
}
