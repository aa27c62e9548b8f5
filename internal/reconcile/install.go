package reconcile

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
)

// Install installs the chart as a new release. It records the attempt
// (last attempted revision, config digest, action) first. On success the
// Released condition is True; on failure it is False and Failures and
// InstallFailures grow by one. The releases Helm wrote become snapshots
// either way. A success under RetryOnFailure clears the failure counters.
type Install struct{ e *Reconciler }

func (a *Install) Name() string     { return "install" }
func (a *Install) Type() ActionType { return TypeRelease }

func (a *Install) Reconcile(ctx context.Context, req *Request) error {
	s, st := req.Spec, req.Status
	// A new attempt: the remediation of an earlier failure is history.
	st.RemoveCondition(ConditionRemediated)
	recordAttempt(req, ActionInstall)
	if err := a.e.applyCRDs(ctx, req, s.InstallCRDs()); err != nil {
		return &StorageUntouchedError{Err: fmt.Errorf("applying the CRDs of chart %s: %w", chartRef(req), err)}
	}
	validation := !s.Install.DisableOpenAPIValidation
	var createdNamespace types.UID
	if s.Install.CreateNamespace {
		// Created before Helm would, so that the objects bound for it are
		// validated before anything of the release is written, and
		// marked as the release's, which uninstall.delete_namespace
		// deletes.
		var err error
		if createdNamespace, err = a.e.Kube.CreateNamespace(ctx, s.GetTargetNamespace(), helm.FieldManager, s.ReleaseRef()); err != nil {
			return &StorageUntouchedError{Err: err}
		}
	}
	// An install that writes nothing leaves nothing: not the namespace it
	// created either.
	untouched := func(err error) error {
		if createdNamespace != "" {
			cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if derr := a.e.Kube.DeleteNamespace(cleanup, s.GetTargetNamespace(), createdNamespace); derr != nil {
				err = fmt.Errorf("%w; and the namespace it created is left: %w", err, derr)
			}
		}
		return &StorageUntouchedError{Err: err}
	}
	pr, validated := a.e.validatingPostRenderer(ctx, req, validation)
	started := time.Now()
	stop := a.e.watchProgress(ctx, req, "install", s.InstallTimeout(), !s.Install.DisableWaitForJobs)
	_, err := a.e.Helm.Install(ctx, req.Chart, req.Values, helm.InstallOptions{
		ReleaseName:              s.GetReleaseName(),
		Namespace:                s.GetTargetNamespace(),
		Timeout:                  s.InstallTimeout(),
		Wait:                     !s.Install.DisableWait,
		WaitForJobs:              !s.Install.DisableWaitForJobs,
		DisableHooks:             s.Install.DisableHooks,
		DisableOpenAPIValidation: true, // validated by the API server in pr, unless disabled
		SkipSchemaValidation:     s.Install.DisableSchemaValidation,
		TakeOwnership:            !s.Install.DisableTakeOwnership,
		Replace:                  s.Install.Replace,
		CreateNamespace:          s.Install.CreateNamespace,
		ServerSideApply:          s.Install.serverSideApply(),
		PostRenderer:             pr,
		PostRenderStrategy:       s.PostRenderStrategy.helm(),
		Poller:                   s.poller(ctx),
		Description:              "Installed by helmrelease",
		Lookups:                  req.Lookups,
	})
	stop()
	if validated != nil && validated.refused != nil {
		// Refused before Helm wrote anything: a run error, as Helm's own
		// validation failing is.
		return untouched(validated.refused)
	}
	written, rerr := a.e.recordObserved(req, req.ChartDigest, ActionInstall)
	if rerr != nil && err == nil {
		err = rerr
	}
	if err != nil && written == 0 {
		return untouched(a.e.failure("Helm %s of release %s with chart %s wrote nothing to storage", err, a.Name(), releaseRef(req), chartRef(req)))
	}
	if err != nil {
		return a.fail(req, a.e.explainFailure(ctx, req, err, started, s.InstallTimeout(), !s.Install.DisableWaitForJobs))
	}
	st.ObservedPostRenderersDigest = a.e.Digests().PostRenderers(s)
	st.ObservedOptionsDigest = OptionsDigest(s)
	st.SetCondition(Condition{Type: ConditionReleased, Status: true, Reason: ReasonInstallSucceeded,
		Message: fmt.Sprintf(fmtInstallSuccess, releaseRef(req), chartRef(req))})
	st.RemoveCondition(ConditionTestSuccess)
	st.RemoveCondition(ConditionRemediated)
	if s.Install.Strategy.Name == StrategyRetryOnFailure {
		// Failures count only while the release is failed.
		st.Failures, st.InstallFailures, st.UpgradeFailures = 0, 0, 0
	}
	return nil
}

func (a *Install) fail(req *Request, err error) error {
	st := req.Status
	st.Failures++
	st.InstallFailures++
	st.SetCondition(Condition{Type: ConditionReleased, Status: false, Reason: ReasonInstallFailed,
		Message: fmt.Sprintf(fmtInstallFailure, releaseRef(req), chartRef(req), err)})
	return a.e.failure("Helm install failed for release %s with chart %s", err, releaseRef(req), chartRef(req))
}

// recordAttempt notes what is about to be attempted.
func recordAttempt(req *Request, action ReleaseAction) {
	st := req.Status
	st.LastAttemptedReleaseAction = action
	st.LastAttemptedRevision = req.Chart.Metadata.Version
	st.LastAttemptedRevisionDigest = req.ChartDigest
	st.LastAttemptedConfigDigest = req.configDigest
	st.StorageNamespace = req.Spec.GetStorageNamespace()
}

func releaseRef(req *Request) string { return req.Spec.ReleaseRef() }

func chartRef(req *Request) string {
	return req.Chart.Metadata.Name + "@" + req.Chart.Metadata.Version
}
