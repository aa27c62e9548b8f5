package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// helmFound is a release the provider's process runs (or no engine does):
// one that Flux's helm-controller did not make for a HelmRelease that
// still exists.
type helmFound struct{}

// adopt takes the release over as it is, for the provider's process to
// run (see adoptRelease).
func (helmFound) adopt(ctx context.Context, m *releaseModel, e *reconcile.Reconciler, latest *helm.Release, diags *diag.Diagnostics) {
	diags.Append(adoptRelease(ctx, m, latest, releaseScope(e), e.Key)...)
}
