package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

func (h helmEngine) allowCreate(_ context.Context, plan *releaseModel, spec *reconcile.Spec, latest *helm.Release, diags *diag.Diagnostics) (asInstall, ok bool) {
	return releaseCreateAllowed(plan, spec, latest, diags)
}

// planSupported: any cluster runs the release in-process.
func (helmEngine) planSupported(context.Context, *releaseModel, *diag.Diagnostics) bool { return true }

func (helmEngine) handOverChange() string { return "taken back from Flux's helm-controller" }

// atWork: nothing runs on the release between terraform runs.
func (helmEngine) atWork(*reconcile.Status, bool) string { return "" }

// inSyncStatus: the engine's run records reconcile.InSyncStatus, unless
// it has a test to run (enabled, and the release never tested) or finds
// drift the refresh did not compare (drift detection settings changed).
func (h helmEngine) inSyncStatus(ctx context.Context, m *releaseModel, red *redactor, st *reconcile.Status, want reconcile.Desired, refreshed bool) *reconcile.Status {
	if cur := st.Latest(); cur == nil || want.Spec.Test.Enable && !cur.HasBeenTested() {
		return nil
	}
	if !refreshed && h.mayDrift(ctx, m, red, want.Spec) {
		return nil
	}
	return reconcile.InSyncStatus(st, want)
}

// mayDrift compares the release's objects with the cluster under spec's
// drift detection, as the apply will: true when they drifted, or when
// they could not be compared (the apply tells).
func (h helmEngine) mayDrift(ctx context.Context, m *releaseModel, red *redactor, spec *reconcile.Spec) bool {
	if spec.Drift.Mode != reconcile.DriftEnabled && spec.Drift.Mode != reconcile.DriftWarn {
		return false
	}
	ctx, e := h.r.reconciler(ctx, m, spec, red, &diag.Diagnostics{})
	if e == nil {
		return true
	}
	latest, err := e.Helm.LastRelease(spec.GetReleaseName())
	if err != nil || latest == nil {
		return true
	}
	report, err := e.DetectDrift(ctx, latest, spec.Drift.Ignore)
	return err != nil || report.HasChanges()
}

// asDeployed: the plan's render is what the apply deploys.
func (helmEngine) asDeployed(context.Context, privateGetter, bool, *diag.Diagnostics) func(types.Map) types.Map {
	return nil
}

// settledRender: the plan renders the release as its newest revision has
// it, and meets a lock another client holds (lockedWhileRendering).
func (helmEngine) settledRender() bool { return false }
