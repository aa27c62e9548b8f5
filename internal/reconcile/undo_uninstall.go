package reconcile

import (
	"context"
	"fmt"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
)

// UndoUninstall takes back a release left `uninstalling` by an uninstall
// that failed (a pre-delete hook) or was interrupted, while the resource is
// still configured: it rolls the release back onto the revision it was
// uninstalling, which recreates whatever the uninstall already deleted and
// leaves a deployed revision that upgrades can follow (Helm upgrades no
// release whose last revision is `uninstalling`). Only an uninstall no
// other operation may be running is undone: one this resource ran (its
// status holds the uninstalling revision with the same digest), one this
// engine ran, or one older than the uninstall timeout. It counts no
// failure: the uninstall was not a release action.
type UndoUninstall struct{ e *Reconciler }

func (a *UndoUninstall) Name() string     { return "undo-uninstall" }
func (a *UndoUninstall) Type() ActionType { return TypeUnlock }

func (a *UndoUninstall) Reconcile(ctx context.Context, req *Request) error {
	s, st := req.Spec, req.Status
	rel, err := a.e.Helm.LastRelease(s.GetReleaseName())
	if err != nil {
		return err
	}
	if rel == nil || rel.Info.Status != helm.StatusUninstalling {
		return nil
	}
	own := false
	if cur := st.Latest(); cur != nil && cur.Targets(rel.Name, rel.Namespace, rel.Version) {
		same, err := a.e.Digests().SameRelease(cur.Digest, rel)
		own = err == nil && same
	}
	since, timeout := rel.Info.Deleted, s.UninstallTimeout()
	if age := a.e.now().Sub(since); !own && age < timeout && !a.e.wrote(rel) {
		return fmt.Errorf("release %s is uninstalling since %s, within the uninstall timeout of %s: another operation may still run it; retry after %s",
			releaseRef(req), since.UTC().Format("15:04:05"), timeout, since.Add(timeout).UTC().Format("15:04:05"))
	}
	digest := ""
	for _, snap := range st.History {
		if snap.Targets(rel.Name, rel.Namespace, rel.Version) {
			digest = snap.ChartDigest
		}
	}
	err = a.e.Helm.Rollback(s.GetReleaseName(), helm.RollbackOptions{
		Version:     rel.Version,
		Timeout:     s.RollbackTimeout(),
		Wait:        !s.Rollback.DisableWait,
		WaitForJobs: !s.Rollback.DisableWaitForJobs,
		Force:       s.Rollback.Force,
		MaxHistory:  s.GetMaxHistory(),
		ApplyMethod: applyMethod(s.Rollback.ServerSideApply),
		Poller:      s.poller(ctx),
	})
	if _, rerr := a.e.recordObserved(req, digest, ActionRollback); rerr != nil && err == nil {
		err = rerr
	}
	if err != nil {
		return a.e.failure("taking back release %s from its failed uninstall", err, releaseRef(req))
	}
	a.e.logger().Info("took back a release from its failed uninstall", "release", releaseRef(req), "revision", rel.Version)
	return nil
}
