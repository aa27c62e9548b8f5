package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

func (r *releaseResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.apply(ctx, req.Plan, req.Config, nil, nil, &resp.State, resp.Private, resp.Identity, &resp.Diagnostics)
}

func (r *releaseResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.apply(ctx, req.Plan, req.Config, &req.State, req.Private, &resp.State, resp.Private, resp.Identity, &resp.Diagnostics)
}

// apply reads the plan, the configuration and the prior state, then has
// the engine of the plan apply it (releaseEngine.apply).
func (r *releaseResource) apply(ctx context.Context, planned tfsdk.Plan, cfg tfsdk.Config, prior *tfsdk.State, priorPrivate privateGetter, out *tfsdk.State, private privateSetter, identity *tfsdk.ResourceIdentity, diags *diag.Diagnostics) {
	op := &applyOp{m: &releaseModel{}, config: &releaseModel{}, st: &reconcile.Status{}, priorPrivate: priorPrivate, out: out, private: private, identity: identity, diags: diags}
	diags.Append(releaseModelOf(ctx, planned.Raw, op.m)...)
	diags.Append(releaseModelOf(ctx, cfg.Raw, op.config)...)
	if prior != nil {
		op.prior = &releaseModel{}
		diags.Append(releaseModelOf(ctx, prior.Raw, op.prior)...)
		s, d := statusOf(ctx, op.prior.Status)
		diags.Append(d...)
		op.st = s
	}
	if diags.HasError() || r.data == nil {
		return
	}
	fillIdentity(op.m, op.config)
	diags.Append(private.SetKey(ctx, privateDrift, nil)...)
	diags.Append(private.SetKey(ctx, privateDriftChanges, nil)...)
	r.engineOf(op.m).apply(ctx, op)
}

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
	takeBack := prior != nil && prior.handedToFlux()
	if takeBack && !r.releaseFromFlux(ctx, prior, diags) {
		return
	}

	if m.Suspend.ValueBool() {
		r.saveSuspended(ctx, m, st, out, diags)
		diags.Append(setIdentity(ctx, identity, m)...)
		return
	}
	spec := m.spec(ctx, diags)
	if prior != nil && priorPrivate != nil {
		requestsOf(ctx, priorPrivate, diags).Apply(spec)
	}
	// Taken back from Flux: the release is the controller's, labelled as
	// its own, and becomes this resource's with the next upgrade.
	spec.Adopt = spec.Adopt || takeBack
	wo := writeOnlyOf(ctx, config, diags)
	red := r.redactorFor(ctx, m, wo)
	ctx = red.context(ctx)
	defer red.finish(ctx, out, diags)
	resolved := r.resolveChart(ctx, m, wo, false, diags)
	if diags.HasError() {
		return
	}
	if chartChangedSincePlan(m, resolved, diags) {
		return
	}
	values := r.composeValues(ctx, m, wo, red, diags)
	ctx = red.context(ctx)
	if diags.HasError() {
		return
	}
	sensitive := sensitivePaths(values, red.values)
	saveSensitivePaths(ctx, private, sensitive, diags)
	ctx, e := r.newEngine(ctx, m, spec, red, diags)
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

// chartChangedSincePlan refuses, in both engines, an apply whose chart
// resolves to another revision or digest than its plan did.
func chartChangedSincePlan(m *releaseModel, resolved *chartsource.Resolved, diags *diag.Diagnostics) bool {
	if !m.ChartVersion.IsUnknown() && m.ChartVersion.ValueString() != resolved.Version {
		attrError(diags, path.Root("chart").AtName("version"), "Chart changed since the plan",
			fmt.Sprintf("The plan was made with chart revision %s, but the chart now resolves to %s (%s).", m.ChartVersion.ValueString(), resolved.Version, strings.Join(resolved.RevisionChanges(m.ChartVersion.ValueString()), "; ")),
			"Plan again to review the change, or pin chart.version to the version you reviewed; a local chart must not change between plan and apply.")
		return true
	}
	// An empty planned digest with a known one now: an adopted release
	// planned without a Helm action (planDriftCorrection).
	if !m.ChartDigest.IsUnknown() && m.ChartDigest.ValueString() != "" && m.ChartDigest.ValueString() != resolved.Digest {
		attrError(diags, path.Root("chart").AtName("version"), "Chart changed since the plan",
			fmt.Sprintf("The plan was made with chart %s of digest %s, but it was published again with digest %s.", resolved.Version, m.ChartDigest.ValueString(), resolved.Digest),
			"Plan again to review the chart published again.")
		return true
	}
	return false
}

// deployedResources is the resources attribute of the latest release (an
// empty map when there is none).
func (r *releaseResource) deployedResources(ctx context.Context, e *reconcile.Reconciler, latest *helm.Release, sensitive [][]string, diags *diag.Diagnostics) types.Map {
	empty := types.MapValueMust(types.StringType, nil)
	if latest == nil {
		return empty
	}
	resources, err := displayResources(ctx, e, latest, nil, sensitive)
	if err != nil {
		diags.AddWarning("Release objects not readable", err.Error())
		return empty
	}
	return resources
}

// releaseInfo is the notes and description of the latest release; when it
// cannot be read, the known values of notes and description stay and
// unknown ones become empty.
func releaseInfo(latest *helm.Release, err error, notes, description types.String) (types.String, types.String) {
	switch {
	case err == nil && latest != nil && latest.Info != nil:
		return types.StringValue(latest.Info.Notes), types.StringValue(latest.Info.Description)
	case err == nil:
		return types.StringValue(""), types.StringValue("")
	}
	if notes.IsUnknown() {
		notes = types.StringValue("")
	}
	if description.IsUnknown() {
		description = types.StringValue("")
	}
	return notes, description
}

// withUnknownsFrom is planned with its unknown elements taken from
// deployed (dropped when deployed lacks them).
func withUnknownsFrom(planned, deployed types.Map) types.Map {
	elems := make(map[string]attr.Value, len(planned.Elements()))
	for k, v := range planned.Elements() {
		if !v.IsUnknown() {
			elems[k] = v
		} else if d, ok := deployed.Elements()[k]; ok {
			elems[k] = d
		}
	}
	return types.MapValueMust(types.StringType, elems)
}

// settlePlanned makes the planned hooks and CRDs an apply saves known
// where its plan could not tell them: the hooks of the release it left
// (none without one), no CRDs.
func settlePlanned(m *releaseModel, e *reconcile.Reconciler, latest *helm.Release, sensitive [][]string, diags *diag.Diagnostics) {
	if !fullyKnown(m.PlannedHooks) {
		deployed := deployedHooks(e, latest, sensitive, diags)
		if m.PlannedHooks.IsUnknown() {
			m.PlannedHooks = deployed
		} else {
			m.PlannedHooks = withUnknownsFrom(m.PlannedHooks, deployed)
		}
	}
	if m.PlannedChanges.IsUnknown() {
		// Not known at plan (its inputs were not): describes no plan.
		m.PlannedChanges = types.MapNull(types.StringType)
	}
	if m.PlannedCRDs.IsUnknown() {
		m.PlannedCRDs = types.MapNull(types.StringType)
	} else if !fullyKnown(m.PlannedCRDs) {
		m.PlannedCRDs = withUnknownsFrom(m.PlannedCRDs, types.MapValueMust(types.StringType, nil))
	}
}

// deployedHooks is the hooks of the latest release as planned_hooks shows
// them (none without a release).
func deployedHooks(e *reconcile.Reconciler, latest *helm.Release, sensitive [][]string, diags *diag.Diagnostics) types.Map {
	deployed := types.MapValueMust(types.StringType, nil)
	if e == nil || latest == nil {
		return deployed
	}
	shown, _, err := showManifest(hooksManifest(latest.Hooks), latest.Namespace, engineScope(e), nil, display{Key: e.Key, Sensitive: stringsAt(latest.Config, sensitive)})
	if err != nil {
		diags.AddWarning("Release hooks not readable", err.Error())
		return deployed
	}
	return types.MapValueMust(types.StringType, stringValues(shown))
}

func stringValues(m map[string]string) map[string]attr.Value {
	out := make(map[string]attr.Value, len(m))
	for k, v := range m {
		out[k] = types.StringValue(v)
	}
	return out
}

// saveSuspended records the configuration of a suspended release.
func (r *releaseResource) saveSuspended(ctx context.Context, m *releaseModel, st *reconcile.Status, out *tfsdk.State, diags *diag.Diagnostics) {
	for _, v := range []*types.String{&m.ChartVersion, &m.AppVersion, &m.ChartDigest, &m.Notes, &m.Description} {
		if v.IsUnknown() {
			*v = types.StringValue("")
		}
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
