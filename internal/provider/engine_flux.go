package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/flux"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/postrender"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// fluxEngine hands releases to Flux's helm-controller (engine = "flux"):
// the apply writes a HelmRelease with its chart source and Secrets, and
// waits for the controller's result.
type fluxEngine struct{ r *releaseResource }

func (fluxEngine) name() string { return engineFlux }

// spec is the reconciler's view of m, rendered as helm-controller renders
// it: its objects carry the controller's origin labels.
func (fluxEngine) spec(ctx context.Context, m *releaseModel, diags *diag.Diagnostics) *reconcile.Spec {
	s := m.spec(ctx, diags)
	s.OriginGroup = postrender.FluxOriginGroup
	return s
}

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

// client is the Flux client of m's cluster; nil with a diagnostic when
// the cluster cannot be used or lacks Flux's kinds.
// getter is the Kubernetes client getter of m's cluster, with the
// provider's credentials.
func (f fluxEngine) getter(m *releaseModel, diags *diag.Diagnostics) *kube.Getter {
	c := f.r.clusterOf(m, diags)
	if c == nil {
		return nil
	}
	cfg, err := c.clients.RESTConfig()
	if err != nil {
		clusterUnavailable(diags, path.Root("engine"), err)
		return nil
	}
	return kube.NewGetter(cfg, m.Namespace.ValueString(), "", c.discovery(cfg, ""))
}

func (f fluxEngine) client(m *releaseModel, diags *diag.Diagnostics) *flux.Client {
	c := f.r.clusterOf(m, diags)
	if c == nil {
		return nil
	}
	e, err := c.fluxClient()
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

// release is the release of m as Flux objects, with the values the
// controller will compose.
func (f fluxEngine) release(ctx context.Context, m *releaseModel, wo writeOnly, spec *reconcile.Spec, resolved *chartsource.Resolved, diags *diag.Diagnostics) *flux.Release {
	var src chartsource.Source
	var verifySecret string
	if ref := m.chartRef(ctx, diags); ref != nil {
		// The object is the controller's source: nothing of it is written.
		src = chartsource.Source{Name: resolved.Name(), ChartRef: ref}
	} else {
		c := objectAs[releaseChartModel](ctx, m.Chart, path.Root("chart"), diags)
		if c == nil {
			return nil
		}
		var d diag.Diagnostics
		src, d = c.source(ctx, f.r.data)
		diags.Append(d...)
		wo.credentials(&src)
		// The controller gets the login's current token, which expires in
		// the credentials Secret (the guide says so).
		auth, err := src.Auth.Concrete(ctx, src.Repository)
		if err != nil {
			chartError(diags, path.Root("chart"), err)
			return nil
		}
		src.Auth = auth
		if c.Verify != nil && !c.Verify.SecretRef.IsNull() {
			if ref := c.Verify.secretRef(ctx, m.Namespace.ValueString(), diags); ref != nil {
				verifySecret = ref.Name.ValueString()
			}
		}
	}
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
		Chart:           flux.Chart{Source: src, Version: resolved.Version, Digest: resolved.Digest, SourceRevision: resolved.SourceRevision},
		Values:          inline,
		SensitiveValues: sensitive,
		ValuesFrom:      valuesReferences(refs),
		Interval:        interval,
		Suspend:         m.Suspend.ValueBool(),
		VerifySecret:    verifySecret,
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

// fluxStatus is the controller's status of hr, with the digests prev
// holds of what this provider asked: the controller's digests of values
// are plain hashes, which would let a reader of the state test guesses of
// secret values, and are not kept. Chart versions are written as the plan
// resolves them (flux.Client.AsPlanned).
func fluxStatus(hr *helmv2.HelmRelease, prev *reconcile.Status, asPlanned func(string) string) *reconcile.Status {
	s := hr.Status
	st := &reconcile.Status{
		Failures:                    s.Failures,
		InstallFailures:             s.InstallFailures,
		UpgradeFailures:             s.UpgradeFailures,
		LastAttemptedRevision:       asPlanned(s.LastAttemptedRevision),
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
		st.LastAppliedRevision = asPlanned(latest.ChartVersion)
	}
	for _, c := range s.Conditions {
		st.Conditions = append(st.Conditions, reconcile.Condition{Type: c.Type, Status: c.Status == "True", Reason: c.Reason, Message: c.Message})
	}
	if c := prev.Condition(conditionSourceVerified); c != nil {
		// The provider's verification at the last apply: the HelmRelease
		// has no such condition (its source has).
		st.SetCondition(*c)
	}
	for _, h := range s.History {
		snap := reconcile.Snapshot{
			Name: h.Name, Namespace: h.Namespace, Version: h.Version, Status: h.Status, Action: reconcile.ReleaseAction(h.Action),
			ChartName: h.ChartName, ChartVersion: asPlanned(h.ChartVersion), AppVersion: h.AppVersion,
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

// cleanupLeft warns, and reports true, when err is only the failure to
// let go the chart sources and Secrets the release no longer uses: what
// it wrote or deleted stands.
func cleanupLeft(diags *diag.Diagnostics, err error, id, namespace string) bool {
	var cleanup *flux.CleanupError
	if !errors.As(err, &cleanup) {
		return false
	}
	diags.AddWarning("Unused chart sources left",
		fmt.Sprintf("helmrelease_release %s: letting go the chart sources and Secrets the release no longer uses failed: %s.\n\nKubernetes' garbage collector deletes them with their last HelmRelease; the provider's credentials need list on HelmRepositories and HelmCharts in namespace %q (see the guide \"Handing releases to Flux\").", id, cleanup.Err, namespace))
	return true
}
