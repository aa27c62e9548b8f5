package reconcile

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
)

// errNoRollbackTarget: no earlier successful revision to roll back to.
var errNoRollbackTarget = errors.New("no earlier successful revision to roll back to")

// RollbackRemediation remediates a failed upgrade by rolling back to the
// newest earlier revision that was deployed successfully. On success the
// Remediated condition is True; on failure it is False and Failures grows.
type RollbackRemediation struct{ e *Reconciler }

func (a *RollbackRemediation) Name() string     { return "rollback" }
func (a *RollbackRemediation) Type() ActionType { return TypeRemediate }

func (a *RollbackRemediation) Reconcile(ctx context.Context, req *Request) error {
	s, st := req.Spec, req.Status
	target := rollbackTarget(st)
	if target == nil {
		return a.fail(req, errNoRollbackTarget)
	}
	started := time.Now()
	stop := a.e.watchProgress(ctx, req, "rollback", s.RollbackTimeout(), !s.Rollback.DisableWaitForJobs)
	err := a.e.Helm.Rollback(s.GetReleaseName(), helm.RollbackOptions{
		Version:       target.Version,
		Timeout:       s.RollbackTimeout(),
		Wait:          !s.Rollback.DisableWait,
		WaitForJobs:   !s.Rollback.DisableWaitForJobs,
		DisableHooks:  s.Rollback.DisableHooks,
		Force:         s.Rollback.Force,
		ApplyMethod:   applyMethod(s.Rollback.ServerSideApply),
		CleanupOnFail: s.Rollback.CleanupOnFail,
		MaxHistory:    s.GetMaxHistory(),
		Poller:        s.poller(ctx),
	})
	stop()
	if _, rerr := a.e.recordObserved(req, target.ChartDigest, ActionRollback); rerr != nil && err == nil {
		err = rerr
	}
	if err != nil {
		return a.fail(req, a.e.explainFailure(ctx, req, err, started, s.RollbackTimeout(), !s.Rollback.DisableWaitForJobs))
	}
	st.SetCondition(Condition{Type: ConditionRemediated, Status: true, Reason: ReasonRollbackSucceeded,
		Message: fmt.Sprintf(fmtRollbackSuccess, fmt.Sprintf("%s.v%d", releaseRef(req), target.Version), target.ChartName+"@"+target.ChartVersion)})
	return nil
}

func (a *RollbackRemediation) fail(req *Request, err error) error {
	st := req.Status
	st.Failures++
	st.SetCondition(Condition{Type: ConditionRemediated, Status: false, Reason: ReasonRollbackFailed,
		Message: fmt.Sprintf(fmtRollbackFailure, releaseRef(req), chartRef(req), err)})
	return a.e.failure("Helm rollback of release %s failed", err, releaseRef(req))
}

// rollbackTarget is the newest snapshot after the latest whose revision
// was deployed successfully (now superseded or deployed).
func rollbackTarget(st *Status) *Snapshot {
	for i := 1; i < len(st.History); i++ {
		switch st.History[i].Status {
		case helm.StatusSuperseded.String(), helm.StatusDeployed.String():
			return &st.History[i]
		}
	}
	return nil
}
