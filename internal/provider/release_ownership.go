package provider

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// A create never takes over what another state or tool manages; both
// engines keep that promise here. At plan, Terraform plans the create half
// of a replacement without the prior state, so a release or HelmRelease of
// this provider is a warning there (the replaced resource is destroyed
// before the create); at apply, anything still there is refused.

// ownershipConflict reports a release that exists and is not this
// resource's. A release made by anything but a helmrelease_release is an
// error. One made by another helmrelease_release is a warning: Terraform
// plans the create of a replacement without its prior state, so the plan
// cannot tell the resource it replaces (destroyed before the apply creates
// this one) from a second resource claiming the release, which the apply
// then refuses. It reports whether the plan may go on.
func ownershipConflict(diags *diag.Diagnostics, err error, spec *reconcile.Spec) bool {
	var owned *reconcile.OwnershipError
	if errors.As(err, &owned) && owned.Unrecorded {
		diags.AddAttributeWarning(path.Root("release_name"), "Release managed in another state",
			fmt.Sprintf("Release %s was made by helmrelease_release %s, which this state does not hold. If this plan replaces this resource (tainted, -replace, or a changed release attribute), the release is uninstalled first and installed again; otherwise the apply refuses it: another Terraform state manages it, or this one lost it.\n\nTo manage it from this state, import it (terraform import <address> %s/%s) and remove it from the other state; otherwise give this resource another release_name.",
				owned.Release, strings.Join(owned.Owners, ", "), spec.GetStorageNamespace(), spec.GetReleaseName()))
		return true
	}
	if errors.As(err, &owned) && len(owned.Owners) > 0 {
		diags.AddAttributeWarning(path.Root("release_name"), "Release made by another helmrelease_release",
			fmt.Sprintf("Release %s was made by helmrelease_release %s. If this plan replaces that resource, it is uninstalled first and this one installs it again; otherwise the apply refuses it: two helmrelease_release resources cannot share a release.\n\nGive this resource another release_name (or target_namespace) unless it replaces the other.",
				owned.Release, strings.Join(owned.Owners, ", ")))
		return true
	}
	attrError(diags, path.Root("release_name"), "Release already exists", err.Error()+".",
		"Import the release (terraform import <address> "+spec.GetStorageNamespace()+"/"+spec.GetReleaseName()+") to manage it with this resource, or set another release_name.")
	return false
}

// releaseCreateAllowed checks the release of the name at the plan of a
// create, for both engines (see engine.allowCreate).
func releaseCreateAllowed(plan *releaseModel, spec *reconcile.Spec, latest *helm.Release, diags *diag.Diagnostics) (asInstall, ok bool) {
	// A free name renders as the install the apply makes, even when
	// another apply takes the name while this plan renders (its dry run
	// would otherwise upgrade that release, pending: "another operation
	// is in progress"); the apply then refuses it by owner.
	if latest == nil || latest.Info.Status == helm.StatusUninstalled {
		return latest == nil, true
	}
	err := reconcile.CheckCreate(latest, spec)
	switch {
	case err != nil && !ownershipConflict(diags, err, spec):
		return false, false
	case err == nil && latest.Info.Status.IsPending():
		// This resource's release, left pending by an apply that never
		// reached the state (killed): the apply unlocks it, uninstalls it
		// and installs afresh.
		diags.AddWarning("Interrupted release found",
			fmt.Sprintf("Release %s/%s revision %d is %s, left by an earlier apply of helmrelease_release %s that did not finish (its objects carry this resource's labels). The apply marks it failed and installs it again.",
				spec.GetStorageNamespace(), latest.Name, latest.Version, latest.Info.Status, plan.ID.ValueString()))
	}
	// Another helmrelease_release's release (the one this plan replaces,
	// destroyed first, or a conflict the apply refuses), or this one's
	// interrupted install: planned as the fresh install the apply makes,
	// so that the plan Terraform makes again during the apply, when
	// another apply took the name meanwhile, plans the same.
	return err != nil || latest.Info.Status.IsPending(), true
}
