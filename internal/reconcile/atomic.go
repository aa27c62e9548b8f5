package reconcile

import (
	"context"
	"errors"
	"fmt"
)

// ErrRetriesExhausted: the release failed and no retry remains. Changing the
// chart, the values or reset_at resets the counters; force_at forces one
// more attempt.
var ErrRetriesExhausted = errors.New("retries exhausted")

// ErrRetryNextRun: the install or upgrade failed under the RetryOnFailure
// strategy. Nothing was remediated; the next run upgrades the release
// again, whatever the failure counters say.
var ErrRetryNextRun = errors.New("not remediated: the strategy RetryOnFailure retries at the next run")

// maxSteps bounds the atomic loop, so that it never spins: unlimited
// retries end a run after this many actions, and the next run goes on from
// the recorded status.
const maxSteps = 64

// Reconcile runs the atomic release loop: it decides the state of the
// release, runs the action that state calls for, and repeats until the
// release is in sync or remediation is exhausted.
//
//	state       action
//	Absent      install (unless install retries are exhausted)
//	Unmanaged   upgrade (unless upgrade retries are exhausted)
//	OutOfSync   upgrade (unless upgrade retries are exhausted)
//	Locked      unlock (only a stale lock)
//	Uninstalling roll back onto itself (a failed or interrupted uninstall)
//	Untested    test
//	Failed      rollback or uninstall remediation, while retries remain
//	            or the last failure must be remediated; with the strategy
//	            RetryOnFailure an upgrade, once per run
//	Drifted     correct drift
//	InSync      none: done
//
// A chart whose name changed, under the Reinstall strategy, uninstalls
// the release first (helm-controller's release target change). A force
// token not yet handled forces one install or upgrade; a reset
// token not yet handled, or a new chart version or config digest, resets
// the failure counters first.
func (e *Reconciler) Reconcile(ctx context.Context, req *Request, detect DriftDetector) error {
	st, s := req.Status, req.Spec
	if st.HasPlainDigests() {
		history, err := e.Helm.History(s.GetReleaseName())
		if err != nil {
			return err
		}
		if err := e.Digests().Upgrade(st, history, req.Values); err != nil {
			return fmt.Errorf("reconciling release %s: %w", releaseRef(req), err)
		}
	}
	digest, err := e.Digests().Config(req.Values)
	if err != nil {
		return fmt.Errorf("reconciling release %s: %w", releaseRef(req), err)
	}
	req.configDigest = digest
	want := Desired{
		Spec:                s,
		ChartName:           req.Chart.Metadata.Name,
		ChartVersion:        req.Chart.Metadata.Version,
		ChartDigest:         req.ChartDigest,
		ConfigDigest:        digest,
		Digests:             e.Digests(),
		PostRenderersDigest: e.Digests().PostRenderers(s),
		OptionsDigest:       OptionsDigest(s),
	}
	StartAttempt(st, want)
	force := s.ForceAt != "" && s.ForceAt != st.LastHandledForceAt

	if req.reinstalls() {
		// As helm-controller: the old chart's release goes first, with its
		// history and failures; the loop then installs the new chart.
		was, _ := ChartRenamed(st, want.ChartName)
		e.logger().Info("chart name changed: uninstalling the release before installing the new chart", "release", releaseRef(req), "was", was, "chart", want.ChartName)
		if _, err := e.Uninstall(ctx, s, st); err != nil {
			return fmt.Errorf("reinstalling release %s for the chart %s (was %s, upgrade.chart_name_change_strategy %s): %w", releaseRef(req), want.ChartName, was, ChartNameReinstall, err)
		}
		st.History = nil
		st.Failures, st.InstallFailures, st.UpgradeFailures = 0, 0, 0
	}
	var lastErr error
	corrected, released := false, false
	for step := 0; step < maxSteps; step++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("reconciling release %s: %w", releaseRef(req), err)
		}
		latest, err := e.Helm.LastRelease(s.GetReleaseName())
		if err != nil {
			if lastErr != nil {
				// The cluster went away after the action failed: both.
				return fmt.Errorf("%w; the action before it: %w", err, lastErr)
			}
			return err
		}
		state, err := DetermineReleaseState(ctx, latest, st, want, detect)
		if err != nil {
			return err
		}
		e.logger().Debug("release state", "release", releaseRef(req), "state", string(state.Status), "reason", state.Reason)
		MarkDrift(st, s, state)
		next, err := e.actionForState(req, state, force)
		if err != nil {
			e.markStalled(req, err, lastErr)
			if lastErr != nil {
				return fmt.Errorf("%w: %w", err, lastErr)
			}
			return err
		}
		if next == nil {
			e.markReady(req, want)
			return nil
		}
		if next.Type() == TypeDrift {
			if corrected {
				err := fmt.Errorf("release %s drifts again right after correction (%s): something in the cluster changes it back; add a drift_detection ignore rule for those fields", releaseRef(req), state.Reason)
				e.markNotReady(req, err)
				return err
			}
			corrected = true
		}
		if next.Type() == TypeRelease && released && lastErr != nil && s.RetriesOnFailure(st) {
			// As helm-controller: one release action per run after a
			// failure, the next run retries.
			err := fmt.Errorf("release %s: %w: %w", releaseRef(req), ErrRetryNextRun, lastErr)
			st.RemoveCondition(ConditionStalled) // stalled before the strategy changed
			e.markNotReady(req, err)
			return err
		}
		if next.Type() == TypeRelease {
			released = true
			force = false
			st.LastHandledForceAt = s.ForceAt
		}
		e.logger().Info("running action", "release", releaseRef(req), "action", next.Name(), "state", string(state.Status))
		if e.Logs != nil {
			e.Logs.Reset()
		}
		if !e.persistentClient && e.Kube != nil {
			// Each action sees the cluster's APIs as they are now (CRDs
			// created outside Helm's CRD lifecycle included).
			e.Kube.Invalidate()
		}
		err = next.Reconcile(ctx, req)
		req.Actions = append(req.Actions, ActionRecord{Name: next.Name(), Type: next.Type(), Err: err})
		if err != nil {
			lastErr = err
			var untouched *StorageUntouchedError
			if errors.As(err, &untouched) || next.Type() == TypeRemediate || next.Type() == TypeUnlock || next.Type() == TypeDrift {
				e.markNotReady(req, err)
				return err
			}
			e.logger().Info("action failed", "release", releaseRef(req), "action", next.Name(), "error", err.Error())
		}
	}
	return fmt.Errorf("release %s: stopped after %d actions; apply again to continue", releaseRef(req), maxSteps)
}

// actionForState picks the next action; nil means in sync.
func (e *Reconciler) actionForState(req *Request, state ReleaseState, force bool) (Action, error) {
	s, st := req.Spec, req.Status
	if force {
		switch state.Status {
		case StateAbsent:
			return &Install{e}, nil
		case StateLocked:
			return &Unlock{e}, nil
		case StateUninstalling:
			return &UndoUninstall{e}, nil
		default:
			return &Upgrade{e}, nil
		}
	}
	switch state.Status {
	case StateInSync:
		return nil, nil
	case StateLocked:
		return &Unlock{e}, nil
	case StateUninstalling:
		return &UndoUninstall{e}, nil
	case StateAbsent:
		if err := s.exhausted(state.Status, st, releaseRef(req)); err != nil {
			return nil, err
		}
		return &Install{e}, nil
	case StateUnmanaged, StateOutOfSync:
		if state.Status == StateUnmanaged && len(st.History) == 0 {
			latest, err := e.Helm.LastRelease(s.GetReleaseName())
			if err != nil {
				return nil, err
			}
			// No record of the release: never taken over silently.
			if err := CheckCreate(latest, s); err != nil {
				return nil, err
			}
		}
		if err := s.exhausted(state.Status, st, releaseRef(req)); err != nil {
			return nil, err
		}
		return &Upgrade{e}, nil
	case StateUntested:
		return &Test{e}, nil
	case StateDrifted:
		if s.Drift.Mode != DriftEnabled {
			return nil, nil // warn: reported, not corrected
		}
		return &CorrectDrift{e, state.Drift}, nil
	case StateFailed:
		if s.RetriesOnFailure(st) {
			return &Upgrade{e}, nil
		}
		if err := s.exhausted(state.Status, st, releaseRef(req)); err != nil {
			return nil, err
		}
		if s.ActiveRemediation(st).Strategy() == StrategyRollback {
			return &RollbackRemediation{e}, nil
		}
		return &UninstallRemediation{e}, nil
	default:
		return nil, fmt.Errorf("release %s is in the unknown state %q", releaseRef(req), state.Status)
	}
}

func (e *Reconciler) markReady(req *Request, want Desired) { MarkReady(req.Status, want) }

// StartAttempt records in st that a run for want begins, as Reconcile
// does before its first action: the failure counters reset (and a stall
// lifted) when the chart version, values or chart digest asked for
// changed or a reset token is new, and the reset token is handled.
func StartAttempt(st *Status, want Desired) {
	s := want.Spec
	if st.LastAttemptedRevision != want.ChartVersion || st.LastAttemptedConfigDigest != want.ConfigDigest ||
		(want.ChartDigest != "" && st.LastAttemptedRevisionDigest != "" && st.LastAttemptedRevisionDigest != want.ChartDigest) ||
		(s.ResetAt != "" && s.ResetAt != st.LastHandledResetAt) {
		st.Failures, st.InstallFailures, st.UpgradeFailures = 0, 0, 0
		st.RemoveCondition(ConditionStalled)
	}
	st.LastHandledResetAt = s.ResetAt
}

// MarkReady records in st that the release is what want asks for, as a
// run that ends in sync does: the digests and revision observed, Ready
// with the Released condition's message.
func MarkReady(st *Status, want Desired) {
	st.ObservedPostRenderersDigest = want.PostRenderersDigest
	st.ObservedOptionsDigest = want.OptionsDigest
	if cur := st.Latest(); cur != nil {
		st.LastAppliedRevision = cur.ChartVersion
	}
	// The release is what was asked for, whether an action of this run or
	// an earlier one (a rollback to these values) made it: the next plan
	// must not see an attempt still to make.
	st.LastAttemptedRevision, st.LastAttemptedConfigDigest = want.ChartVersion, want.ConfigDigest
	if want.ChartDigest != "" {
		st.LastAttemptedRevisionDigest = want.ChartDigest
	}
	msg := "release is in sync"
	if c := st.Condition(ConditionReleased); c != nil {
		msg = c.Message
	}
	st.SetCondition(Condition{Type: ConditionReady, Status: true, Reason: reasonOf(st), Message: msg})
	st.RemoveCondition(ConditionStalled)
}

// InSyncStatus is the status a run records when it finds the release
// in sync with want and runs no action (StartAttempt, MarkDrift,
// MarkReady), for a plan to show; st is left as it is. The caller knows
// the run will act on nothing: no test to run, no drift it cannot
// foresee.
func InSyncStatus(st *Status, want Desired) *Status {
	out := st.Clone()
	StartAttempt(out, want)
	MarkDrift(out, want.Spec, ReleaseState{Status: StateInSync})
	MarkReady(out, want)
	return out
}

func (e *Reconciler) markNotReady(req *Request, err error) {
	req.Status.SetCondition(Condition{Type: ConditionReady, Status: false, Reason: reasonOf(req.Status), Message: err.Error()})
}

func (e *Reconciler) markStalled(req *Request, err, last error) {
	st := req.Status
	msg := err.Error()
	if last != nil {
		msg += ": " + last.Error()
	}
	if errors.Is(err, ErrRetriesExhausted) {
		st.SetCondition(Condition{Type: ConditionStalled, Status: true, Reason: ReasonRetriesExhausted, Message: msg})
	}
	st.SetCondition(Condition{Type: ConditionReady, Status: false, Reason: reasonOf(st), Message: msg})
}

// reasonOf is the reason of the most telling condition.
func reasonOf(st *Status) string {
	for _, t := range []string{ConditionRemediated, ConditionTestSuccess, ConditionReleased} {
		if c := st.Condition(t); c != nil {
			return c.Reason
		}
	}
	return ReasonProgressing
}
