package provider

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/flux"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

func (helmEngine) loadsChart() bool { return true }

// runsSuspended: a suspended release is left as it is.
func (helmEngine) runsSuspended() bool { return false }

// run runs the engine's atomic loop until the release is in sync or
// remediation is exhausted. The run's status, failure counters and
// history are saved even when it fails; a create that made no revision
// (refused, or another apply took the name first) is not.
func (h helmEngine) run(ctx context.Context, run *releaseRun) *applied {
	m, st, spec, e, diags := run.m, run.st, run.spec, run.e, run.diags
	diags.Append(run.private.SetKey(ctx, privateFlux, nil)...)
	diags.Append(run.private.SetKey(ctx, privateFluxRender, nil)...)
	if run.prior != nil && run.priorPrivate != nil {
		requestsOf(ctx, run.priorPrivate, diags).Apply(spec)
	}
	// Taken back from another engine (Flux's controller): the release is
	// labelled as the controller's, and becomes this resource's with the
	// next upgrade.
	spec.Adopt = spec.Adopt || run.takeBack
	if st.StorageNamespace == "" {
		st.StorageNamespace = spec.GetStorageNamespace()
	}
	request := &reconcile.Request{Spec: spec, Chart: run.resolved.Chart, ChartDigest: run.resolved.TrackedDigest, Values: run.values, Status: st}
	if helm.UsesLookup(run.resolved.Chart, run.values) {
		// A create's plan hands its apply no private state: the calls
		// the install makes are the ones the refreshes after it read.
		request.Lookups = &helm.Lookups{}
	}
	loadInSync(ctx, run.priorPrivate, e, diags)
	loadValidated(ctx, run.priorPrivate, e, diags)
	runErr := e.Reconcile(ctx, request, e.DriftDetector(spec))
	saveInSync(ctx, run.private, e, diags)
	saveValidated(ctx, run.private, nil, diags) // this plan's: used up
	if request.Lookups != nil && len(request.Lookups.Reads()) > 0 {
		saveLookupCalls(ctx, run.private, request.Lookups, diags)
	}
	kind := runUpdated
	if run.prior == nil {
		kind = runCreated
	}
	if run.prior == nil && runErr != nil && (errors.Is(runErr, reconcile.ErrNotOwned) || len(st.History) == 0) {
		// Nothing was made: no resource, so that destroying it can never
		// uninstall the release of another, and the next plan creates it
		// again.
		kind = runNotCreated
	}
	var differences flux.RenderDifferences
	report := func(_ context.Context, latestRead bool) {
		reportRun(diags, m.ID.ValueString(), request.Actions, runErr, kind, unreachable(ctx, e, runErr))
		if latestRead && len(differences) > 0 {
			reportDeployedOtherwise(diags, differences, m.ID.ValueString(), kind == runCreated)
		}
	}
	if kind == runNotCreated {
		report(ctx, false)
		return nil
	}
	a := &applied{status: st, asPlanned: runErr == nil, report: report}
	if released(request.Actions) {
		a.compare = func(_ context.Context, latest *helm.Release, deployed func() types.Map) bool {
			if renderedAsPlanned(m.ID.ValueString(), latest) {
				return false
			}
			differences = renderedOtherwise(e, m, latest, deployed(), run.sensitive, diags)
			return len(differences) > 0
		}
	}
	return a
}

// released tells whether an install or upgrade ran: Helm rendered the
// chart again, which the plan's render must have foreseen.
func released(actions []reconcile.ActionRecord) bool {
	return slices.ContainsFunc(actions, func(a reconcile.ActionRecord) bool { return a.Type == reconcile.TypeRelease })
}

// plannedRenders holds, per release ID, the digest of the manifest and
// hooks the newest plan of this process rendered (rememberRender). The
// apply's own plan runs in the apply's process right before it, and
// Terraform holds it to the plan shown: an install or upgrade that
// rendered the same bytes deployed what was planned, which then needs no
// object by object comparison (a second reading of a big manifest).
var plannedRenders sync.Map

// renderDigest is the digest of a render's manifest and hooks.
func renderDigest(manifest string, hooks []*helm.Hook) [sha256.Size]byte {
	return sha256.Sum256([]byte(manifest + "\x00" + hooksManifest(hooks)))
}

// rememberRender records what the plan of release id rendered.
func rememberRender(id, manifest string, hooks []*helm.Hook) {
	plannedRenders.Store(id, renderDigest(manifest, hooks))
}

// renderedAsPlanned tells whether latest is, byte for byte, what this
// process's newest plan of release id rendered.
func renderedAsPlanned(id string, latest *helm.Release) bool {
	planned, ok := plannedRenders.Load(id)
	return ok && latest != nil && planned == renderDigest(latest.Manifest, latest.Hooks)
}

// reportDeployedOtherwise fails the apply of a release whose install or
// upgrade rendered other objects than the plan showed: an input of the
// render (a lookup's object, a kind the cluster serves) changed between
// the plan and the action. The state records what is deployed, never
// the plan's objects.
func reportDeployedOtherwise(diags *diag.Diagnostics, ds flux.RenderDifferences, id string, create bool) {
	remedy := "The release is deployed as Helm rendered it, and the state records that: the next plan compares the configuration with it."
	if create {
		remedy = "The release is deployed as Helm rendered it, and the state records that, but Terraform marks a failed create tainted: run terraform untaint on this resource, so that the next apply does not reinstall it."
	}
	diags.AddError("Release deployed otherwise than planned",
		fmt.Sprintf("helmrelease_release %s: Helm's install or upgrade rendered the chart otherwise than the plan did:\n%s\nThe chart reads more than its values (objects its templates look up, the kinds the cluster serves), and the action read otherwise than the plan: it changed between them. %s", id, ds.Lines(), remedy))
}

// saveSuspended records the configuration of a suspended release.
func (r *releaseResource) saveSuspended(ctx context.Context, m *releaseModel, st *reconcile.Status, out *tfsdk.State, diags *diag.Diagnostics) {
	for _, v := range []*types.String{&m.ChartVersion, &m.AppVersion, &m.ChartDigest, &m.Notes, &m.Description} {
		if v.IsUnknown() {
			*v = types.StringValue("")
		}
	}
	if m.ChartSourceRevision.IsUnknown() {
		m.ChartSourceRevision = types.StringNull()
	}
	if m.Resources.IsUnknown() {
		m.Resources = types.MapValueMust(types.StringType, nil)
	}
	settlePlanned(m, nil, nil, nil, diags)
	if m.Status.IsUnknown() || m.Status.IsNull() {
		status, d := statusObject(ctx, st)
		diags.Append(d...)
		m.Status = status
	}
	diags.Append(setRelease(ctx, &out.Raw, m)...)
}

// letGo leaves the release as it is: the provider's process holds nothing
// of it between runs, and its origin labels are taken over by the next
// engine's first upgrade.
func (helmEngine) letGo(context.Context, *releaseModel, *diag.Diagnostics) (adopt, ok bool) {
	return false, true
}
