package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// engine runs a helmrelease_release on what its engine attribute names:
// helmEngine in the provider's process (engine_helm_*.go), fluxEngine
// through Flux's helm-controller (engine_flux_*.go). Everything that
// differs between the two is a method here, so that the Terraform
// operations (release_plan.go, release_apply.go, release_read.go,
// release_delete.go, release_import.go) never ask which engine runs a
// release, and each promise of the guide's "What each engine keeps" is
// kept, or refused, by each implementation. The engine is chosen in
// engineOf for a configured release and in engineFound for a release
// found in the cluster; TestEngineBranches keeps it so.
type engine interface {
	// name is the engine attribute's value.
	name() string
	// validate refuses, at validation, what the engine cannot do or has
	// no use for in m; values not known yet are checked when they are.
	validate(ctx context.Context, m *releaseModel, diags *diag.Diagnostics)
	// spec is the reconciler's view of m, rendered as the engine deploys
	// it; every attribute must be known.
	spec(ctx context.Context, m *releaseModel, diags *diag.Diagnostics) *reconcile.Spec

	// planSupported checks, at plan, that m's cluster can run m; false
	// with a diagnostic when the plan must stop. The cluster's settings
	// are known.
	planSupported(ctx context.Context, m *releaseModel, diags *diag.Diagnostics) bool
	// handOverChange is the change a plan names when a release that
	// another engine ran is handed to this one (its objects' origin
	// labels change hands, in a new revision).
	handOverChange() string
	// atWork says what the engine runs on the release on its own now,
	// as st (refreshed) records it; "" when nothing. continuing says
	// whether this engine ran the release before the plan.
	atWork(st *reconcile.Status, continuing bool) string
	// inSyncStatus is the status an apply that finds the release in sync
	// with want records, for a plan that decided no Helm action to show;
	// nil when it cannot be told at plan. st is the refreshed status, left
	// as it is; refreshed says whether the refresh compared the cluster
	// under want's drift detection settings (else the engine compares it
	// now, when they compare it at all). m is the planned model.
	inSyncStatus(ctx context.Context, m *releaseModel, red *redactor, st *reconcile.Status, want reconcile.Desired, refreshed bool) *reconcile.Status
	// asDeployed turns the objects a plan rendered into what the engine
	// is known to deploy of them; nil when it deploys the render as it
	// is.
	asDeployed(ctx context.Context, private privateGetter, continuing bool, diags *diag.Diagnostics) func(types.Map) types.Map
	// settledRender says whether a plan renders the release from its
	// newest settled revision (reconcile.Options.Settled): the engine
	// acts on the release on its own schedule, and a plan must neither
	// wait for nor be refused by the lock of an upgrade it runs.
	settledRender() bool
	// allowCreate checks, at the plan of a create, what already holds the
	// release's name (latest: its newest revision, nil for none): it
	// refuses what another tool manages, warns about what another
	// helmrelease_release may, and says whether the create renders as an
	// install. ok is false when the plan must stop.
	allowCreate(ctx context.Context, plan *releaseModel, spec *reconcile.Spec, latest *helm.Release, diags *diag.Diagnostics) (asInstall, ok bool)

	// loadsChart says whether an apply loads the chart (else it resolves
	// the chart's version alone, for another to fetch).
	loadsChart() bool
	// runsSuspended says whether an apply of a suspended release runs
	// (else the state records the configuration alone).
	runsSuspended() bool
	// run installs or upgrades the release as planned, as release_apply.go
	// decoded it, and says what it did, even when it failed; nil when it
	// made nothing to save (a refused create), with the diagnostics that
	// say why. A create (run.prior nil) never takes over a release or
	// HelmRelease that another state or tool manages.
	run(ctx context.Context, run *releaseRun) *applied
	// letGo hands a release this engine ran (prior) over to another
	// engine, uninstalling nothing; ok is false with a diagnostic when it
	// could not. adopt says whether the release is left labelled as this
	// engine's, for the next engine to adopt.
	letGo(ctx context.Context, prior *releaseModel, diags *diag.Diagnostics) (adopt, ok bool)
	// read refreshes the release, as release_read.go decoded it, writing
	// nothing to the cluster, and says what it found; nil when the state
	// stays as it is, or the engine saved or removed it (an import, a
	// release confirmed gone).
	read(ctx context.Context, rf *releaseRefresh) *refreshed
	// remove uninstalls the release (or lets it go, as configured); the
	// resource stays when that fails.
	remove(ctx context.Context, m *releaseModel, private privateGetter, resp *resource.DeleteResponse)
}

var (
	_ engine = helmEngine{}
	_ engine = fluxEngine{}
)

// engineOf is the engine of a configured release: the one place it is
// chosen. An engine not known yet is the default one, whose plan leaves
// what depends on it unknown.
func (r *releaseResource) engineOf(m *releaseModel) engine {
	if m.Engine.ValueString() == engineFlux {
		return fluxEngine{r}
	}
	return helmEngine{r}
}

// foundEngine is the engine that runs a release found in the cluster by
// its Helm storage alone: what an import adopts, and what an action asks.
type foundEngine interface {
	// adopt fills m, being imported, with the release latest: its
	// identity, chart, values, objects and status, as the engine runs it.
	adopt(ctx context.Context, m *releaseModel, e *reconcile.Reconciler, latest *helm.Release, diags *diag.Diagnostics)
	// ask records a force or reset request (a's kind) for the release
	// rel, for what runs it.
	ask(ctx context.Context, a *requestAction, rel *actionRelease, resp *action.InvokeResponse)
}

var (
	_ foundEngine = helmFound{}
	_ foundEngine = fluxFound{}
)

// engineFound is the engine that runs latest, a release found on cluster
// c: helm-controller when it made the release for a HelmRelease that
// still exists, the provider's process otherwise (and without a cluster
// to ask). It is the one place such a release's engine is chosen.
func engineFound(ctx context.Context, c *cluster, latest *helm.Release) foundEngine {
	if c == nil {
		return helmFound{}
	}
	if f, ok := fluxFoundOf(ctx, c, latest); ok {
		return f
	}
	return helmFound{}
}

// handOver lets the engine that ran the prior state go of the release
// when the plan gives it to another one (see engine.letGo); adopt is
// whether the new engine must adopt the release.
func handOver(ctx context.Context, r *releaseResource, to engine, op *applyOp) (adopt, ok bool) {
	if op.prior == nil {
		return false, true
	}
	if r.ranBy(op.prior, to) {
		return false, true
	}
	return r.engineOf(op.prior).letGo(ctx, op.prior, op.diags)
}

// ranBy reports whether e ran the release of the prior state, which is
// nil for a create.
func (r *releaseResource) ranBy(prior *releaseModel, e engine) bool {
	return prior != nil && r.engineOf(prior).name() == e.name()
}
