package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
)

// Read refreshes the release from Helm storage and the cluster, writing
// nothing to either. The resource leaves the state only when the release is
// confirmed gone. A release changed outside Terraform (manual helm upgrade
// or rollback) or left pending is marked not ready, so that the plan acts
// on it; with drift detection, drifted objects show their live fields in
// resources and missing ones are left out, so that the plan puts them back.
// Nothing changes in the state when nothing changed in the cluster.
func (r *releaseResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m releaseModel
	resp.Diagnostics.Append(releaseModelOf(ctx, req.State.Raw, &m)...)
	if resp.Diagnostics.HasError() || r.data == nil {
		return
	}
	// The identity never changes: the release this resource manages.
	resp.Diagnostics.Append(setIdentity(ctx, resp.Identity, &m)...)
	newGitPlanToken(ctx, &m, resp.Private, &resp.Diagnostics)
	importing := m.Status.IsNull()
	if !importing && m.Suspend.ValueBool() {
		return
	}
	c := r.clusterOf(&m, &resp.Diagnostics)
	if c == nil {
		return
	}
	switch _, err := c.clients.RESTConfig(); {
	case errors.Is(err, errConfigUnknown) && req.ClientCapabilities.DeferralAllowed:
		// Planning before the cluster exists: Terraform refreshes it once
		// the provider's settings are known.
		resp.Deferred = &resource.Deferred{Reason: resource.DeferredReasonProviderConfigUnknown}
		return
	case errors.Is(err, errConfigUnknown) && !importing:
		// Planning before the cluster exists, with a Terraform that cannot
		// defer: the state stands, the apply refreshes.
		return
	case errors.Is(err, kube.ErrNotConfigured):
		resp.Diagnostics.AddError("Kubernetes cluster not configured",
			fmt.Sprintf("helmrelease_release %s cannot be refreshed: the provider has no kubernetes settings, and no KUBE_* or KUBECONFIG variable names a cluster (nor does it run in one).\n\nThe state is kept as it is. Configure the provider's kubernetes block (config_path, or host and credentials), or set KUBECONFIG, then plan again.", m.ID.ValueString()))
		return
	case err != nil:
		resp.Diagnostics.AddError("Kubernetes cluster unavailable",
			fmt.Sprintf("helmrelease_release %s cannot be refreshed: %s cannot be used: %s.\n\nThe state is kept as it is. Check the cluster's settings in the provider configuration, then plan again.", m.ID.ValueString(), c.describe(), err))
		return
	}
	r.engineOf(&m).read(ctx, &m, req.Private, resp)
}
