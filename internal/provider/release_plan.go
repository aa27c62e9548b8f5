package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// ModifyPlan resolves the chart and the values, decides whether the release
// needs a Helm action, and if so renders it (a dry-run install or upgrade
// the API server validates) into the planned resources; otherwise the
// planned resources are the release's as refreshed, with drifted objects
// put back. What is not known yet stays unknown.
//
// Each step below fills p.out, the planned attributes, or ends the plan;
// p.write writes them into the plan, once.
func (r *releaseResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if r.data == nil {
		return
	}
	if req.Plan.Raw.IsNull() {
		r.planDestroy(ctx, req, resp)
		return
	}
	p := r.releasePlanOf(ctx, req, resp)
	if p == nil {
		return
	}
	defer p.write(ctx)
	switch {
	case p.suspended():
	case p.deferred():
	case !p.supported(ctx):
	case !p.inputs(ctx):
	default:
		d := p.decide()
		p.act(ctx, d)
		p.planSourceVerified(ctx)
		p.unpinned(d)
	}
}

// unpinned plans as known after apply the chart, and what it renders, of
// a plan whose chart the apply's own plan may resolve otherwise: a create,
// a replacement, or an upgrade of a chart edited in the configuration (no
// refresh pinned it), from a version range, a moving reference, a bucket
// or a chart reference. Terraform hands the apply nothing of this plan, so
// promising the chart resolved now would end in "Provider produced
// inconsistent final plan" once the source moves; a warning says what it
// resolves now and how to plan it. So does an update that runs no Helm
// action now (a credential rotated, a release resumed), whose apply's own
// plan may find a Helm action to run; a plan of no change keeps the chart
// it shows, as nothing is applied.
func (p *releasePlan) unpinned(d decision) {
	noAction := p.state != nil && d.kind != decideAction
	if p.pinned || p.resolved == nil || (noAction && p.req.Plan.Raw.Equal(p.req.State.Raw)) {
		return
	}
	p.out.chartVersion, p.out.appVersion, p.out.chartDigest = types.StringUnknown(), types.StringUnknown(), types.StringUnknown()
	p.out.sourceRevision = types.StringUnknown()
	p.out.unknownObjects()
	p.out.notes, p.out.description = types.StringUnknown(), types.StringUnknown()
	p.out.status = types.ObjectUnknown(statusAttrTypes())
	if noAction {
		// The apply's plan decides again.
		p.out.action = types.StringUnknown()
	}
	if p.state != nil && !p.out.action.IsUnknown() {
		// Why, without what the chart the apply resolves again changes.
		verb, _, _ := strings.Cut(p.out.action.ValueString(), ":")
		why, chart := []string{"chart known after apply (no refresh pinned the chart the configuration names)"}, chartChanges(p.st, p.resolved)
		for _, w := range d.why {
			if !slices.Contains(chart, w) {
				why = append(why, w)
			}
		}
		p.out.action = types.StringValue(verb + ": " + strings.Join(why, "; "))
	}
	what := "created"
	switch {
	case noAction:
		what = "updated with no Helm action now, and no refresh pinned its chart (an import or move of a release that records no digest or revision of its chart, from an OCI tag, a Git branch or a bucket; write-only credentials; a release resumed)"
	case p.state != nil:
		what = "planned with a chart edited in the configuration"
	}
	from, remedy := "from a chart that names no single version", p.pinRemedy()
	if p.src.Reproducible() {
		var ranged []string
		for _, d := range p.resolved.Dependencies {
			if slices.Contains(p.resolved.RangedDependencies, d.Name) {
				ranged = append(ranged, d.Name+" "+d.Version)
			}
		}
		from = fmt.Sprintf("from a chart whose dependencies are built from version ranges (its charts/ lacks them and its Chart.lock pins none; now %s)", strings.Join(ranged, ", "))
		remedy = "To review them in the plan, keep the chart's Chart.lock (helm dependency update writes it) or its dependencies in charts/ beside Chart.yaml."
	}
	p.diags.AddAttributeWarning(path.Root("chart").AtName("version"), "Chart known after apply",
		fmt.Sprintf("helmrelease_release %s is %s, %s: it resolves to %s now, but Terraform plans the release again as it applies it, with nothing of this plan, and the source may have moved by then. The chart and the objects it renders are known after apply.\n\n%s Once applied, plans of this release take the chart each refresh resolves, and show it.",
			p.m.ID.ValueString(), what, from, chartsource.PinOf(p.resolved), remedy))
}

// pinRemedy says how to name the chart p resolved so that the plan shows it.
func (p *releasePlan) pinRemedy() string {
	if chartsource.IsOCI(p.src.Repository) && p.src.ChartRef == nil && strings.HasPrefix(p.resolved.Digest, "sha256:") {
		// A tag can be pushed again: only the manifest's digest is one chart.
		return fmt.Sprintf("To review them in the plan, name the manifest by its digest: chart.version = \"%s@%s\" (an OCI tag can be pushed again), or the pinned_version of a helmrelease_chart data source, which a saved plan keeps.", baseVersion(p.resolved), p.resolved.Digest)
	}
	return fmt.Sprintf("To review them in the plan, name one version: chart.version = \"%s\" (or the pinned_version of a helmrelease_chart data source, which a saved plan keeps), a Git tag or commit.", baseVersion(p.resolved))
}

// baseVersion is the chart version of r without the build metadata its
// revision adds.
func baseVersion(r *chartsource.Resolved) string {
	if len(r.Parts) == 0 {
		return r.Version
	}
	v, _, _ := strings.Cut(r.Version, "+")
	return v
}

// planDestroy refuses a destroy that cannot reach the release.
func (r *releaseResource) planDestroy(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	var state releaseModel
	resp.Diagnostics.Append(releaseModelOf(ctx, req.State.Raw, &state)...)
	if !resp.Diagnostics.HasError() {
		r.clusterOf(&state, &resp.Diagnostics)
	}
}

// releasePlan is one plan of a release being created or updated: what it
// is given, what the steps learn, and the attributes they plan.
type releasePlan struct {
	r     *releaseResource
	req   resource.ModifyPlanRequest
	resp  *resource.ModifyPlanResponse
	diags *diag.Diagnostics

	// m is the plan Terraform proposed, its identity filled; config the
	// configuration.
	m, config releaseModel
	// state is the prior state; nil for a create, and for a replacement
	// (uninstalled, then installed anew).
	state *releaseModel
	// engine runs the release; continuing says whether it ran it before
	// the plan too.
	engine     engine
	continuing bool
	cluster    *cluster
	red        *redactor

	// Set by inputs.
	wo       writeOnly
	resolved *chartsource.Resolved
	// src is the chart's source as resolved (with the refresh's pin).
	src    chartsource.Source
	spec   *reconcile.Spec
	values map[string]any
	// key is the state's key of Secret values' hashes; nil for a create.
	key []byte
	// st is the refreshed status (empty for a create).
	st *reconcile.Status
	// sameValues says whether the values are those of the last attempt.
	sameValues bool
	// pinned says whether the chart resolved is the one the apply's own
	// plan will resolve: pinned by the refresh, or named by the
	// configuration alone (chartsource.Source.Reproducible).
	pinned bool

	out planned
}

// planned are the attributes a plan computes, written into the plan in one
// place (releasePlan.write). They start as Terraform proposed them.
type planned struct {
	action                                types.String
	resources, hooks, crds, changes       types.Map
	dependencies                          types.Map
	status                                types.Object
	notes, description                    types.String
	chartVersion, appVersion, chartDigest types.String
	sourceRevision                        types.String
}

func plannedOf(m *releaseModel) planned {
	return planned{
		action: m.PlannedAction, resources: m.Resources, hooks: m.PlannedHooks, crds: m.PlannedCRDs, changes: m.PlannedChanges,
		status: m.Status, notes: m.Notes, description: m.Description,
		chartVersion: m.ChartVersion, appVersion: m.AppVersion, chartDigest: m.ChartDigest,
		sourceRevision: m.ChartSourceRevision, dependencies: m.PlannedDependencies,
	}
}

func (o planned) into(m *releaseModel) {
	m.PlannedAction, m.Resources, m.PlannedHooks, m.PlannedCRDs, m.PlannedChanges = o.action, o.resources, o.hooks, o.crds, o.changes
	m.Status, m.Notes, m.Description = o.status, o.notes, o.description
	m.ChartVersion, m.AppVersion, m.ChartDigest = o.chartVersion, o.appVersion, o.chartDigest
	m.ChartSourceRevision, m.PlannedDependencies = o.sourceRevision, o.dependencies
}

// unknownObjects plans the objects, hooks, CRDs and changes as known after
// apply.
func (o *planned) unknownObjects() {
	o.resources = types.MapUnknown(types.StringType)
	o.hooks, o.crds = types.MapUnknown(types.StringType), types.MapUnknown(types.StringType)
	o.changes = types.MapUnknown(types.StringType)
	o.dependencies = types.MapUnknown(types.StringType)
}

// releasePlanOf decodes the plan, the configuration and the prior state,
// fills the identity, and decides whether the release is replaced (a
// changed identity attribute or cluster: from a cluster the provider
// still reaches). The planned action starts as a create's install, or as
// the state has it. Nil when the plan must stop.
func (r *releaseResource) releasePlanOf(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) *releasePlan {
	p := &releasePlan{r: r, req: req, resp: resp, diags: &resp.Diagnostics}
	p.diags.Append(releaseModelOf(ctx, req.Plan.Raw, &p.m)...)
	p.diags.Append(releaseModelOf(ctx, req.Config.Raw, &p.config)...)
	if !req.State.Raw.IsNull() {
		p.state = &releaseModel{}
		p.diags.Append(releaseModelOf(ctx, req.State.Raw, p.state)...)
	}
	if p.diags.HasError() {
		return nil
	}
	fillIdentity(&p.m, &p.config)
	if p.cluster = r.clusterOf(&p.m, p.diags); p.cluster == nil {
		return nil
	}
	if p.state != nil {
		for _, a := range []struct {
			name          string
			planned, prev types.String
		}{
			{"name", p.m.Name, p.state.Name},
			{"namespace", p.m.Namespace, p.state.Namespace},
			{"release_name", p.m.ReleaseName, p.state.ReleaseName},
			{"target_namespace", p.m.TargetNamespace, p.state.TargetNamespace},
			{"storage_namespace", p.m.StorageNamespace, p.state.StorageNamespace},
			{"cluster", p.m.Cluster, p.state.Cluster},
		} {
			if !a.planned.Equal(a.prev) {
				resp.RequiresReplace = append(resp.RequiresReplace, path.Root(a.name))
			}
		}
		if len(resp.RequiresReplace) > 0 {
			// The release is uninstalled, then installed anew: from a
			// cluster the provider still reaches.
			if r.clusterOf(p.state, p.diags) == nil {
				return nil
			}
			p.state = nil
		}
	}
	p.engine = r.engineOf(&p.m)
	p.continuing = r.ranBy(p.state, p.engine)
	// Only this plan's render may vouch for the apply's objects.
	p.diags.Append(resp.Private.SetKey(ctx, privateValidated, nil)...)
	p.red = newRedactor(nil, nil)

	// A create installs; an update runs no Helm action unless decide
	// finds one (as refreshed: null, or with -refresh=false the last one,
	// rather than show it going away).
	p.out = plannedOf(&p.m)
	p.out.action = types.StringValue("install")
	p.out.hooks, p.out.crds = types.MapUnknown(types.StringType), types.MapUnknown(types.StringType)
	p.out.changes = types.MapUnknown(types.StringType)
	p.out.dependencies = types.MapUnknown(types.StringType)
	if p.state != nil {
		p.out.action = p.state.PlannedAction
		p.out.hooks, p.out.crds = p.state.PlannedHooks, p.state.PlannedCRDs
		p.out.changes = p.state.PlannedChanges
		p.out.dependencies = p.state.PlannedDependencies
	}
	return p
}

// write writes the planned attributes into the plan, with secrets masked
// and objects shown as plan_detail says, and masks secrets in the
// diagnostics.
func (p *releasePlan) write(ctx context.Context) {
	m := &p.m
	p.out.into(m)
	p.red.model(ctx, m, p.diags)
	if !m.showsChanges() {
		m.PlannedChanges = types.MapNull(types.StringType)
	}
	if !m.showsNames() {
		// Shown as digests (plan_detail was names): the apply shows
		// them again in full.
		if showsDigests(m.Resources) {
			m.Resources = types.MapUnknown(types.StringType)
		}
		if showsDigests(m.PlannedHooks) || showsDigests(m.PlannedCRDs) {
			m.PlannedHooks, m.PlannedCRDs = types.MapNull(types.StringType), types.MapNull(types.StringType)
		}
	}
	p.diags.Append(setRelease(ctx, &p.resp.Plan.Raw, m)...)
	p.resp.Diagnostics = p.red.diagnostics(p.resp.Diagnostics)
}

// suspended plans a suspended release: the configuration is recorded, and
// nothing else changes (a create plans no action). It reports whether the
// release is suspended; the plan then ends.
func (p *releasePlan) suspended() bool {
	if !p.m.Suspend.ValueBool() {
		return false
	}
	if p.state == nil {
		p.out.action = types.StringNull()
		p.out.hooks, p.out.crds = types.MapNull(types.StringType), types.MapNull(types.StringType)
		p.out.changes, p.out.dependencies = types.MapNull(types.StringType), types.MapNull(types.StringType)
	} else {
		s := p.state
		p.out.chartVersion, p.out.appVersion, p.out.chartDigest = s.ChartVersion, s.AppVersion, s.ChartDigest
		p.out.sourceRevision = s.ChartSourceRevision
		p.out.notes, p.out.description = s.Notes, s.Description
		p.out.resources, p.out.status = s.Resources, s.Status
	}
	p.diags.AddWarning("Release suspended",
		fmt.Sprintf("helmrelease_release %s is suspended: the configuration is recorded in the state, but no Helm action runs and drift is not reported.\n\nSet suspend = false to roll the changes out.", p.m.ID.ValueString()))
	return true
}

// deferred defers the plan, where Terraform allows it, while the
// cluster's settings are not known: Terraform plans it again once they
// are. It reports whether the plan was deferred.
func (p *releasePlan) deferred() bool {
	if p.cluster.known() || !p.req.ClientCapabilities.DeferralAllowed {
		return false
	}
	p.resp.Deferred = &resource.Deferred{Reason: resource.DeferredReasonProviderConfigUnknown}
	return true
}

// supported checks that the release's cluster can run it on its engine,
// once the cluster's settings are known.
func (p *releasePlan) supported(ctx context.Context) bool {
	return !p.cluster.known() || p.engine.planSupported(ctx, &p.m, p.diags)
}
