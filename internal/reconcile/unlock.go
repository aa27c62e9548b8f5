package reconcile

import (
	"context"
	"fmt"

	"helm.sh/helm/v3/pkg/release"
)

// Unlock releases a revision stuck in pending-install, -upgrade or
// -rollback by marking it failed, so that remediation can take over. Only
// a lock no other operation may hold is broken: one this engine took
// itself (its action has returned), or one older than the timeout of the
// action that took it, so that an action running elsewhere is never
// disturbed.
type Unlock struct{ e *Engine }

func (a *Unlock) Name() string     { return "unlock" }
func (a *Unlock) Type() ActionType { return TypeUnlock }

func (a *Unlock) Reconcile(_ context.Context, req *Request) error {
	s := req.Spec
	rel, err := a.e.Helm.LastRelease(s.GetReleaseName())
	if err != nil {
		return err
	}
	if rel == nil || !rel.Info.Status.IsPending() {
		return nil
	}
	timeout := s.UpgradeTimeout()
	switch rel.Info.Status {
	case release.StatusPendingInstall:
		timeout = s.InstallTimeout()
	case release.StatusPendingRollback:
		timeout = s.RollbackTimeout()
	}
	since := rel.Info.LastDeployed.Time
	if age := a.e.now().Sub(since); age < timeout && !a.e.wrote(rel) {
		return fmt.Errorf("release %s is %s since %s, within the action timeout of %s: another operation may still run it; retry after %s",
			releaseRef(req), rel.Info.Status, since.UTC().Format("15:04:05"), timeout, since.Add(timeout).UTC().Format("15:04:05"))
	}
	pending := rel.Info.Status
	// The interrupted run may not have recorded its attempt: the pending
	// status says which action it was, and so which remediation applies.
	if pending == release.StatusPendingInstall {
		req.Status.LastAttemptedReleaseAction = ActionInstall
	} else {
		req.Status.LastAttemptedReleaseAction = ActionUpgrade
	}
	rel.SetStatus(release.StatusFailed, fmt.Sprintf("Release unlocked from stale state %s by helmrelease", pending))
	if err := a.e.Helm.UpdateRelease(rel); err != nil {
		return err
	}
	if _, err := a.e.recordObserved(req, ""); err != nil {
		return err
	}
	a.e.logger().Info("unlocked stale release", "release", releaseRef(req), "was", pending.String())
	return nil
}
