package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// helmEngine runs releases in the provider's process (engine = "helm"):
// internal/reconcile's atomic loop, inside terraform apply.
type helmEngine struct{ r *releaseResource }

func (helmEngine) name() string { return engineHelm }

// spec is the reconciler's view of m; its objects carry this provider's
// origin labels.
func (helmEngine) spec(ctx context.Context, m *releaseModel, diags *diag.Diagnostics) *reconcile.Spec {
	return m.spec(ctx, diags)
}

// letGo leaves the release as it is: the provider's process holds nothing
// of it between runs, and its origin labels are taken over by the next
// engine's first upgrade.
func (helmEngine) letGo(context.Context, *releaseModel, *diag.Diagnostics) (adopt, ok bool) {
	return false, true
}
