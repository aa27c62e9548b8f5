// Package flux hands releases to Flux's helm-controller: it writes the
// HelmRelease of a reconcile.Spec with its chart source (HelmRepository or
// OCIRepository) and Secrets by server-side apply, waits as the flux CLI
// does until the controller reports the planned revision ready, reads the
// controller's view back and lets the controller uninstall (or let go of)
// the release on delete. Rendering for the plan stays with
// internal/reconcile, which renders as the controller does.
package flux
