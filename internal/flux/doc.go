// Package flux hands releases to Flux's helm-controller: it writes the
// HelmRelease of a reconcile.Spec with its chart source (a HelmRepository
// and shared HelmChart, an OCIRepository, a GitRepository or a Bucket, or
// the chart_ref object the configuration names), its credentials and
// verification Secrets and its values Secret by server-side apply; waits as
// the flux CLI does until the controller reports the planned revision ready
// (or a chart source stalls); reads the controller's view back, and the
// chart a HelmRelease names for an import; and lets the controller
// uninstall (or let go of) the release on delete. Rendering for the plan
// stays with internal/reconcile, which renders as the controller does.
package flux
