package provider

import (
	"context"
	"errors"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// apply runs the engine's atomic loop until the release is in sync or
// remediation is exhausted, and saves what it did: the status, failure
// counters and history are saved even when it fails, so that the next plan
// knows (a failed create also leaves the resource tainted, as Terraform
// does with any failed create: the next apply installs it afresh).
func (h helmEngine) apply(ctx context.Context, op *applyOp) {
	r, m, config, st, diags := h.r, op.m, op.config, op.st, op.diags
	prior, priorPrivate, out, private, identity := op.prior, op.priorPrivate, op.out, op.private, op.identity
	diags.Append(private.SetKey(ctx, privateFlux, nil)...)
	diags.Append(private.SetKey(ctx, privateFluxRender, nil)...)
	takeBack, ok := handOver(ctx, r, h, op)
	if !ok {
		return
	}

	if m.Suspend.ValueBool() {
		r.saveSuspended(ctx, m, st, out, diags)
		diags.Append(setIdentity(ctx, identity, m)...)
		return
	}
	spec := h.spec(ctx, m, diags)
	if prior != nil && priorPrivate != nil {
		requestsOf(ctx, priorPrivate, diags).Apply(spec)
	}
	// Taken back from another engine (Flux's controller): the release is
	// labelled as the controller's, and becomes this resource's with the
	// next upgrade.
	spec.Adopt = spec.Adopt || takeBack
	wo := writeOnlyOf(ctx, config, diags)
	red := r.redactorFor(ctx, m, wo)
	ctx = red.context(ctx)
	defer red.finish(ctx, out, diags)
	resolved := r.resolveChart(ctx, m, wo, false, chartPin{Revision: m.ChartSourceRevision}, diags)
	if diags.HasError() {
		return
	}
	if chartChangedSincePlan(m, resolved, diags) {
		return
	}
	values := r.releaseValues(ctx, m, wo, red, diags)
	ctx = red.context(ctx)
	if diags.HasError() {
		return
	}
	sensitive := sensitivePaths(values, red.values)
	saveSensitivePaths(ctx, private, sensitive, diags)
	ctx, e := r.reconciler(ctx, m, spec, red, diags)
	if e == nil {
		return
	}
	e.Key = secretHashKeyOf(ctx, priorPrivate, private, diags)
	if st.StorageNamespace == "" {
		st.StorageNamespace = spec.GetStorageNamespace()
	}
	request := &reconcile.Request{Spec: spec, Chart: resolved.Chart, ChartDigest: resolved.TrackedDigest, Values: values, Status: st}
	loadInSync(ctx, priorPrivate, e, diags)
	loadValidated(ctx, priorPrivate, e, diags)
	runErr := e.Reconcile(ctx, request, e.DriftDetector(spec))
	applySourceVerified(ctx, m.Status, st, resolved.Verified, "", diags)
	saveInSync(ctx, private, e, diags)
	saveValidated(ctx, private, nil, diags) // this plan's: used up
	if prior == nil && runErr != nil && (errors.Is(runErr, reconcile.ErrNotOwned) || len(st.History) == 0) {
		// Nothing was made (refused, or another apply took the name
		// first): no resource, so that destroying it can never uninstall
		// the release of another, and the next plan creates it again.
		reportRun(diags, m.ID.ValueString(), request.Actions, runErr, runNotCreated, unreachable(ctx, e, runErr))
		return
	}

	m.ChartVersion = types.StringValue(resolved.Version)
	m.AppVersion = types.StringValue(resolved.AppVersion)
	if m.ChartSourceRevision.IsUnknown() {
		// Known, it is the revision the plan resolved and pinned, or the
		// one deployed when no Helm action was planned (null after an
		// import: Helm's storage does not record it).
		m.ChartSourceRevision = stringOrNull(resolved.SourceRevision)
	}
	if m.ChartDigest.IsUnknown() {
		// Known, it is resolved.Digest or an adopted release's empty one.
		m.ChartDigest = types.StringValue(resolved.Digest)
	}
	status, d := statusObject(ctx, st)
	diags.Append(d...)
	m.Status = status
	latest, latestErr := e.Helm.LastRelease(spec.GetReleaseName())
	switch {
	case runErr != nil || m.Resources.IsUnknown():
		// What is deployed now; after a success, what was planned is.
		m.Resources = r.deployedResources(ctx, e, latest, sensitive, diags)
	case !fullyKnown(m.Resources):
		// Objects a render cannot reproduce: as deployed.
		m.Resources = withUnknownsFrom(m.Resources, r.deployedResources(ctx, e, latest, sensitive, diags))
	}
	m.Notes, m.Description = releaseInfo(latest, latestErr, m.Notes, m.Description)
	settlePlanned(m, e, latest, sensitive, diags)
	diags.Append(setRelease(ctx, &out.Raw, m)...)
	diags.Append(setIdentity(ctx, identity, m)...)
	kind := runUpdated
	if prior == nil {
		kind = runCreated
	}
	reportRun(diags, m.ID.ValueString(), request.Actions, runErr, kind, unreachable(ctx, e, runErr))
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
