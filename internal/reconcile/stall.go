package reconcile

import (
	"fmt"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
)

// exhausted returns the ErrRetriesExhausted error that stops the action a
// release in state calls for, given st's failure counters, or nil when the
// action may run. Only Absent, Unmanaged, OutOfSync and Failed have a
// retry budget; under RetryOnFailure a Failed release has none (as in
// helm-controller, Absent and OutOfSync keep theirs).
func (s *Spec) exhausted(state ReleaseStatus, st *Status, ref string) error {
	switch state {
	case StateAbsent:
		if r := s.Install.Remediation.Retries; r >= 0 && st.InstallFailures > int64(r) {
			return fmt.Errorf("%w: install of release %s failed %d times", ErrRetriesExhausted, ref, st.InstallFailures)
		}
	case StateUnmanaged, StateOutOfSync:
		if r := s.Upgrade.Remediation.Retries; r >= 0 && st.UpgradeFailures > int64(r) {
			return fmt.Errorf("%w: upgrade of release %s failed %d times", ErrRetriesExhausted, ref, st.UpgradeFailures)
		}
	case StateFailed:
		if s.RetriesOnFailure(st) {
			return nil
		}
		remediation := s.ActiveRemediation(st)
		if remediation.RetriesExhausted(st) && !remediation.MustRemediateLastFailure() {
			return fmt.Errorf("%w: %s of release %s failed %d times and the last failure is not remediated",
				ErrRetriesExhausted, remediation.Action, ref, remediation.Failures(st))
		}
		if c := st.Condition(ConditionRemediated); c != nil && c.Status && remediation.RetriesExhausted(st) {
			return fmt.Errorf("%w: %s of release %s failed %d times", ErrRetriesExhausted, remediation.Action, ref, remediation.Failures(st))
		}
	}
	return nil
}

// Stalls returns the ErrRetriesExhausted error a run with spec s would
// stop with at once on the release st records, or nil when it would act.
// It reads the state from st alone (no cluster): what a plan knows of a
// stalled release, to tell which setting lets it move again.
func (s *Spec) Stalls(st *Status) error {
	return s.exhausted(recordedState(s, st), st, s.GetStorageNamespace()+"/"+s.GetReleaseName())
}

// recordedState is the state of the release as st last recorded it.
func recordedState(s *Spec, st *Status) ReleaseStatus {
	cur := st.Latest()
	switch {
	case cur == nil || cur.Status == helm.StatusUninstalled.String():
		return StateAbsent
	case cur.Status == helm.StatusFailed.String():
		return StateFailed
	case s.Test.Enable && cur.HasTestInPhase(helm.HookPhaseFailed) && !s.ActiveRemediation(st).MustIgnoreTestFailures():
		return StateFailed
	}
	return StateOutOfSync
}
