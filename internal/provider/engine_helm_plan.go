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

// asDeployed: the plan's render is what the apply deploys.
func (helmEngine) asDeployed(context.Context, privateGetter, bool, *diag.Diagnostics) func(types.Map) types.Map {
	return nil
}

// settledRender: the plan renders the release as its newest revision has
// it, and meets a lock another client holds (lockedWhileRendering).
func (helmEngine) settledRender() bool { return false }
