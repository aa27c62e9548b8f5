package reconcile

import (
	"context"
	"fmt"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
)

// UninstallRemediation remediates a failed install (or an upgrade with the
// uninstall strategy) by uninstalling the release per spec.uninstall, after
// which an install takes over. On success the Remediated condition is
// True; on failure it is False and Failures grows.
type UninstallRemediation struct{ e *Reconciler }

func (a *UninstallRemediation) Name() string     { return "uninstall remediation" }
func (a *UninstallRemediation) Type() ActionType { return TypeRemediate }

func (a *UninstallRemediation) Reconcile(ctx context.Context, req *Request) error {
	s, st := req.Spec, req.Status
	_, err := a.e.Helm.Uninstall(s.GetReleaseName(), uninstallOptions(ctx, s, "Uninstalled by helmrelease to remediate a failure"))
	if _, rerr := a.e.recordObserved(req, "", ActionUninstallRemediation); rerr != nil && err == nil {
		err = rerr
	}
	if err != nil && !helm.IsReleaseNotFound(err) {
		st.Failures++
		st.SetCondition(Condition{Type: ConditionRemediated, Status: false, Reason: ReasonUninstallFailed,
			Message: fmt.Sprintf(fmtUninstallFailure, releaseRef(req), chartRef(req), err)})
		return a.e.failure("Helm uninstall of release %s failed", err, releaseRef(req))
	}
	if !s.Uninstall.KeepHistory {
		st.History = nil // the storage holds no revision any more
	}
	st.SetCondition(Condition{Type: ConditionRemediated, Status: true, Reason: ReasonUninstallSucceeded,
		Message: fmt.Sprintf(fmtUninstallSuccess, releaseRef(req), chartRef(req))})
	return nil
}

// uninstallOptions are the options of an uninstall per spec.uninstall,
// waited for with the spec's wait strategy, as the install was.
func uninstallOptions(ctx context.Context, s *Spec, description string) helm.UninstallOptions {
	propagation := s.Uninstall.DeletionPropagation
	if propagation == "" {
		propagation = "background"
	}
	return helm.UninstallOptions{
		Timeout:             s.UninstallTimeout(),
		Wait:                !s.Uninstall.DisableWait,
		DisableHooks:        s.Uninstall.DisableHooks,
		KeepHistory:         s.Uninstall.KeepHistory,
		DeletionPropagation: propagation,
		Description:         description,
		Poller:              s.poller(ctx),
	}
}
