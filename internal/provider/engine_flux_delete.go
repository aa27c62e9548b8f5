package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/flux"
)

// remove deletes the HelmRelease, with or without the controller's
// uninstall as flux.uninstall_on_destroy says, and what was written for it.
func (f fluxEngine) remove(ctx context.Context, m *releaseModel, _ privateGetter, resp *resource.DeleteResponse) {
	diags := &resp.Diagnostics
	spec := f.spec(ctx, m, diags)
	uninstall := m.fluxSettings(ctx, diags).uninstall
	if diags.HasError() {
		return
	}
	fe := f.client(m, diags)
	if fe == nil {
		return
	}
	timeout := spec.UninstallTimeout() + time.Minute
	err := fe.Delete(ctx, spec.Namespace, spec.Name, uninstall, timeout)
	if cleanupLeft(diags, err, m.ID.ValueString(), spec.Namespace) {
		err = nil
	}
	if err != nil {
		diags.AddError("HelmRelease not deleted", fmt.Sprintf("helmrelease_release %s: %s.\n\nThe resource is kept. Check that helm-controller runs; a failing pre-delete hook can be skipped with uninstall.disable_hooks = true, a timeout raised with uninstall.timeout; then destroy again.", m.ID.ValueString(), err))
		return
	}
	if uninstall && deleteNamespaceOf(ctx, m, diags) {
		if g := f.getter(m, diags); g != nil {
			deleteCreatedNamespaces(ctx, g, m, spec, flux.CreatedNamespaces(spec, m.kubeConfigRef(ctx, diags) != nil), diags)
		}
	}
	if !uninstall {
		diags.AddWarning("Release left installed",
			fmt.Sprintf("helmrelease_release %s: flux.uninstall_on_destroy is false, so the HelmRelease was suspended and deleted and the Helm release %s/%s is left installed, managed by nothing.\n\nUninstall it with helm when it is no longer needed, or import it into a helmrelease_release.", m.ID.ValueString(), spec.GetStorageNamespace(), spec.GetReleaseName()))
	}
}
