package flux

import (
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// StatusOf is the controller's status of hr, with the digests prev holds
// of what the provider asked: the controller's digests of values are
// plain hashes, which would let a reader of the state test guesses of
// secret values, and are not kept. Chart versions go through asPlanned
// (Client.AsPlanned), so that they read as the plan resolved them. The
// SourceVerified condition of prev, the provider's own verification at
// the last apply, is kept: a HelmRelease has no such condition (its source
// has).
func StatusOf(hr *helmv2.HelmRelease, prev *reconcile.Status, asPlanned func(string) string) *reconcile.Status {
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
	if c := prev.Condition(reconcile.ConditionSourceVerified); c != nil {
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

// Finished reports whether the controller has ended a reconcile of hr's
// generation and reconcile request; until then it is at work on them
// (waiting for dependencies or the chart included).
func Finished(hr *helmv2.HelmRelease) bool {
	requested, _ := meta.ReconcileAnnotationValue(hr.GetAnnotations())
	return hr.Status.ObservedGeneration >= hr.Generation && (requested == "" || hr.Status.LastHandledReconcileAt == requested)
}

// Unfinished completes st, the status of hr, a HelmRelease handed to the
// controller without waiting for it (flux.wait = false) that it has not
// finished (Finished): marked Reconciling, as the controller marks a
// release it is at work on, and, until the controller attempts the
// generation, with prev's last attempted revision, the one handed over.
func Unfinished(st, prev *reconcile.Status, hr *helmv2.HelmRelease) {
	if hr.Status.LastAttemptedGeneration < hr.Generation && prev.LastAttemptedRevision != "" {
		st.LastAttemptedRevision, st.LastAttemptedRevisionDigest = prev.LastAttemptedRevision, prev.LastAttemptedRevisionDigest
	}
	if c := st.Condition(meta.ReconcilingCondition); c != nil && c.Status && c.Reason == meta.ProgressingReason {
		return
	}
	msg := fmt.Sprintf("helm-controller has not finished reconciling generation %d of the HelmRelease", hr.Generation)
	if ready := st.Condition(reconcile.ConditionReady); ready != nil && ready.Message != "" {
		msg += " (" + ready.Reason + ": " + ready.Message + ")"
	}
	st.SetCondition(reconcile.Condition{Type: meta.ReconcilingCondition, Status: true, Reason: meta.ProgressingReason, Message: msg})
}

// KeepHandled keeps spec's force and reset tokens handled in st once prev
// had them handled: the controller handled a request of the force or
// reset action after them, its status then names the action's token, and
// spec's must not be asked again.
func KeepHandled(st, prev *reconcile.Status, spec *reconcile.Spec) *reconcile.Status {
	if spec.ForceAt != "" && prev.LastHandledForceAt == spec.ForceAt {
		st.LastHandledForceAt = spec.ForceAt
	}
	if spec.ResetAt != "" && prev.LastHandledResetAt == spec.ResetAt {
		st.LastHandledResetAt = spec.ResetAt
	}
	return st
}

// RequestToken is the reconcile request of an apply: a force or reset
// token of spec not handled yet (Flux acts on them only with a request of
// the same value), else a new one, the time now.
func RequestToken(spec *reconcile.Spec, st *reconcile.Status) string {
	switch {
	case spec.ForceAt != "" && spec.ForceAt != st.LastHandledForceAt:
		return spec.ForceAt
	case spec.ResetAt != "" && spec.ResetAt != st.LastHandledResetAt:
		return spec.ResetAt
	}
	return time.Now().UTC().Format(time.RFC3339Nano)
}

// WaitTimeout is how long an apply waits for the controller: the install
// (a release st records none of) or upgrade, the tests, a remediation, and
// a minute for the chart source and the controller's queue.
func WaitTimeout(spec *reconcile.Spec, st *reconcile.Status) time.Duration {
	t := spec.UpgradeTimeout()
	if st.Latest() == nil {
		t = spec.InstallTimeout()
	}
	if spec.Test.Enable {
		t += spec.TestTimeout()
	}
	return t + max(spec.RollbackTimeout(), spec.UninstallTimeout()) + time.Minute
}
