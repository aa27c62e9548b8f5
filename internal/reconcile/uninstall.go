package reconcile

import (
	"context"
	"fmt"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
)

// Uninstall removes the release for good (the resource is destroyed), per
// spec.uninstall. A release that does not exist is already uninstalled. A
// failed uninstall is an error; the release and its status stay, so that
// the user can fix the cause and destroy again: the status records the
// revision the failed uninstall left (uninstalling), which tells a later
// run that the uninstall was this resource's own (UndoUninstall).
// It returns what the uninstall left in the cluster by design (see
// leftBehind).
func (e *Reconciler) Uninstall(ctx context.Context, spec *Spec, st *Status) ([]LeftBehind, error) {
	name := spec.GetReleaseName()
	rel, err := e.Helm.LastRelease(name)
	if err != nil {
		return nil, err
	}
	if rel == nil || rel.Info.Status == helm.StatusUninstalled {
		return nil, nil
	}
	if e.Logs != nil {
		e.Logs.Reset()
	}
	done, err := e.Helm.Uninstall(name, uninstallOptions(ctx, spec, "Uninstalled by helmrelease"))
	if _, rerr := e.recordObserved(&Request{Spec: spec, Status: st}, "", ActionUninstall); rerr != nil && err == nil {
		err = rerr
	}
	if err != nil && !helm.IsReleaseNotFound(err) {
		st.SetCondition(Condition{Type: ConditionReady, Status: false, Reason: ReasonUninstallFailed,
			Message: fmt.Sprintf("Helm uninstall failed for release %s/%s: %s", spec.GetStorageNamespace(), name, err)})
		return nil, e.failure("Helm uninstall failed for release %s/%s", err, spec.GetStorageNamespace(), name)
	}
	if !spec.Uninstall.KeepHistory {
		st.History = nil
	}
	e.logger().Info("uninstalled release", "release", spec.GetStorageNamespace()+"/"+name, "keep_history", spec.Uninstall.KeepHistory)
	cs, err := e.Helm.Clientset()
	if err != nil {
		return nil, nil //nolint:nilerr // the list informs; the uninstall succeeded
	}
	ctx, cancel := context.WithTimeout(ctx, explainTimeout)
	defer cancel()
	left := leftBehind(ctx, cs, rel)
	if done != nil {
		left = append(left, notOwned(rel, done.NotOwned)...)
	}
	return left, nil
}
