package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/show"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/values"
)

// render renders the release the next install or upgrade makes into the
// planned objects, hooks, CRDs and changes, after checking that the
// release may be acted on (a create: engine.allowCreate). Secret values
// show hashed with the state's key; without one (a create: the key is made
// when it applies) Secrets are known after apply. What the engine is known
// to deploy otherwise is planned as it deploys it (engine.asDeployed).
// Without a known cluster, the objects are known after apply.
func (p *releasePlan) render(ctx context.Context) {
	r, plan, wo, spec, resolved, composed, red, diags := p.r, &p.m, p.wo, p.spec, p.resolved, p.values, p.red, p.diags
	create, hashKey, private := p.state == nil, p.key, p.resp.Private
	p.out.unknownObjects()
	if !p.cluster.known() {
		return
	}
	ctx, e := r.reconcilerOn(ctx, plan, spec, red, p.engine.settledRender(), diags)
	if e == nil {
		return
	}
	// What the render's validation passed, for the apply of this plan.
	defer saveValidated(ctx, private, e, diags)
	asInstall := false
	if create {
		latest, err := e.Helm.LastRelease(spec.GetReleaseName())
		if err != nil {
			clusterUnavailable(diags, path.Root("release_name"), err)
			return
		}
		ok := false
		if asInstall, ok = p.engine.allowCreate(ctx, plan, spec, latest, diags); !ok {
			return
		}
	}
	if resolved.Chart == nil {
		// Only the version was resolved, from the index: now the chart,
		// that version's (a range resolved again, in another process,
		// could name a newer one).
		if resolved = r.resolveChart(ctx, plan, wo, false, chartPin{Revision: plan.ChartSourceRevision, Resolution: chartsource.PinOf(resolved)}, diags); resolved == nil {
			return
		}
	}
	p.out.dependencies = dependenciesMap(resolved.Dependencies)
	// The hooks of the first render, and of the perturbed one when the
	// chart calls random or time functions.
	var hooks, perturbedHooks []*helm.Hook
	perturbedRan := false
	var lookups *helm.Lookups
	if helm.UsesLookup(resolved.Chart, composed) {
		lookups = &helm.Lookups{}
	}
	render := func(ctx context.Context, c *helm.Chart, v map[string]any, perturbed bool) (string, string, error) {
		req := &reconcile.Request{Spec: spec, Chart: c, Values: v, Status: &reconcile.Status{}, AsInstall: asInstall}
		if !perturbed {
			req.Lookups = lookups
		}
		dryRun := e.DryRun
		if perturbed {
			dryRun = e.Render
		}
		rel, err := dryRun(ctx, req)
		if err != nil {
			return "", "", err
		}
		if perturbed {
			perturbedRan, perturbedHooks = true, rel.Hooks
		} else {
			hooks = rel.Hooks
			rememberRender(plan.ID.ValueString(), rel.Manifest, rel.Hooks)
		}
		return rel.Manifest, "", nil
	}
	opts := show.Options{Key: hashKey, Sensitive: values.StringsAt(composed, values.SensitivePaths(composed, red.values))}
	rendered, err := show.Release(ctx, render, resolved.Chart, composed, spec.GetTargetNamespace(), releaseScope(e), opts)
	if err != nil && unreachable(ctx, e, err) {
		clusterUnreachable(diags, plan.ID.ValueString(), err)
		return
	}
	if err != nil && p.lockedWhileRendering(e) {
		return
	}
	if err != nil {
		renderError(diags, err, "Release does not render",
			"Fix the values, the post-renderers or the chart so that the release renders and the cluster accepts its objects (the plan ran a dry-run "+map[bool]string{true: "install", false: "upgrade"}[create]+" validated by the API server).")
		return
	}
	if p.checkLookups(ctx, lookups); diags.HasError() {
		return
	}
	saveLookupCalls(ctx, private, lookups, diags)
	if len(rendered.Unreproducible) > 0 {
		logInfo(ctx, "objects not reproducible by a render are planned as known after apply", map[string]any{"release": plan.ID.ValueString(), "objects": rendered.Unreproducible})
	}
	p.out.resources = renderedResources(rendered, hashKey == nil)
	if asDeployed := p.engine.asDeployed(ctx, p.req.Private, p.continuing, diags); asDeployed != nil {
		p.out.resources = asDeployed(p.out.resources)
	}
	p.unservedKinds(e)
	if plan.showsChanges() {
		var before map[string]string
		if !create && !asInstall {
			before = r.shownBefore(e, spec, composed, red, opts, diags)
		}
		p.out.changes = plannedChanges(before, p.out.resources)
	}
	install := strings.HasPrefix(p.out.action.ValueString(), "install")
	crds, err := e.CRDsToWrite(&reconcile.Request{Spec: spec, Chart: resolved.Chart}, install)
	if err != nil {
		attrError(diags, path.Root("chart"), "Chart CRDs not readable", err.Error()+".", "Check the chart's crds/ files and that the provider's credentials may read CustomResourceDefinitions.")
		return
	}
	planned := func(manifest string) types.Map {
		shown, masked, err := show.Manifest(manifest, spec.GetTargetNamespace(), releaseScope(e), nil, opts)
		if err != nil {
			diags.AddWarning("Hooks or CRDs not shown", err.Error())
			return types.MapUnknown(types.StringType)
		}
		return renderedResources(&show.Rendering{Shown: shown, Masked: masked}, hashKey == nil)
	}
	p.out.hooks, p.out.crds = planned(hooksManifest(hooks)), planned(crds)
	if rendered.SetUnreproducible || perturbedRan && hooksManifest(perturbedHooks) != hooksManifest(hooks) {
		// Hooks another render makes otherwise (random names, as
		// podinfo's tests have): known after apply, from the release.
		p.out.hooks = types.MapUnknown(types.StringType)
	}
}

// lockedWhileRendering reports a render refused because another client
// took the release's lock after the refresh (Helm's "another operation is
// in progress"): the plan goes on with the objects known after apply, and
// says who holds the lock and what to do. The Flux engine renders from
// the settled revision and never meets it.
func (p *releasePlan) lockedWhileRendering(e *reconcile.Reconciler) bool {
	latest, err := e.Helm.LastRelease(p.spec.GetReleaseName())
	if err != nil || latest == nil || !latest.Info.Status.IsPending() {
		return false
	}
	reason := reconcile.LockedReason(latest)
	p.diags.AddWarning("Release locked by another operation",
		fmt.Sprintf("helmrelease_release %s: %s. The plan cannot render the release until that operation ends: its objects are known after apply.\n\nWait for it to end (it times out after its own timeout), then plan again. The apply refuses a lock that its action's timeout may still cover, and marks a stale one failed before it acts.", p.m.ID.ValueString(), reason))
	if a := p.out.action.ValueString(); a != "" && !p.out.action.IsUnknown() {
		p.out.action = types.StringValue(a + "; " + reason)
	}
	return true
}

// dependenciesMap is planned_dependencies of a chart's subcharts.
func dependenciesMap(deps []chartsource.Dependency) types.Map {
	elems := make(map[string]attr.Value, len(deps))
	for _, d := range deps {
		elems[d.Name] = types.StringValue(d.Version)
	}
	return types.MapValueMust(types.StringType, elems)
}
