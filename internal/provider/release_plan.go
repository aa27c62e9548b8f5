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

// Ready reasons Read records for a release changed outside Terraform.
const (
	reasonUnmanaged = string(reconcile.StateUnmanaged)
	reasonLocked    = string(reconcile.StateLocked)
)

// ModifyPlan resolves the chart and the values, decides whether the release
// needs a Helm action, and if so renders it (a dry-run install or upgrade
// the API server validates) into the planned resources; otherwise the
// planned resources are the release's as refreshed, with drifted objects
// put back. What is not known yet stays unknown.
func (r *releaseResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if r.data == nil {
		return
	}
	if req.Plan.Raw.IsNull() {
		// A destroy: refused at plan when it cannot reach the release.
		var state releaseModel
		resp.Diagnostics.Append(releaseModelOf(ctx, req.State.Raw, &state)...)
		if !resp.Diagnostics.HasError() {
			r.clusterOf(&state, &resp.Diagnostics)
		}
		return
	}
	var plan, config releaseModel
	resp.Diagnostics.Append(releaseModelOf(ctx, req.Plan.Raw, &plan)...)
	resp.Diagnostics.Append(releaseModelOf(ctx, req.Config.Raw, &config)...)
	var state *releaseModel
	if !req.State.Raw.IsNull() {
		state = &releaseModel{}
		resp.Diagnostics.Append(releaseModelOf(ctx, req.State.Raw, state)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	fillIdentity(&plan, &config)
	on := r.clusterOf(&plan, &resp.Diagnostics)
	if on == nil {
		return
	}
	if state != nil {
		for _, a := range []struct {
			name          string
			planned, prev types.String
		}{
			{"name", plan.Name, state.Name},
			{"namespace", plan.Namespace, state.Namespace},
			{"release_name", plan.ReleaseName, state.ReleaseName},
			{"target_namespace", plan.TargetNamespace, state.TargetNamespace},
			{"storage_namespace", plan.StorageNamespace, state.StorageNamespace},
			{"cluster", plan.Cluster, state.Cluster},
		} {
			if !a.planned.Equal(a.prev) {
				resp.RequiresReplace = append(resp.RequiresReplace, path.Root(a.name))
			}
		}
		if len(resp.RequiresReplace) > 0 {
			// The release is uninstalled, then installed anew: from a
			// cluster the provider still reaches.
			if r.clusterOf(state, &resp.Diagnostics) == nil {
				return
			}
			state = nil
		}
	}
	// Only this plan's render may vouch for the apply's objects.
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateValidated, nil)...)
	red := newRedactor(nil, nil)
	defer func() {
		red.model(ctx, &plan, &resp.Diagnostics)
		if !plan.showsChanges() {
			plan.PlannedChanges = types.MapNull(types.StringType)
		}
		if !plan.showsNames() {
			// Shown as digests (plan_detail was names): the apply shows
			// them again in full.
			if showsDigests(plan.Resources) {
				plan.Resources = types.MapUnknown(types.StringType)
			}
			if showsDigests(plan.PlannedHooks) || showsDigests(plan.PlannedCRDs) {
				plan.PlannedHooks, plan.PlannedCRDs = types.MapNull(types.StringType), types.MapNull(types.StringType)
			}
		}
		resp.Diagnostics.Append(setRelease(ctx, &resp.Plan.Raw, &plan)...)
		resp.Diagnostics = red.diagnostics(resp.Diagnostics)
	}()

	// A create installs; an update runs no Helm action unless found below
	// (as refreshed: null, or with -refresh=false the last one, rather
	// than show it going away).
	plan.PlannedAction = types.StringValue("install")
	plan.PlannedHooks, plan.PlannedCRDs = types.MapUnknown(types.StringType), types.MapUnknown(types.StringType)
	plan.PlannedChanges = types.MapUnknown(types.StringType)
	if state != nil {
		plan.PlannedAction = state.PlannedAction
		plan.PlannedHooks, plan.PlannedCRDs = state.PlannedHooks, state.PlannedCRDs
		plan.PlannedChanges = state.PlannedChanges
	}
	if plan.Suspend.ValueBool() {
		if state == nil {
			plan.PlannedAction = types.StringNull()
			plan.PlannedHooks, plan.PlannedCRDs = types.MapNull(types.StringType), types.MapNull(types.StringType)
			plan.PlannedChanges = types.MapNull(types.StringType)
		} else {
			plan.ChartVersion, plan.AppVersion, plan.ChartDigest = state.ChartVersion, state.AppVersion, state.ChartDigest
			plan.Notes, plan.Description = state.Notes, state.Description
			plan.Resources, plan.Status = state.Resources, state.Status
		}
		resp.Diagnostics.AddWarning("Release suspended",
			fmt.Sprintf("helmrelease_release %s is suspended: the configuration is recorded in the state, but no Helm action runs and drift is not reported.\n\nSet suspend = false to roll the changes out.", plan.ID.ValueString()))
		return
	}

	clusterKnown := on.known()
	if !clusterKnown && req.ClientCapabilities.DeferralAllowed {
		// Terraform plans it again once the cluster's settings are known.
		resp.Deferred = &resource.Deferred{Reason: resource.DeferredReasonProviderConfigUnknown}
		return
	}

	if plan.handedToFlux() && clusterKnown && !r.fluxSupports(ctx, &plan, &resp.Diagnostics) {
		return
	}

	// What the next revision says, unless no Helm action runs (below).
	plan.Notes, plan.Description = types.StringUnknown(), types.StringUnknown()
	wo := writeOnlyOf(ctx, &config, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	red = r.redactorFor(ctx, &plan, wo)
	ctx = red.context(ctx)
	var resolved *chartsource.Resolved
	if fullyKnown(plan.Chart) {
		if resolved = r.planChart(ctx, &plan, wo, &resp.Diagnostics); resolved == nil {
			return
		}
	} else {
		plan.ChartVersion, plan.AppVersion, plan.ChartDigest = types.StringUnknown(), types.StringUnknown(), types.StringUnknown()
	}

	// Everything the release is made of must be known to say more.
	inputsKnown := resolved != nil && fullyKnown(plan.Values) && fullyKnown(plan.SensitiveValues) && fullyKnown(wo.SensitiveValues) && fullyKnown(plan.ValuesFrom) &&
		specKnown(&plan) && (isEmpty(plan.ValuesFrom) || clusterKnown)
	if !inputsKnown {
		plan.Resources, plan.Status = types.MapUnknown(types.StringType), types.ObjectUnknown(statusAttrTypes())
		plan.PlannedHooks, plan.PlannedCRDs = types.MapUnknown(types.StringType), types.MapUnknown(types.StringType)
		plan.PlannedChanges = types.MapUnknown(types.StringType)
		if state != nil {
			plan.PlannedAction = types.StringUnknown()
		}
		return
	}
	spec := plan.spec(ctx, &resp.Diagnostics)
	if state != nil {
		requestsOf(ctx, req.Private, &resp.Diagnostics).Apply(spec)
	}
	values := r.composeValues(ctx, &plan, wo, red, &resp.Diagnostics)
	ctx = red.context(ctx)
	if resp.Diagnostics.HasError() {
		return
	}
	// The key is the state's: one made here would differ when Terraform
	// plans again during the apply. Without one, Secrets are known after
	// apply, which makes it, and values are compared only with digests
	// an older version recorded.
	var key []byte
	if state != nil {
		key = secretHashKeyOf(ctx, req.Private, nil, &resp.Diagnostics)
	}
	st, diags := statusOf(ctx, stateStatus(state))
	resp.Diagnostics.Append(diags...)
	attempted := st.LastAttemptedConfigDigest
	if cur := st.Latest(); attempted == "" && cur != nil {
		// Cleared as unconfirmed (a plain digest of an older version):
		// the newest revision's values stand for the last attempt.
		attempted = cur.ConfigDigest
	}
	sameValues, err := reconcile.Digests{Key: key}.SameConfig(attempted, values)
	if errors.Is(err, reconcile.ErrNoDigestKey) {
		err = nil // a state without its key: the values are applied again
	}
	if err == nil {
		_, err = json.Marshal(values)
	}
	if err != nil {
		attrError(&resp.Diagnostics, path.Root("values"), "Values not usable", err.Error()+".", "Use values that encode as JSON.")
		return
	}
	changes := releaseChanges(st, resolved, sameValues, spec)
	if state != nil && state.handedToFlux() != plan.handedToFlux() {
		// The objects' origin labels change hands, in a new revision.
		changes = append(changes, map[bool]string{true: "handed to Flux's helm-controller", false: "taken back from Flux's helm-controller"}[plan.handedToFlux()])
	}
	ready := st.Condition(reconcile.ConditionReady)
	stalled := st.Condition(reconcile.ConditionStalled)
	atWork := ""
	if plan.handedToFlux() && state != nil && state.handedToFlux() {
		atWork = controllerAtWork(st)
	}
	switch {
	case state == nil:
	case len(changes) == 0 && atWork != "" && (ready == nil || ready.Reason != reasonChangedOutside):
		// The controller's own work (interval, retry, drift correction):
		// nothing for Terraform to do until it ends.
		r.planDriftCorrection(ctx, req, &plan, state, &resp.Diagnostics)
		resp.Diagnostics.AddWarning("Release being reconciled by Flux",
			fmt.Sprintf("helmrelease_release %s: helm-controller is at work on the release now (%s). Nothing is planned for it: plan again when it is done to see its result.", plan.ID.ValueString(), atWork))
		return
	case len(changes) == 0 && stalled != nil && stalled.Status:
		plan.Resources, plan.Status = state.Resources, state.Status
		plan.Notes, plan.Description = state.Notes, state.Description
		resp.Diagnostics.AddWarning("Release stalled: retries exhausted",
			fmt.Sprintf("helmrelease_release %s is not applied again: %s.\n\n%s", plan.ID.ValueString(), stalled.Message, stallRemedies(spec, st)))
		return
	case len(changes) == 0 && ready != nil && ready.Status:
		// No Helm action: the release as refreshed, drifted objects put back.
		r.planDriftCorrection(ctx, req, &plan, state, &resp.Diagnostics)
		if resetRequested(spec, st) {
			// The apply records the reset as handled, and clears the
			// failure counters.
			plan.Status = types.ObjectUnknown(statusAttrTypes())
		}
		return
	case len(changes) == 0 && ready != nil:
		changes = []string{"the release is not ready: " + ready.Message}
	case len(changes) == 0:
		changes = []string{"the release was never applied"}
	}
	plan.Status = types.ObjectUnknown(statusAttrTypes())
	plan.PlannedAction = types.StringValue("install")
	if state != nil {
		// In the diff, not as a warning: a module of many releases would
		// print one per release for an ordinary change.
		action := "upgrade"
		if cur := st.Latest(); cur == nil || cur.Status == string(helm.StatusUninstalled) {
			action = "install"
		}
		why := strings.Join(changes, "; ")
		if name := resolved.Name(); action == "upgrade" && name != "" && reconcile.Reinstalls(st, spec, name) {
			action = "reinstall"
			why += "; upgrade.chart_name_change_strategy " + chartNameReinstall + " uninstalls the release (deleting its objects, under uninstall's settings) and installs the new chart afresh, a new history from revision 1 (" + chartNameInPlaceUpdate + " upgrades it in place)"
		}
		if atWork != "" {
			why += "; helm-controller is at work on the release now (" + atWork + "): the apply writes the HelmRelease, then waits for the controller to finish and reconcile it"
		}
		plan.PlannedAction = types.StringValue(action + ": " + why)
		logInfo(ctx, "release action planned", map[string]any{"release": plan.ID.ValueString(), "because": why})
	}
	if ready != nil && ready.Reason == reasonLocked {
		// A pending release cannot be rendered until it is unlocked.
		plan.Resources = types.MapUnknown(types.StringType)
		plan.PlannedHooks, plan.PlannedCRDs = types.MapUnknown(types.StringType), types.MapUnknown(types.StringType)
		plan.PlannedChanges = types.MapUnknown(types.StringType)
		return
	}
	var asDeployed func(types.Map) types.Map
	if state != nil && state.handedToFlux() && plan.handedToFlux() {
		// Fields the controller is known to render otherwise: as it will.
		known := renderDifferencesOf(ctx, req.Private, &resp.Diagnostics)
		asDeployed = func(planned types.Map) types.Map { return asTheControllerRenders(planned, known) }
	}
	r.planRender(ctx, &plan, wo, spec, resolved, values, state == nil, key, red, asDeployed, resp.Private, &resp.Diagnostics)
}

func (r *releaseResource) planChart(ctx context.Context, plan *releaseModel, wo writeOnly, diags *diag.Diagnostics) *chartsource.Resolved {
	resolved := r.resolveChart(ctx, plan, wo, true, diags)
	if resolved == nil {
		return nil
	}
	plan.ChartVersion = types.StringValue(resolved.Version)
	plan.AppVersion = types.StringValue(resolved.AppVersion)
	plan.ChartDigest = types.StringValue(resolved.Digest)
	return resolved
}

// planRender renders the release the next install or upgrade makes into
// the planned resources, after checking that the release may be acted on.
// Secret values show hashed with hashKey; without one (a create: the key
// is made when it applies) Secrets are known after apply.
// asDeployed, when set, turns the rendered objects into what Flux's
// controller is known to deploy of them.
func (r *releaseResource) planRender(ctx context.Context, plan *releaseModel, wo writeOnly, spec *reconcile.Spec, resolved *chartsource.Resolved, values map[string]any, create bool, hashKey []byte, red *redactor, asDeployed func(types.Map) types.Map, private privateSetter, diags *diag.Diagnostics) {
	plan.Resources = types.MapUnknown(types.StringType)
	plan.PlannedHooks, plan.PlannedCRDs = types.MapUnknown(types.StringType), types.MapUnknown(types.StringType)
	plan.PlannedChanges = types.MapUnknown(types.StringType)
	if !r.clusterKnown(plan) {
		return
	}
	ctx, e := r.renderEngine(ctx, plan, spec, red, diags)
	if e == nil {
		return
	}
	// What the render's validation passed, for the apply of this plan.
	defer saveValidated(ctx, private, e, diags)
	asInstall := false
	if create {
		latest, err := e.Helm.LastRelease(spec.GetReleaseName())
		if err != nil {
			clusterUnavailable(diags, path.Root("release_name"), err)
			return
		}
		ok := false
		if asInstall, ok = r.engineOf(plan).allowCreate(ctx, plan, spec, latest, diags); !ok {
			return
		}
	}
	if resolved.Chart == nil {
		// Only the version was resolved, from the index: now the chart.
		if resolved = r.resolveChart(ctx, plan, wo, false, diags); resolved == nil {
			return
		}
	}
	// The hooks of the first render, and of the perturbed one when the
	// chart calls random or time functions.
	var hooks, perturbedHooks []*helm.Hook
	perturbedRan := false
	render := func(ctx context.Context, c *helm.Chart, v map[string]any, perturbed bool) (string, string, error) {
		req := &reconcile.Request{Spec: spec, Chart: c, Values: v, Status: &reconcile.Status{}, AsInstall: asInstall}
		dryRun := e.DryRun
		if perturbed {
			dryRun = e.Render
		}
		rel, err := dryRun(ctx, req)
		if err != nil {
			return "", "", err
		}
		if perturbed {
			perturbedRan, perturbedHooks = true, rel.Hooks
		} else {
			hooks = rel.Hooks
		}
		return rel.Manifest, "", nil
	}
	show := display{Key: hashKey, Sensitive: stringsAt(values, sensitivePaths(values, red.values))}
	rendered, err := renderRelease(ctx, render, resolved.Chart, values, spec.GetTargetNamespace(), engineScope(e), show)
	if err != nil && unreachable(ctx, e, err) {
		clusterUnreachable(diags, plan.ID.ValueString(), err)
		return
	}
	if err != nil && lockedWhileRendering(diags, e, spec, plan) {
		return
	}
	if err != nil {
		renderError(diags, err, "Release does not render",
			"Fix the values, the post-renderers or the chart so that the release renders and the cluster accepts its objects (the plan ran a dry-run "+map[bool]string{true: "install", false: "upgrade"}[create]+" validated by the API server).")
		return
	}
	if len(rendered.Unreproducible) > 0 {
		logInfo(ctx, "objects not reproducible by a render are planned as known after apply", map[string]any{"release": plan.ID.ValueString(), "objects": rendered.Unreproducible})
	}
	plan.Resources = rendered.resources(hashKey == nil)
	if asDeployed != nil {
		plan.Resources = asDeployed(plan.Resources)
	}
	if plan.showsChanges() {
		var before map[string]string
		if !create && !asInstall {
			before = r.shownBefore(e, spec, values, red, show, diags)
		}
		plan.PlannedChanges = plannedChanges(before, plan.Resources)
	}
	install := strings.HasPrefix(plan.PlannedAction.ValueString(), "install")
	crds, err := e.CRDsToWrite(&reconcile.Request{Spec: spec, Chart: resolved.Chart}, install)
	if err != nil {
		attrError(diags, path.Root("chart"), "Chart CRDs not readable", err.Error()+".", "Check the chart's crds/ files and that the provider's credentials may read CustomResourceDefinitions.")
		return
	}
	planned := func(manifest string) types.Map {
		shown, masked, err := showManifest(manifest, spec.GetTargetNamespace(), engineScope(e), nil, show)
		if err != nil {
			diags.AddWarning("Hooks or CRDs not shown", err.Error())
			return types.MapUnknown(types.StringType)
		}
		return (&rendering{Shown: shown, Masked: masked}).resources(hashKey == nil)
	}
	plan.PlannedHooks, plan.PlannedCRDs = planned(hooksManifest(hooks)), planned(crds)
	if rendered.SetUnreproducible || perturbedRan && hooksManifest(perturbedHooks) != hooksManifest(hooks) {
		// Hooks another render makes otherwise (random names, as
		// podinfo's tests have): known after apply, from the release.
		plan.PlannedHooks = types.MapUnknown(types.StringType)
	}
}

// lockedWhileRendering reports a render refused because another client
// took the release's lock after the refresh (Helm's "another operation is
// in progress"): the plan goes on with the objects known after apply, and
// says who holds the lock and what to do. The Flux engine renders from
// the settled revision and never meets it.
func lockedWhileRendering(diags *diag.Diagnostics, e *reconcile.Reconciler, spec *reconcile.Spec, plan *releaseModel) bool {
	latest, err := e.Helm.LastRelease(spec.GetReleaseName())
	if err != nil || latest == nil || !latest.Info.Status.IsPending() {
		return false
	}
	reason := reconcile.LockedReason(latest)
	diags.AddWarning("Release locked by another operation",
		fmt.Sprintf("helmrelease_release %s: %s. The plan cannot render the release until that operation ends: its objects are known after apply.\n\nWait for it to end (it times out after its own timeout), then plan again. The apply refuses a lock that its action's timeout may still cover, and marks a stale one failed before it acts.", plan.ID.ValueString(), reason))
	if a := plan.PlannedAction.ValueString(); a != "" && !plan.PlannedAction.IsUnknown() {
		plan.PlannedAction = types.StringValue(a + "; " + reason)
	}
	return true
}

// planDriftCorrection plans the objects Read found drifted or missing back
// to their desired YAML; nothing else changes.
func (r *releaseResource) planDriftCorrection(ctx context.Context, req resource.ModifyPlanRequest, plan, state *releaseModel, diags *diag.Diagnostics) {
	if state.ChartDigest.ValueString() == "" {
		// Adopted (import, moved): Helm's storage does not record the
		// archive the release was installed from, so its digest stays
		// unknown, shown empty, until an upgrade installs one.
		plan.ChartDigest = state.ChartDigest
	}
	plan.Resources = state.Resources
	plan.Notes, plan.Description = state.Notes, state.Description
	if !plan.Status.IsUnknown() {
		plan.Status = state.Status
	}
	raw, d := req.Private.GetKey(ctx, privateDrift)
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
	plan.Resources = resources
	if !plan.Status.IsUnknown() {
		st, d := statusOf(ctx, state.Status)
		diags.Append(d...)
		reconcile.MarkDrift(st, plan.spec(ctx, diags), reconcile.ReleaseState{Status: reconcile.StateInSync})
		plan.Status, d = statusObject(ctx, st)
		diags.Append(d...)
	}
	if plan.showsChanges() {
		plan.PlannedChanges = driftChanges(ctx, req.Private, diags)
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

// fillIdentity sets the computed identity attributes from the configured
// ones: target and storage namespaces default to namespace, the release
// name to [target_namespace-]name (shortened), the ID to both.
func fillIdentity(m, config *releaseModel) {
	if config.TargetNamespace.IsNull() {
		m.TargetNamespace = m.Namespace
	}
	if config.StorageNamespace.IsNull() {
		m.StorageNamespace = m.Namespace
	}
	if config.ReleaseName.IsNull() {
		if m.Name.IsUnknown() || config.TargetNamespace.IsUnknown() {
			m.ReleaseName = types.StringUnknown()
		} else {
			m.ReleaseName = types.StringValue(reconcile.ReleaseName("", config.TargetNamespace.ValueString(), m.Name.ValueString()))
		}
	}
	if m.Cluster.IsUnknown() || m.StorageNamespace.IsUnknown() || m.ReleaseName.IsUnknown() {
		m.ID = types.StringUnknown()
	} else {
		m.ID = types.StringValue(releaseID(m.Cluster.ValueString(), m.StorageNamespace.ValueString(), m.ReleaseName.ValueString()))
	}
}

// specKnown reports whether every attribute the engine's spec is made of
// is known.
func specKnown(m *releaseModel) bool {
	for _, v := range []attr.Value{
		m.Name, m.Namespace, m.ReleaseName, m.TargetNamespace, m.StorageNamespace, m.PostRenderers, m.CommonMetadata,
		m.Timeout, m.MaxHistory, m.PersistentClient, m.ServiceAccountName, m.KubeConfig,
		m.Install, m.Upgrade, m.Test, m.Rollback, m.Uninstall, m.DriftDetection, m.ForceAt, m.ResetAt,
		m.WaitStrategy, m.HealthCheckExprs, m.PostRenderStrategy,
	} {
		if !fullyKnown(v) {
			return false
		}
	}
	return true
}

func isEmpty(l types.List) bool { return l.IsNull() || (!l.IsUnknown() && len(l.Elements()) == 0) }

func stateStatus(state *releaseModel) types.Object {
	if state == nil {
		return types.ObjectNull(statusAttrTypes())
	}
	return state.Status
}
