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
