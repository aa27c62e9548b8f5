package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// deleteNamespaceOf is uninstall.delete_namespace.
func deleteNamespaceOf(ctx context.Context, m *releaseModel, diags *diag.Diagnostics) bool {
	u := objectAs[uninstallModel](ctx, m.Uninstall, path.Root("uninstall"), diags)
	return u != nil && u.DeleteNamespace.ValueBool()
}

// maxLeftNamed is how many objects a "Namespace kept" warning names.
const maxLeftNamed = 20

// deleteCreatedNamespaces deletes, once the release of m is uninstalled,
// the namespaces its install created that hold nothing else, as
// uninstall.delete_namespace asks, and waits for them to go. A namespace
// kept is a warning naming why; one that could not be deleted an error
// (the resource stays, and destroying again retries it). The first of
// namespaces is the release's own: only it is worth a warning when
// another made it.
func deleteCreatedNamespaces(ctx context.Context, g *kube.Getter, m *releaseModel, spec *reconcile.Spec, namespaces []string, diags *diag.Diagnostics) {
	id := m.ID.ValueString()
	for i, ns := range namespaces {
		done, err := g.DeleteCreatedNamespace(ctx, kube.NamespaceDeletion{Name: ns, CreatedFor: spec.ReleaseRef(), Timeout: spec.UninstallTimeout()})
		switch {
		case err != nil:
			diags.AddError("Namespace not deleted",
				fmt.Sprintf("helmrelease_release %s is uninstalled, but uninstall.delete_namespace could not delete namespace %s: %s.\n\nThe resource is kept. Check that the provider's credentials may delete namespaces and what holds the namespace (kubectl get namespace %s -o yaml shows its conditions), then destroy again.", id, ns, err, ns))
		case done.Absent, done.Deleted:
		case len(done.Unread) > 0 && done.CreatedFor == spec.ReleaseRef():
			also := ""
			if len(done.Left) > 0 {
				also = fmt.Sprintf(" It also holds objects that are not the release's: %s.", strings.Join(done.Left[:min(len(done.Left), maxLeftNamed)], ", "))
			}
			diags.AddWarning("Namespace kept",
				fmt.Sprintf("helmrelease_release %s is uninstalled; uninstall.delete_namespace keeps namespace %s, which its install created, because it could not read all the namespace holds:\n- %s\n\nWhat the namespace holds of these is unknown, so it may hold objects that are not the release's.%s Check the API services (kubectl get apiservices) and the provider's permissions to list these kinds, then delete the namespace when it holds nothing needed.", id, ns, strings.Join(done.Unread, "\n- "), also))
		case len(done.Left) > 0 && done.CreatedFor == spec.ReleaseRef():
			named := done.Left
			more := ""
			if len(named) > maxLeftNamed {
				more = fmt.Sprintf("\n- and %d more", len(named)-maxLeftNamed)
				named = named[:maxLeftNamed]
			}
			diags.AddWarning("Namespace kept",
				fmt.Sprintf("helmrelease_release %s is uninstalled; uninstall.delete_namespace keeps namespace %s, which its install created, because it still holds objects that are not the release's:\n- %s%s\n\nDelete them (kubectl delete -n %s ...) when they are no longer needed, then the namespace.", id, ns, strings.Join(named, "\n- "), more, ns))
		case i > 0:
		default:
			origin := "has no record of the release that created it"
			if done.CreatedFor != "" {
				origin = "was created for release " + done.CreatedFor
			}
			diags.AddWarning("Namespace kept",
				fmt.Sprintf("helmrelease_release %s is uninstalled; uninstall.delete_namespace deletes only a namespace this release's install created, and namespace %s %s (it existed before the install, or another tool made it).\n\nDelete it with kubectl when it is no longer needed.", id, ns, origin))
		}
	}
}
