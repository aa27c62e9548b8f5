package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// releaseEngine runs the operations of a helmrelease_release on one
// engine: helmEngine in the provider's process, fluxEngine through Flux's
// helm-controller. The resource asks the engine of its model (engineOf)
// and nothing else, so that each promise of the guide's "What each engine
// keeps" is kept, or refused, by each implementation, not per call site.
type releaseEngine interface {
	// apply installs or upgrades the release as planned and saves what
	// it did, even when it fails. A create (op.prior nil) never takes over
	// a release or HelmRelease that another state or tool manages.
	apply(ctx context.Context, op *applyOp)
	// read refreshes the release, writing nothing to the cluster; the
	// resource leaves the state only when the release is confirmed gone.
	read(ctx context.Context, m *releaseModel, private privateGetter, resp *resource.ReadResponse)
	// remove uninstalls the release (or lets it go, as configured); the
	// resource stays when that fails.
	remove(ctx context.Context, m *releaseModel, private privateGetter, resp *resource.DeleteResponse)
	// allowCreate checks, at the plan of a create, what already holds the
	// release's name (latest: its newest revision, nil for none): it
	// refuses what another tool manages, warns about what another
	// helmrelease_release may, and says whether the create renders as an
	// install. ok is false when the plan must stop.
	allowCreate(ctx context.Context, plan *releaseModel, spec *reconcile.Spec, latest *helm.Release, diags *diag.Diagnostics) (asInstall, ok bool)
}

var (
	_ releaseEngine = helmEngine{}
	_ releaseEngine = fluxEngine{}
)

// helmEngine runs releases in the provider's process (engine = "helm").
type helmEngine struct{ r *releaseResource }

// fluxEngine hands releases to Flux's helm-controller (engine = "flux").
type fluxEngine struct{ r *releaseResource }

// engineOf is the engine of m: the one place the engine is chosen.
func (r *releaseResource) engineOf(m *releaseModel) releaseEngine {
	if m.handedToFlux() {
		return fluxEngine{r}
	}
	return helmEngine{r}
}

// applyOp is what an apply is given: the plan (m), the configuration, the
// prior state (nil for a create) and its status (empty for a create), and
// where the result goes.
type applyOp struct {
	m, config    *releaseModel
	prior        *releaseModel
	st           *reconcile.Status
	priorPrivate privateGetter
	out          *tfsdk.State
	private      privateSetter
	identity     *tfsdk.ResourceIdentity
	diags        *diag.Diagnostics
}
