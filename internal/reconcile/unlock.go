package reconcile

import (
	"context"
	"fmt"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
)

// Unlock releases a revision stuck in pending-install, -upgrade or
// -rollback by marking it failed, so that remediation can take over. Only
// a lock no other operation may hold is broken: one this engine took
// itself (its action has returned), one this resource left behind in an
// earlier run that was killed (see ownLock), or one older than the timeout
// of the action that took it, so that an action running elsewhere is never
// disturbed.
type Unlock struct{ e *Reconciler }

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
	case helm.StatusPendingInstall:
		timeout = s.InstallTimeout()
	case helm.StatusPendingRollback:
		timeout = s.RollbackTimeout()
	}
	since := rel.Info.LastDeployed
	own, err := ownLock(a.e.Helm, a.e.Digests(), rel, req)
	if err != nil {
		return err
	}
	if age := a.e.now().Sub(since); age < timeout && !a.e.wrote(rel) && !own {
		return fmt.Errorf("release %s is %s, run by %s, since %s, within the action timeout of %s: another operation may still run it; retry after %s",
			releaseRef(req), rel.Info.Status, LockHolder(rel), since.UTC().Format("15:04:05"), timeout, since.Add(timeout).UTC().Format("15:04:05"))
	}
	pending := rel.Info.Status
	// The interrupted run may not have recorded its attempt: the pending
	// status says which action it was, and so which remediation applies.
	if pending == helm.StatusPendingInstall {
		req.Status.LastAttemptedReleaseAction = ActionInstall
	} else {
		req.Status.LastAttemptedReleaseAction = ActionUpgrade
	}
	rel.SetStatus(helm.StatusFailed, fmt.Sprintf("Release unlocked from stale state %s by helmrelease", pending))
	if err := a.e.Helm.UpdateRelease(rel); err != nil {
		return err
	}
	if _, err := a.e.recordObserved(req, "", ""); err != nil {
		return err
	}
	a.e.logger().Info("unlocked stale release", "release", releaseRef(req), "was", pending.String())
	return nil
}

// ownLock reports whether a pending revision was left by an earlier run of
// this resource that holds it no more, which the state cannot always say
// (a killed run saved nothing). Two things must hold: the revision's
// objects carry this resource's origin labels and no other's, and it
// continues the history this resource recorded: it is the revision after
// the last one recorded, whose stored digest is still the recorded one; or
// the recorded revision itself (written by a run that returned but could
// not unlock it, the cluster gone); or this resource recorded none (an
// install killed before the resource reached the state). A live run of the
// same resource would hold Terraform's state lock.
func ownLock(h helm.Actions, d Digests, rel *helm.Release, req *Request) (bool, error) {
	owners := origins(rel.Manifest)
	if len(owners) != 1 || !owners[req.Spec.Namespace+"/"+req.Spec.Name] {
		return false, nil
	}
	cur := req.Status.Latest()
	switch {
	case cur == nil:
		return true, nil
	case cur.Targets(rel.Name, rel.Namespace, rel.Version):
		// A run of this resource that returned wrote it (its action
		// failed with the cluster unreachable and could not unlock).
		return true, nil
	case !cur.Targets(rel.Name, rel.Namespace, rel.Version-1):
		return false, nil
	}
	history, err := h.History(rel.Name)
	if err != nil {
		return false, err
	}
	for _, prev := range history {
		if prev.Version != cur.Version {
			continue
		}
		return d.SameRelease(cur.Digest, prev)
	}
	return false, nil
}
