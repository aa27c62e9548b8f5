package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// remove uninstalls the release; a suspended one is left installed, as
// helm-controller leaves a suspended HelmRelease's.
func (h helmEngine) remove(ctx context.Context, m *releaseModel, private privateGetter, resp *resource.DeleteResponse) {
	r := h.r
	if m.Suspend.ValueBool() {
		// As helm-controller does for a suspended HelmRelease.
		resp.Diagnostics.AddWarning("Suspended release left installed",
			fmt.Sprintf("helmrelease_release %s is suspended, so destroying it does not uninstall the Helm release.\n\nUninstall it with helm, or set suspend = false and apply before destroying.", m.ID.ValueString()))
		return
	}
	red := r.redactorFor(ctx, m, writeOnly{})
	ctx = red.context(ctx)
	defer red.finish(ctx, &resp.State, &resp.Diagnostics)
	spec := h.spec(ctx, m, &resp.Diagnostics)
	st, d := statusOf(ctx, m.Status)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, e := r.reconciler(ctx, m, spec, red, &resp.Diagnostics)
	if e == nil {
		return
	}
	// The status is kept only when the uninstall fails; a state without a
	// key (never refreshed since keys came) gets one that dies with it,
	// and its next refresh sees a release it did not make.
	if e.Key = secretHashKeyOf(ctx, private, nil, &resp.Diagnostics); e.Key == nil {
		e.Key = newSecretHashKey(&resp.Diagnostics)
	}
	if len(st.History) == 0 {
		// This resource never made a revision (its create failed early):
		// a release under the name may be another's.
		latest, err := e.Helm.LastRelease(spec.GetReleaseName())
		if err != nil {
			resp.Diagnostics.AddError("Release not readable", fmt.Sprintf("helmrelease_release %s: %s\n\nThe resource is kept; check that the cluster is reachable, then destroy again.", m.ID.ValueString(), err))
			return
		}
		if latest != nil && reconcile.CheckOwnership(latest, spec) != nil {
			resp.Diagnostics.AddWarning("Release left installed",
				fmt.Sprintf("helmrelease_release %s made no revision of release %s, which is not its own: it is left installed.", m.ID.ValueString(), spec.GetReleaseName()))
			return
		}
	}
	left, err := e.Uninstall(ctx, spec, st)
	if len(left) > 0 {
		lines := make([]string, 0, len(left))
		for _, l := range left {
			lines = append(lines, "- "+l.String())
		}
		resp.Diagnostics.AddWarning("Objects left in the cluster",
			fmt.Sprintf("helmrelease_release %s is uninstalled; Helm leaves these objects by design, and they are no longer managed by Terraform:\n%s\n\nDelete them (kubectl delete) when their data is no longer needed, or keep them for a later install to take up again.", m.ID.ValueString(), strings.Join(lines, "\n")))
	}
	if err != nil {
		// The resource stays, with what the failed uninstall left.
		status, d := statusObject(ctx, st)
		resp.Diagnostics.Append(d...)
		if !d.HasError() {
			m.Status = status
			resp.Diagnostics.Append(setRelease(ctx, &resp.State.Raw, m)...)
		}
		resp.Diagnostics.AddError("Release uninstall failed",
			fmt.Sprintf("helmrelease_release %s: %s\n\nThe release and this resource are kept. Fix the cause and destroy again: a failing pre-delete hook can be skipped with uninstall.disable_hooks = true, a timeout raised with uninstall.timeout; to stop managing the release without uninstalling it, run terraform state rm.", m.ID.ValueString(), err))
		return
	}
	if deleteNamespaceOf(ctx, m, &resp.Diagnostics) {
		deleteCreatedNamespaces(ctx, e.Kube, m, spec, []string{spec.GetTargetNamespace()}, &resp.Diagnostics)
	}
}
