package provider

import (
	"context"
	"errors"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/tfvalue"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/values"
)

func (r *releaseResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.apply(ctx, req.Plan, req.Config, nil, nil, &resp.State, resp.Private, resp.Identity, &resp.Diagnostics)
}

func (r *releaseResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.apply(ctx, req.Plan, req.Config, &req.State, req.Private, &resp.State, resp.Private, resp.Identity, &resp.Diagnostics)
}

// applyOp is what an apply is given: the plan (m), the configuration, the
// prior state (nil for a create) and its status (empty for a create), and
// where the result goes.
type applyOp struct {
	m, config    *releaseModel
	prior        *releaseModel
	st           *reconcile.Status
	priorPrivate privateGetter
	out          *tfsdk.State
	private      privateSetter
	identity     *tfsdk.ResourceIdentity
	diags        *diag.Diagnostics
}

// releaseRun is a release as an apply decoded it, for its engine to run
// (engine.run): the apply's inputs, the spec, the chart resolved, the
// values as configured and as composed, where the sensitive ones land, and
// the reconciler on the release's cluster, whose Key is the state's.
type releaseRun struct {
	*applyOp
	spec      *reconcile.Spec
	wo        writeOnly
	red       *redactor
	resolved  *chartsource.Resolved
	input     *values.Input
	values    map[string]any
	sensitive [][]string
	e         *reconcile.Reconciler
	// takeBack says the release was let go by the engine that ran it, for
	// this one to adopt (engine.letGo).
	takeBack bool
}

// applied is what an engine's run did to a release, for the apply to
// record: the release's status; whether it is deployed as planned (else
// the state records the objects deployed); the engine's check of what it
// deployed against the plan, run when it is (compare; nil when it deploys
// the plan as rendered), which reports true when the state must record the
// deployed objects; and its report of the run, once the state is saved.
type applied struct {
	status    *reconcile.Status
	asPlanned bool
	// pending says the engine returned before the release was deployed
	// (flux.wait = false): the state records the plan's objects, those the
	// plan did not know null, until the next refresh reads what was
	// deployed.
	pending        bool
	sourceVerified string
	compare        func(ctx context.Context, latest *helm.Release, deployed func() types.Map) bool
	report         func(ctx context.Context, latestRead bool)
}

// apply reads the plan, the configuration and the prior state, decodes the
// release (chart, values, reconciler), has the engine of the plan run it
// (engine.run), and saves what it did, even when it failed: the status,
// failure counters and history, so that the next plan knows (a failed
// create also leaves the resource tainted, as Terraform does with any
// failed create: the next apply installs it afresh, and destroying it
// removes what was written). Nothing is saved of a create the engine
// refused.
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
	m := op.m
	fillIdentity(m, op.config)
	diags.Append(private.SetKey(ctx, privateDrift, nil)...)
	diags.Append(private.SetKey(ctx, privateDriftChanges, nil)...)
	dropChartPin(ctx, private, diags)
	diags.Append(private.SetKey(ctx, privateDeployedChart, nil)...)
	// What the refresh read before this apply: a plan without a refresh
	// after it reads the inputs anew.
	diags.Append(private.SetKey(ctx, privateInputs, nil)...)
	if !r.waitForKinds(ctx, m, diags) {
		return
	}
	eng := r.engineOf(m)
	takeBack, ok := handOver(ctx, r, eng, op)
	if !ok {
		return
	}
	if m.Suspend.ValueBool() && !eng.runsSuspended() {
		r.saveSuspended(ctx, m, op.st, out, diags)
		diags.Append(setIdentity(ctx, identity, m)...)
		return
	}
	run := &releaseRun{applyOp: op, spec: eng.spec(ctx, m, diags), wo: writeOnlyOf(ctx, op.config, diags), takeBack: takeBack}
	run.red = r.redactorFor(ctx, m, run.wo)
	ctx = run.red.context(ctx)
	defer run.red.finish(ctx, out, diags)
	if ctx = r.decodeRun(ctx, eng, run); diags.HasError() || run.e == nil {
		return
	}
	a := eng.run(ctx, run)
	if a == nil {
		return
	}
	latestRead := r.record(ctx, run, a)
	diags.Append(setRelease(ctx, &out.Raw, m)...)
	diags.Append(setIdentity(ctx, identity, m)...)
	a.report(ctx, latestRead)
}

// decodeRun resolves run's chart as planned, composes its values and makes
// its reconciler; the context returned masks the secrets found.
func (r *releaseResource) decodeRun(ctx context.Context, eng engine, run *releaseRun) context.Context {
	m, diags := run.m, run.diags
	if diags.HasError() {
		return ctx
	}
	var src chartsource.Source
	run.resolved, src = r.resolveChartSource(ctx, m, run.wo, !eng.loadsChart(), plannedChartPin(m), diags)
	if diags.HasError() || chartChangedSincePlan(m, run.resolved, diags) {
		return ctx
	}
	keepAppliedChart(ctx, run.private, src, run.resolved, diags)
	run.input = releaseValuesInput(ctx, m, run.wo, diags)
	run.values = r.composeReleaseValues(ctx, m, run.input, run.red, diags)
	ctx = run.red.context(ctx)
	if diags.HasError() {
		return ctx
	}
	run.sensitive = values.SensitivePaths(run.values, run.red.values)
	saveSensitivePaths(ctx, run.private, run.sensitive, diags)
	ctx, run.e = r.reconciler(ctx, m, run.spec, run.red, diags)
	if run.e == nil {
		return ctx
	}
	run.e.Key = secretHashKeyOf(ctx, run.priorPrivate, run.private, diags)
	return ctx
}

// record sets in run's model what the run did: the chart resolved, the
// status, and the objects (as planned where the release is deployed as
// planned and the plan knew them, as deployed otherwise), notes and
// description, from the release's newest revision; it says whether that
// revision was read.
func (r *releaseResource) record(ctx context.Context, run *releaseRun, a *applied) bool {
	m, e, diags := run.m, run.e, run.diags
	m.ChartVersion, m.AppVersion = types.StringValue(run.resolved.Version), types.StringValue(run.resolved.AppVersion)
	if m.ChartSourceRevision.IsUnknown() {
		// Known, it is the revision the plan resolved and pinned, or the
		// one deployed when no Helm action was planned (null after an
		// import: Helm's storage does not record it).
		m.ChartSourceRevision = stringOrNull(run.resolved.SourceRevision)
	}
	if m.ChartDigest.IsUnknown() {
		// Known, it is resolved.Digest or an adopted release's empty one.
		m.ChartDigest = types.StringValue(run.resolved.Digest)
	}
	applySourceVerified(ctx, m.Status, a.status, run.resolved.Verified, a.sourceVerified, diags)
	status, d := statusObject(ctx, a.status)
	diags.Append(d...)
	m.Status = status
	if a.pending {
		m.Resources, m.PlannedHooks = knownOrNull(m.Resources), knownOrNull(m.PlannedHooks)
		m.Notes, m.Description = releaseInfo(nil, errPending, m.Notes, m.Description)
		settlePlanned(m, nil, nil, nil, diags)
		return false
	}
	latest, latestErr := e.Helm.LastRelease(run.spec.GetReleaseName())
	if latestErr != nil && a.asPlanned {
		diags.AddWarning("Release objects not readable", latestErr.Error())
	}
	// Shown only where needed: a thousand objects take a while.
	deployed := sync.OnceValue(func() types.Map { return r.deployedResources(ctx, e, latest, run.sensitive, diags) })
	otherwise := a.asPlanned && latestErr == nil && a.compare != nil && a.compare(ctx, latest, deployed)
	switch {
	case !a.asPlanned || m.Resources.IsUnknown() || otherwise:
		m.Resources = deployed()
	case !tfvalue.FullyKnown(m.Resources):
		// Objects a render cannot reproduce: as deployed; the others stay
		// as planned (the same objects, written otherwise at most: a null
		// field left out).
		m.Resources = withUnknownsFrom(m.Resources, deployed())
	}
	m.Notes, m.Description = releaseInfo(latest, latestErr, m.Notes, m.Description)
	settlePlanned(m, e, latest, run.sensitive, diags)
	return latestErr == nil
}

// errPending is a release not deployed yet when its apply returned
// (applied.pending): nothing of it can be read.
var errPending = errors.New("not deployed yet")

// knownOrNull is objects with the elements a plan did not know null, and
// null when it knew none.
func knownOrNull(objects types.Map) types.Map {
	if objects.IsUnknown() {
		return types.MapNull(types.StringType)
	}
	if tfvalue.FullyKnown(objects) {
		return objects
	}
	elems := make(map[string]attr.Value, len(objects.Elements()))
	for k, v := range objects.Elements() {
		if v.IsUnknown() {
			v = types.StringNull()
		}
		elems[k] = v
	}
	return types.MapValueMust(types.StringType, elems)
}
