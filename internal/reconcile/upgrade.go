package reconcile

import (
	"context"
	"fmt"
	"time"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
)

// Upgrade upgrades the release to the chart and values of the request. It
// records the attempt first. On success the Released condition is True; on
// failure it is False and Failures and UpgradeFailures grow by one. The
// releases Helm wrote become snapshots either way. A success under
// RetryOnFailure clears the failure counters.
type Upgrade struct{ e *Reconciler }

func (a *Upgrade) Name() string     { return "upgrade" }
func (a *Upgrade) Type() ActionType { return TypeRelease }

func (a *Upgrade) Reconcile(ctx context.Context, req *Request) error {
	s, st := req.Spec, req.Status
	// A new attempt: the remediation of an earlier failure is history.
	st.RemoveCondition(ConditionRemediated)
	recordAttempt(req, ActionUpgrade)
	if err := a.e.applyCRDs(ctx, req, s.UpgradeCRDs()); err != nil {
		return &StorageUntouchedError{Err: fmt.Errorf("applying the CRDs of chart %s: %w", chartRef(req), err)}
	}
	pr, validated := a.e.validatingPostRenderer(ctx, req, !s.Upgrade.DisableOpenAPIValidation)
	started := time.Now()
	stop := a.e.watchProgress(ctx, req, "upgrade", s.UpgradeTimeout(), !s.Upgrade.DisableWaitForJobs)
	_, err := a.e.Helm.Upgrade(ctx, s.GetReleaseName(), req.Chart, req.Values, helm.UpgradeOptions{
		Namespace:                s.GetTargetNamespace(),
		Timeout:                  s.UpgradeTimeout(),
		Wait:                     !s.Upgrade.DisableWait,
		WaitForJobs:              !s.Upgrade.DisableWaitForJobs,
		DisableHooks:             s.Upgrade.DisableHooks,
		DisableOpenAPIValidation: true, // validated by the API server in pr, unless disabled
		SkipSchemaValidation:     s.Upgrade.DisableSchemaValidation,
		TakeOwnership:            !s.Upgrade.DisableTakeOwnership,
		Force:                    s.Upgrade.Force,
		CleanupOnFail:            s.Upgrade.CleanupOnFail,
		ReuseValues:              s.Upgrade.PreserveValues,
		MaxHistory:               s.GetMaxHistory(),
		ApplyMethod:              applyMethod(s.Upgrade.ServerSideApply),
		PostRenderer:             pr,
		PostRenderStrategy:       s.PostRenderStrategy.helm(),
		Poller:                   s.poller(ctx),
		Description:              "Upgraded by helmrelease",
		Lookups:                  req.Lookups,
	})
	stop()
	if validated != nil && validated.refused != nil {
		// Refused before Helm wrote anything: a run error, as Helm's own
		// validation failing is.
		return &StorageUntouchedError{Err: validated.refused}
	}
	written, rerr := a.e.recordObserved(req, req.ChartDigest, ActionUpgrade)
	if rerr != nil && err == nil {
		err = rerr
	}
	if err != nil && written == 0 {
		return &StorageUntouchedError{Err: a.e.failure("Helm %s of release %s with chart %s wrote nothing to storage", err, a.Name(), releaseRef(req), chartRef(req))}
	}
	if err != nil {
		return a.fail(req, a.e.explainFailure(ctx, req, err, started, s.UpgradeTimeout(), !s.Upgrade.DisableWaitForJobs))
	}
	st.ObservedPostRenderersDigest = a.e.Digests().PostRenderers(s)
	st.ObservedOptionsDigest = OptionsDigest(s)
	st.SetCondition(Condition{Type: ConditionReleased, Status: true, Reason: ReasonUpgradeSucceeded,
		Message: fmt.Sprintf(fmtUpgradeSuccess, releaseRef(req), chartRef(req))})
	st.RemoveCondition(ConditionTestSuccess)
	st.RemoveCondition(ConditionRemediated)
	if s.Upgrade.Strategy.Name == StrategyRetryOnFailure {
		// Failures count only while the release is failed.
		st.Failures, st.InstallFailures, st.UpgradeFailures = 0, 0, 0
	}
	return nil
}

func (a *Upgrade) fail(req *Request, err error) error {
	st := req.Status
	st.Failures++
	st.UpgradeFailures++
	st.SetCondition(Condition{Type: ConditionReleased, Status: false, Reason: ReasonUpgradeFailed,
		Message: fmt.Sprintf(fmtUpgradeFailure, releaseRef(req), chartRef(req), err)})
	return a.e.failure("Helm upgrade failed for release %s with chart %s", err, releaseRef(req), chartRef(req))
}
