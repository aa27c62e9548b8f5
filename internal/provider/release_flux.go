package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/flux"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// fluxWritten is what an apply wrote: a HelmRelease of another generation
// was changed by someone else since.
type fluxWritten struct {
	Generation int64 `json:"generation"`
}

// fluxSettings are the flux block's settings, defaulted.
func (m *releaseModel) fluxSettings(ctx context.Context, diags *diag.Diagnostics) (interval time.Duration, uninstall bool) {
	interval, uninstall = flux.DefaultInterval, true
	f := objectAs[fluxModel](ctx, m.Flux, path.Root("flux"), diags)
	if f == nil {
		return interval, uninstall
	}
	if d := parseDuration(f.Interval); d > 0 {
		interval = d
	}
	if !f.UninstallOnDestroy.IsNull() {
		uninstall = f.UninstallOnDestroy.ValueBool()
	}
	return interval, uninstall
}

// fluxClient is the Flux client of m's cluster; nil with a diagnostic when
// the cluster cannot be used or lacks Flux's kinds.
func (r *releaseResource) fluxClient(m *releaseModel, diags *diag.Diagnostics) *flux.Client {
	c := r.clusterOf(m, diags)
	if c == nil {
		return nil
	}
	e, err := c.fluxEngine()
	if err != nil {
		clusterUnavailable(diags, path.Root("engine"), err)
		return nil
	}
	if err := e.CheckCRDs(); err != nil {
		if errors.Is(err, flux.ErrCRDsMissing) {
			attrError(diags, path.Root("engine"), "Flux not installed",
				fmt.Sprintf("engine = %q hands the release to Flux's helm-controller, but %s.", engineFlux, err),
				"Install Flux's source-controller and helm-controller in the cluster (flux install, or the Flux Operator) before planning, or set engine = \""+engineHelm+"\".")
			return nil
		}
		clusterUnavailable(diags, path.Root("engine"), err)
		return nil
	}
	return e
}

// fluxField is a HelmRelease field that helm-controllers before since
// lack: their CRD would drop it silently, so a plan that needs it is
// refused.
type fluxField struct {
	// crd is the field's path under spec, dotted, through lists.
	crd   string
	since string
	// needed returns the attribute that needs the field, or nil.
	needed func(ctx context.Context, m *releaseModel) *path.Path
}

// fluxFields are the fields a configuration may need that older
// controllers lack.
var fluxFields = []fluxField{
	{crd: "healthCheckExprs", since: "v1.5 (Flux 2.8)", needed: func(_ context.Context, m *releaseModel) *path.Path {
		switch {
		case !m.HealthCheckExprs.IsNull():
			return new(path.Root("health_check_exprs"))
		case !m.WaitStrategy.IsNull():
			return new(path.Root("wait_strategy"))
		}
		return nil
	}},
	{crd: "install.serverSideApply", since: "v1.5 (Flux 2.8)", needed: serverSideApplyIn("install", func(m *releaseModel) types.Object { return m.Install })},
	{crd: "upgrade.serverSideApply", since: "v1.5 (Flux 2.8)", needed: serverSideApplyIn("upgrade", func(m *releaseModel) types.Object { return m.Upgrade })},
	{crd: "rollback.serverSideApply", since: "v1.5 (Flux 2.8)", needed: serverSideApplyIn("rollback", func(m *releaseModel) types.Object { return m.Rollback })},
	{crd: "postRenderStrategy", since: "v1.6 (Flux 2.9)", needed: func(_ context.Context, m *releaseModel) *path.Path {
		// nohooks is what older controllers do.
		if reconcile.PostRenderStrategy(m.PostRenderStrategy.ValueString()).PostRendersHooks() {
			return new(path.Root("post_render_strategy"))
		}
		return nil
	}},
	{crd: "upgrade.chartNameChangeStrategy", since: "v1.6 (Flux 2.9)", needed: func(ctx context.Context, m *releaseModel) *path.Path {
		// Reinstall is what older controllers do.
		if up := objectAs[upgradeModel](ctx, m.Upgrade, path.Root("upgrade"), &diag.Diagnostics{}); up != nil && up.ChartNameChangeStrategy.ValueString() == chartNameInPlaceUpdate {
			return new(path.Root("upgrade").AtName("chart_name_change_strategy"))
		}
		return nil
	}},
	{crd: "valuesFrom.literal", since: "v1.6 (Flux 2.9)", needed: func(ctx context.Context, m *releaseModel) *path.Path {
		if m.ValuesFrom.IsNull() || m.ValuesFrom.IsUnknown() {
			return nil
		}
		var refs []valuesFromModel
		if m.ValuesFrom.ElementsAs(ctx, &refs, false).HasError() {
			return nil
		}
		for i, ref := range refs {
			if ref.Literal.ValueBool() {
				return new(path.Root("values_from").AtListIndex(i).AtName("literal"))
			}
		}
		return nil
	}},
}

// serverSideApplyIn is the needed function of <block>.server_side_apply: set when its
// value is (one not known yet is checked once it is).
func serverSideApplyIn(block string, get func(*releaseModel) types.Object) func(context.Context, *releaseModel) *path.Path {
	return func(_ context.Context, m *releaseModel) *path.Path {
		o := get(m)
		if o.IsNull() || o.IsUnknown() {
			return nil
		}
		if v, ok := o.Attributes()["server_side_apply"]; !ok || v.IsNull() || v.IsUnknown() {
			return nil
		}
		return new(path.Root(block).AtName("server_side_apply"))
	}
}

// fluxSupports reports whether the cluster's Flux can run m: its CRDs are
// there, and declare the fields m needs that older versions lack.
func (r *releaseResource) fluxSupports(ctx context.Context, m *releaseModel, diags *diag.Diagnostics) bool {
	fe := r.fluxClient(m, diags)
	if fe == nil {
		return false
	}
	ok := true
	for _, f := range fluxFields {
		p := f.needed(ctx, m)
		if p == nil {
			continue
		}
		found, err := fe.HasSpecField(ctx, f.crd)
		if err != nil {
			clusterUnavailable(diags, path.Root("engine"), err)
			return false
		}
		if !found {
			attrError(diags, *p, "Flux too old for "+p.String(),
				fmt.Sprintf("The HelmRelease CRD in this cluster has no spec.%s: its helm-controller is older than %s, and would drop the setting.", f.crd, f.since),
				"Upgrade Flux's helm-controller to "+f.since+" or later, or remove "+p.String()+".")
			ok = false
		}
	}
	return ok
}

// fluxRelease is the release of m as Flux objects, with the values the
// controller will compose.
func (r *releaseResource) fluxRelease(ctx context.Context, m *releaseModel, wo writeOnly, spec *reconcile.Spec, resolved *chartsource.Resolved, diags *diag.Diagnostics) *flux.Release {
	c := objectAs[releaseChartModel](ctx, m.Chart, path.Root("chart"), diags)
	if c == nil {
		return nil
	}
	src, d := c.source(ctx, r.data)
	diags.Append(d...)
	if p := wo.ChartPassword.ValueString(); p != "" {
		src.Auth.Password = p
	}
	// The controller gets the login's current token, which expires in the
	// credentials Secret (the guide says so).
	auth, err := src.Auth.Concrete(ctx, src.Repository)
	if err != nil {
		chartError(diags, path.Root("chart"), err)
		return nil
	}
	src.Auth = auth
	inline, err := valuesMap(m.Values)
	if err != nil {
		invalidValue(diags, path.Root("values"), "values", err, "Set values to an object, e.g. values = { replicaCount = 2 }.")
	}
	sensitive := mergeSensitive([]sensitiveInput{{path.Root("sensitive_values"), m.SensitiveValues}, {path.Root("sensitive_values_wo"), wo.SensitiveValues}}, diags)
	var refs []valuesFromModel
	if !m.ValuesFrom.IsNull() {
		diags.Append(m.ValuesFrom.ElementsAs(ctx, &refs, false)...)
	}
	if diags.HasError() {
		return nil
	}
	interval, _ := m.fluxSettings(ctx, diags)
	rel := &flux.Release{
		Spec:            spec,
		Chart:           flux.Chart{Source: src, Version: resolved.Version, Digest: resolved.Digest},
		Values:          inline,
		SensitiveValues: sensitive,
		ValuesFrom:      valuesReferences(refs),
		Interval:        interval,
		Suspend:         m.Suspend.ValueBool(),
	}
	if ref := m.kubeConfigRef(ctx, diags); ref != nil {
		rel.KubeConfig = &meta.SecretKeyReference{Name: ref.Name, Key: ref.Key}
	}
	if f := objectAs[fluxModel](ctx, m.Flux, path.Root("flux"), diags); f != nil && !f.DependsOn.IsNull() {
		var deps []dependencyModel
		diags.Append(f.DependsOn.ElementsAs(ctx, &deps, false)...)
		for _, d := range deps {
			rel.DependsOn = append(rel.DependsOn, meta.DependencyReference{Name: d.Name.ValueString(), Namespace: d.Namespace.ValueString(), ReadyExpr: d.ReadyExpr.ValueString()})
		}
	}
	return rel
}

// requestToken is the reconcile request of an apply: a force or reset
// token not handled yet (Flux acts on them only with a request of the same
// value), else a new one.
func requestToken(spec *reconcile.Spec, st *reconcile.Status) string {
	switch {
	case spec.ForceAt != "" && spec.ForceAt != st.LastHandledForceAt:
		return spec.ForceAt
	case spec.ResetAt != "" && spec.ResetAt != st.LastHandledResetAt:
		return spec.ResetAt
	}
	return time.Now().UTC().Format(time.RFC3339Nano)
}

// fluxWaitTimeout is how long an apply waits for the controller: the
// install or upgrade, the tests, a remediation, and a minute for the
// chart source and the controller's queue.
func fluxWaitTimeout(spec *reconcile.Spec, st *reconcile.Status) time.Duration {
	t := spec.UpgradeTimeout()
	if cur := st.Latest(); cur == nil {
		t = spec.InstallTimeout()
	}
	if spec.Test.Enable {
		t += spec.TestTimeout()
	}
	return t + max(spec.RollbackTimeout(), spec.UninstallTimeout()) + time.Minute
}

// apply writes the release for Flux's controller and waits for its
// result; what it wrote and the controller's status are saved even when
// the wait fails (a failed create leaves the resource tainted, so that
// destroying it removes what was written).
func (f fluxEngine) apply(ctx context.Context, op *applyOp) {
	r, m, config, st, diags := f.r, op.m, op.config, op.st, op.diags
	create, priorPrivate, out, private, identity := op.prior == nil, op.priorPrivate, op.out, op.private, op.identity
	spec := m.spec(ctx, diags)
	wo := writeOnlyOf(ctx, config, diags)
	red := r.redactorFor(ctx, m, wo)
	ctx = red.context(ctx)
	defer red.finish(ctx, out, diags)
	if diags.HasError() {
		return
	}
	resolved := r.resolveChart(ctx, m, wo, true, diags)
	if diags.HasError() {
		return
	}
	if chartChangedSincePlan(m, resolved, diags) {
		return
	}
	composed := r.composeValues(ctx, m, wo, red, diags)
	ctx = red.context(ctx)
	sensitive := sensitivePaths(composed, red.values)
	saveSensitivePaths(ctx, private, sensitive, diags)
	rel := r.fluxRelease(ctx, m, wo, spec, resolved, diags)
	if diags.HasError() {
		return
	}
	fe := r.fluxClient(m, diags)
	if fe == nil {
		return
	}
	ctx, e := r.newEngine(ctx, m, spec, red, diags)
	if e == nil {
		return
	}
	e.Key = secretHashKeyOf(ctx, priorPrivate, private, diags)
	if create && fluxCreateRefused(ctx, fe, e, spec, m.ID.ValueString(), diags) {
		return
	}
	configDigest, err := e.Digests().Config(composed)
	if err != nil {
		attrError(diags, path.Root("values"), "Values not usable", err.Error()+".", "Use values that encode as JSON.")
		return
	}
	rel.RequestedAt = requestToken(spec, st)
	// Without the CRD's answer (its read refused), hooks are written as
	// the controller defaults them, and the apply says if they differ.
	if ok, _ := fe.HasSpecField(ctx, "postRenderStrategy"); ok {
		rel.PostRenderStrategy = spec.PostRenderStrategy
		if rel.PostRenderStrategy == "" {
			rel.PostRenderStrategy = reconcile.PostRenderNoHooks
		}
	}
	// Reinstall is what a controller without the field does; the plan
	// refused InPlaceUpdate for such a controller.
	rel.ChartNameChangeStrategy = spec.Upgrade.ChartNameChangeStrategy
	if ok, _ := fe.HasSpecField(ctx, "upgrade.chartNameChangeStrategy"); !ok {
		rel.ChartNameChangeStrategy = ""
	}
	objs, err := flux.Build(rel)
	if err != nil {
		attrError(diags, path.Root("chart"), "Release not writable for Flux", err.Error()+".", "Fix the chart settings named above.")
		return
	}
	if spec.Install.CreateNamespace {
		if err := fe.CreateNamespace(ctx, spec.Namespace); err != nil {
			attrError(diags, path.Root("install").AtName("create_namespace"), "Namespace not created", err.Error()+".", "Check that the provider's credentials may create namespaces, or create the namespace first.")
			return
		}
	}
	since := time.Now()
	written, err := fe.Apply(ctx, objs)
	if cleanupLeft(diags, err, m.ID.ValueString(), spec.Namespace) {
		err = nil
	}
	if err != nil {
		left := ""
		if create {
			// Not saved: what was written before the failure goes too.
			if cleanErr := fe.DeleteWritten(ctx, objs); cleanErr != nil {
				left = fmt.Sprintf(" Removing the chart source and Secrets it wrote failed too (%s): delete the objects labelled %s=%s in namespace %q.", cleanErr, flux.ReleaseLabel, spec.Name, spec.Namespace)
			}
		}
		diags.AddError("HelmRelease not written", fmt.Sprintf("helmrelease_release %s: %s.%s\n\nThe provider's credentials need to apply HelmReleases, HelmRepositories, OCIRepositories and Secrets in namespace %q (see the guide \"Handing releases to Flux\"); check them and that the cluster is reachable, then apply again.", m.ID.ValueString(), err, left, spec.Namespace))
		return
	}
	b, _ := json.Marshal(fluxWritten{Generation: written.Generation}) // an int
	diags.Append(private.SetKey(ctx, privateFlux, b)...)

	hr, waitErr := written, error(nil)
	if !m.Suspend.ValueBool() {
		want := flux.Want{Generation: written.Generation, RequestedAt: rel.RequestedAt, ChartVersion: resolved.Version, ConfigDigest: flux.ConfigDigest(composed), Since: since}
		hr, waitErr = fe.Wait(ctx, spec.Namespace, spec.Name, want, fluxWaitTimeout(spec, st))
		if hr == nil {
			hr = written
		}
	}
	st = keepHandled(fluxStatus(hr, st), st, spec)
	st.LastAttemptedConfigDigest = configDigest
	st.ObservedOptionsDigest, st.ObservedPostRenderersDigest = reconcile.OptionsDigest(spec), reconcile.PostRenderersDigest(spec)
	status, d := statusObject(ctx, st)
	diags.Append(d...)
	m.Status = status
	m.ChartVersion, m.AppVersion = types.StringValue(resolved.Version), types.StringValue(resolved.AppVersion)
	if m.ChartDigest.IsUnknown() {
		m.ChartDigest = types.StringValue(resolved.Digest)
	}
	latest, latestErr := e.Helm.LastRelease(spec.GetReleaseName())
	if latestErr != nil {
		diags.AddWarning("Release objects not readable", latestErr.Error())
	}
	deployed := r.deployedResources(ctx, e, latest, sensitive, diags)
	var differences renderDifferences
	if waitErr == nil && latestErr == nil {
		// What the controller's Helm rendered, against the plan's.
		differences = differencesFrom(m.Resources, deployed)
		if hooks := deployedHooks(e, latest, sensitive, diags); fullyKnown(hooks) && !m.PlannedHooks.IsUnknown() && !m.PlannedHooks.IsNull() {
			for key, ds := range differencesFrom(m.PlannedHooks, hooks) {
				differences["hook "+key] = ds
			}
			if len(differences) > 0 {
				m.PlannedHooks = hooks
			}
		}
	}
	switch {
	case waitErr != nil || m.Resources.IsUnknown() || len(differences) > 0:
		m.Resources = deployed
	case !fullyKnown(m.Resources):
		// Objects a render cannot reproduce: as deployed; the others
		// stay as planned (the same objects, written otherwise at most:
		// a null field left out).
		m.Resources = withUnknownsFrom(m.Resources, deployed)
	}
	m.Notes, m.Description = releaseInfo(latest, latestErr, m.Notes, m.Description)
	settlePlanned(m, e, latest, sensitive, diags)
	diags.Append(setRelease(ctx, &out.Raw, m)...)
	diags.Append(setIdentity(ctx, identity, m)...)
	if waitErr != nil {
		reportFluxWait(diags, m.ID.ValueString(), waitErr)
		return
	}
	if latestErr == nil {
		controller := ""
		if len(differences) > 0 {
			controller = fe.ControllerVersion(ctx)
		}
		reportRenderDifferences(ctx, differences, m.ID.ValueString(), controller, create, private, diags)
	}
}

// reportFluxWait turns a failed wait for the controller into an error
// with a remedy.
func reportFluxWait(diags *diag.Diagnostics, id string, err error) {
	var nr *flux.NotReadyError
	remedy := "Check that the cluster is reachable, then apply again."
	summary := "Release not ready"
	if errors.As(err, &nr) {
		switch {
		case !nr.Observed:
			summary = "Flux controller not reconciling"
			remedy = "Start Flux's helm-controller (and source-controller) in the cluster, or check why it does not reconcile this namespace, then apply again: the HelmRelease stays as written."
		case nr.Stalled:
			summary = "Release stalled in Flux"
			remedy = "Fix the cause the conditions name, then apply: a change of chart or values is retried; otherwise set reset_at to a new value to retry with the remediation settings, or force_at to force one upgrade."
		case nr.RetryingLater:
			summary = "Release failed in Flux"
			remedy = "Fix the cause the conditions and events name. The controller retries the release on its own after the strategy's retry_interval (default 5m), and every apply retries it too (strategy RetryOnFailure: no remediation)."
		case nr.Mismatch != "":
			summary = "Release not as planned"
			remedy = "Another change reached the HelmRelease or its source between the plan and the controller's reconcile; plan again."
		default:
			remedy = "The controller keeps trying on its own (remediation retries, interval); fix the cause the conditions and events name, then apply again to wait for it."
		}
	}
	diags.AddError(summary, fmt.Sprintf("helmrelease_release %s: %s\n\n%s", id, err, remedy))
}

// fluxStatus is the controller's status of hr, with the digests prev
// holds of what this provider asked: the controller's digests of values
// are plain hashes, which would let a reader of the state test guesses of
// secret values, and are not kept.
func fluxStatus(hr *helmv2.HelmRelease, prev *reconcile.Status) *reconcile.Status {
	s := hr.Status
	st := &reconcile.Status{
		Failures:                    s.Failures,
		InstallFailures:             s.InstallFailures,
		UpgradeFailures:             s.UpgradeFailures,
		LastAttemptedRevision:       s.LastAttemptedRevision,
		LastAttemptedRevisionDigest: s.LastAttemptedRevisionDigest,
		LastAttemptedReleaseAction:  reconcile.ReleaseAction(s.LastAttemptedReleaseAction),
		LastHandledForceAt:          s.LastHandledForceAt,
		LastHandledResetAt:          s.LastHandledResetAt,
		StorageNamespace:            s.StorageNamespace,
		LastAttemptedConfigDigest:   prev.LastAttemptedConfigDigest,
		ObservedOptionsDigest:       prev.ObservedOptionsDigest,
		ObservedPostRenderersDigest: prev.ObservedPostRenderersDigest,
	}
	if latest := s.History.Latest(); latest != nil && latest.Status == "deployed" {
		st.LastAppliedRevision = latest.ChartVersion
	}
	for _, c := range s.Conditions {
		st.Conditions = append(st.Conditions, reconcile.Condition{Type: c.Type, Status: c.Status == "True", Reason: c.Reason, Message: c.Message})
	}
	for _, h := range s.History {
		snap := reconcile.Snapshot{
			Name: h.Name, Namespace: h.Namespace, Version: h.Version, Status: h.Status, Action: reconcile.ReleaseAction(h.Action),
			ChartName: h.ChartName, ChartVersion: h.ChartVersion, AppVersion: h.AppVersion,
			FirstDeployed: h.FirstDeployed.Time, LastDeployed: h.LastDeployed.Time, Deleted: h.Deleted.Time,
		}
		if h.TestHooks != nil {
			snap.TestHooks = map[string]reconcile.TestHook{}
			for name, th := range *h.TestHooks {
				snap.TestHooks[name] = reconcile.TestHook{LastStarted: th.LastStarted.Time, LastCompleted: th.LastCompleted.Time, Phase: th.Phase}
			}
		}
		st.History = append(st.History, snap)
	}
	return st
}

// keepHandled keeps force_at and reset_at handled once the controller
// handled them, when it handled a request of the helmrelease_force or
// helmrelease_reset action after them: its status then names the
// action's token, and the configuration's must not be asked again.
func keepHandled(st, prev *reconcile.Status, spec *reconcile.Spec) *reconcile.Status {
	if spec.ForceAt != "" && prev.LastHandledForceAt == spec.ForceAt {
		st.LastHandledForceAt = spec.ForceAt
	}
	if spec.ResetAt != "" && prev.LastHandledResetAt == spec.ResetAt {
		st.LastHandledResetAt = spec.ResetAt
	}
	return st
}

// remove deletes the HelmRelease, with or without the controller's
// uninstall as flux.uninstall_on_destroy says, and what was written for it.
func (f fluxEngine) remove(ctx context.Context, m *releaseModel, _ privateGetter, resp *resource.DeleteResponse) {
	r, diags := f.r, &resp.Diagnostics
	spec := m.spec(ctx, diags)
	_, uninstall := m.fluxSettings(ctx, diags)
	if diags.HasError() {
		return
	}
	fe := r.fluxClient(m, diags)
	if fe == nil {
		return
	}
	timeout := spec.UninstallTimeout() + time.Minute
	err := fe.Delete(ctx, spec.Namespace, spec.Name, uninstall, timeout)
	if cleanupLeft(diags, err, m.ID.ValueString(), spec.Namespace) {
		err = nil
	}
	if err != nil {
		diags.AddError("HelmRelease not deleted", fmt.Sprintf("helmrelease_release %s: %s.\n\nThe resource is kept. Check that helm-controller runs; a failing pre-delete hook can be skipped with uninstall.disable_hooks = true, a timeout raised with uninstall.timeout; then destroy again.", m.ID.ValueString(), err))
		return
	}
	if !uninstall {
		diags.AddWarning("Release left installed",
			fmt.Sprintf("helmrelease_release %s: flux.uninstall_on_destroy is false, so the HelmRelease was suspended and deleted and the Helm release %s/%s is left installed, managed by nothing.\n\nUninstall it with helm when it is no longer needed, or import it into a helmrelease_release.", m.ID.ValueString(), spec.GetStorageNamespace(), spec.GetReleaseName()))
	}
}

// cleanupLeft warns, and reports true, when err is only the failure to
// let go the chart sources and Secrets the release no longer uses: what
// it wrote or deleted stands.
func cleanupLeft(diags *diag.Diagnostics, err error, id, namespace string) bool {
	var cleanup *flux.CleanupError
	if !errors.As(err, &cleanup) {
		return false
	}
	diags.AddWarning("Unused chart sources left",
		fmt.Sprintf("helmrelease_release %s: letting go the chart sources and Secrets the release no longer uses failed: %s.\n\nKubernetes' garbage collector deletes them with their last HelmRelease; the provider's credentials need list on HelmRepositories in namespace %q (see the guide \"Handing releases to Flux\").", id, cleanup.Err, namespace))
	return true
}

// read refreshes a release handed to Flux: the controller's status of
// the HelmRelease, the objects of the release as stored. A HelmRelease
// changed by someone else since the last apply is marked not ready, so
// that the plan writes it back; one deleted removes the resource (the
// controller uninstalled the release, or will), so that the plan makes it
// again.
func (f fluxEngine) read(ctx context.Context, m *releaseModel, private privateGetter, resp *resource.ReadResponse) {
	r := f.r
	diags := &resp.Diagnostics
	spec := m.spec(ctx, diags)
	red := r.redactorFor(ctx, m, writeOnly{})
	ctx = red.context(ctx)
	defer red.finish(ctx, &resp.State, diags)
	fe := r.fluxClient(m, diags)
	if fe == nil {
		return
	}
	hr, err := fe.Get(ctx, spec.Namespace, spec.Name)
	if err != nil {
		diags.AddError("HelmRelease not readable", fmt.Sprintf("helmrelease_release %s: %s.\n\nThe state is kept as it is; check that the cluster is reachable and the provider's credentials may read HelmReleases in namespace %q, then refresh again.", m.ID.ValueString(), err, spec.Namespace))
		return
	}
	if hr == nil {
		if m.Status.IsNull() {
			diags.AddError("HelmRelease not found", fmt.Sprintf("No HelmRelease %s/%s exists to import.\n\nCheck the import ID and the namespace.", spec.Namespace, spec.Name))
			return
		}
		resp.State.RemoveResource(ctx)
		return
	}
	prev, d := statusOf(ctx, m.Status)
	diags.Append(d...)
	st := keepHandled(fluxStatus(hr, prev), prev, spec)
	raw, d := private.GetKey(ctx, privateFlux)
	diags.Append(d...)
	var w fluxWritten
	if len(raw) > 0 && json.Unmarshal(raw, &w) == nil && w.Generation != hr.Generation {
		st.SetCondition(reconcile.Condition{Type: reconcile.ConditionReady, Status: false, Reason: reasonChangedOutside,
			Message: fmt.Sprintf("HelmRelease %s/%s was changed outside Terraform (generation %d, written at %d): the next apply writes it back", spec.Namespace, spec.Name, hr.Generation, w.Generation)})
	}
	ctx, e := r.newEngine(ctx, m, spec, red, diags)
	if e == nil {
		return
	}
	e.Key = secretHashKeyOf(ctx, private, resp.Private, diags)
	latest, err := e.Helm.LastRelease(spec.GetReleaseName())
	if err != nil {
		diags.AddWarning("Release objects not readable", err.Error())
	} else {
		m.Resources = r.deployedResources(ctx, e, latest, readSensitivePaths(ctx, private, latest, red, diags), diags)
		m.Notes, m.Description = releaseInfo(latest, nil, m.Notes, m.Description)
	}
	status, d := statusObject(ctx, st)
	diags.Append(d...)
	m.Status = status
	m.PlannedAction = types.StringNull()
	m.PlannedHooks, m.PlannedCRDs = types.MapNull(types.StringType), types.MapNull(types.StringType)
	m.PlannedChanges = types.MapNull(types.StringType)
	diags.Append(setRelease(ctx, &resp.State.Raw, m)...)
}

// reasonChangedOutside: the HelmRelease was changed by someone else.
const reasonChangedOutside = "ChangedOutsideTerraform"

// releaseFromFlux makes Flux's controller let go of the release of a
// resource that was handed to it, without uninstalling it (suspend, then
// delete the HelmRelease and what was written for it); false with a
// diagnostic when it could not.
func (r *releaseResource) releaseFromFlux(ctx context.Context, previous *releaseModel, diags *diag.Diagnostics) bool {
	spec := previous.spec(ctx, diags)
	fe := r.fluxClient(previous, diags)
	if fe == nil {
		return false
	}
	err := fe.Delete(ctx, spec.Namespace, spec.Name, false, 2*time.Minute)
	if cleanupLeft(diags, err, previous.ID.ValueString(), spec.Namespace) {
		err = nil
	}
	if err != nil {
		diags.AddError("Release not taken back from Flux", fmt.Sprintf("helmrelease_release %s: %s.\n\nNothing was uninstalled. Check that helm-controller runs (it must see the HelmRelease suspended before it is deleted), then apply again.", previous.ID.ValueString(), err))
		return false
	}
	return true
}
