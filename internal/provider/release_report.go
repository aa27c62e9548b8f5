package provider

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// runKind is what an apply did to the resource, which decides the remedy
// of a failure.
type runKind int

const (
	// runUpdated: an update; the resource stays.
	runUpdated runKind = iota
	// runCreated: a create, saved (tainted when it failed).
	runCreated
	// runNotCreated: a create that made no revision, not saved.
	runNotCreated
)

// reportRun turns the outcome of a run into diagnostics: the error with
// Helm's log lines, and a warning saying what failed and how it was
// remediated when remediation happened.
//
// unreachable says whether err came from a cluster that did not answer
// (see unreachable).
func reportRun(diags *diag.Diagnostics, id string, actions []reconcile.ActionRecord, err error, kind runKind, unreachable bool) {
	remediated := false
	var steps []string
	for _, a := range actions {
		if a.Type == reconcile.TypeRemediate && a.Err == nil {
			remediated = true
		}
		if a.Err != nil {
			steps = append(steps, fmt.Sprintf("- %s failed: %s", a.Name, oneLine(a.Err.Error())))
		} else {
			steps = append(steps, "- "+a.Name+" succeeded")
		}
	}
	if remediated {
		outcome := "The release is in sync now."
		if err != nil {
			outcome = "The release is not in sync: see the error."
		}
		diags.AddWarning("Release remediated",
			fmt.Sprintf("helmrelease_release %s failed during this apply and was remediated:\n%s\n\n%s The failures count against the remediation retries (status.failures).", id, strings.Join(steps, "\n"), outcome))
	}
	if err == nil {
		return
	}
	remedy := "Fix the cause (see the Helm error and log lines above), then apply again."
	var owned *reconcile.OwnershipError
	var waitErr *reconcile.WaitError
	switch {
	case errors.As(err, &owned) && owned.Unrecorded:
		remedy = "Nothing was changed. To manage the release from this state, import it (terraform import) and remove it from the other state; otherwise give this resource another release_name."
	case errors.As(err, &owned) && len(owned.Owners) > 0:
		remedy = "Two helmrelease_release resources cannot share a release: give this one another release_name (or target_namespace), or remove the other."
	case errors.As(err, &waitErr):
		remedy = waitRemedy(waitErr)
		switch {
		case kind == runCreated:
			remedy += "\n\nThen apply again: Terraform replaces the failed resource, which installs the release afresh."
		case errors.Is(err, reconcile.ErrRetryNextRun):
			remedy += "\n\n" + retryNextRunRemedy
		case errors.Is(err, reconcile.ErrRetriesExhausted):
			remedy += "\n\nThen set reset_at to a new value (or change the chart or values) to retry with the remediation settings, or set force_at to a new value to force one upgrade."
		default:
			remedy += "\n\nThen apply again."
		}
	case unreachable:
		remedy = "The cluster could not be reached; the resource and its status stay in the state. When it answers again, apply again: a revision the outage left pending is marked failed, then remediated or retried."
	case errors.Is(err, reconcile.ErrNotOwned):
		remedy = "Import the release (terraform import) to manage it with this resource, or set another release_name."
	case kind == runNotCreated:
		remedy = "Nothing was installed and the resource was not created. Fix the cause, then apply again; when another apply took the release name at the same moment (\"already exists\", \"cannot re-use a name\", a pending release of another helmrelease_release), plan again to see whose release it is."
	case kind == runCreated:
		remedy = "Fix the cause (see the Helm error and log lines above), then apply again: Terraform replaces the failed resource, which installs the release afresh."
	case errors.Is(err, reconcile.ErrRetryNextRun):
		remedy = "Fix the cause (see the Helm error and log lines above). " + retryNextRunRemedy
	case errors.Is(err, reconcile.ErrRetriesExhausted):
		remedy = "Fix the cause, then set reset_at to a new value (or change the chart or values) to retry with the remediation settings, or set force_at to a new value to force one upgrade."
	}
	var untouched *reconcile.StorageUntouchedError
	summary := "Release failed"
	switch {
	case unreachable:
		summary = "Kubernetes cluster unreachable"
	case waitErr != nil && len(waitErr.Hooks) > 0:
		summary = "Release hook did not complete"
	case waitErr != nil:
		summary = "Release not ready in time"
	case errors.As(err, &untouched):
		summary = "Release not applied"
	}
	detail := fmt.Sprintf("helmrelease_release %s: %s", id, err)
	if waitErr != nil {
		if logs := waitErr.PodLogs(); logs != "" {
			// Shown here only: never kept in status (see PodLogs).
			detail += "\n\nLast log lines of the failed pods:\n" + logs
		}
	}
	diags.AddError(summary, detail+"\n\n"+remedy)
}

// oneLine is an action's error without Helm's log lines (the final error
// has them), on one line.
func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "Last Helm log lines:")
	return strings.Join(strings.Fields(s), " ")
}
