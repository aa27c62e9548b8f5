package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/flux"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/tfvalue"
)

// Flux's helm-controller renders with its own Helm, whose version may
// render some objects otherwise than this provider's plan did
// (flux.RenderDifferences). Such a difference is never left to
// Terraform's "inconsistent result" error: the apply fails naming it, the
// state records what is deployed, and the differences are kept so that the
// next plans show the controller's render for those fields.

// differencesFrom compares the known planned objects with the deployed
// ones; an object planned unknown is not compared, nor are any when the
// plan knew none (a create whose chart is known after apply).
func differencesFrom(planned, deployed types.Map) flux.RenderDifferences {
	if planned.IsUnknown() {
		return nil
	}
	p, d := map[string]string{}, map[string]string{}
	for key, v := range planned.Elements() {
		if s, ok := v.(types.String); ok && !s.IsUnknown() && !s.IsNull() {
			p[key] = s.ValueString()
		}
	}
	for key, v := range deployed.Elements() {
		_, inPlan := planned.Elements()[key]
		if _, known := p[key]; inPlan && !known {
			continue
		}
		if s, ok := v.(types.String); ok {
			d[key] = s.ValueString()
		}
	}
	return flux.RenderDifferencesOf(p, d)
}

// reportRenderDifferences fails the apply of a release the controller
// deployed otherwise than planned, and keeps the differences for the next
// plans; with none, it clears what an earlier apply kept.
func reportRenderDifferences(ctx context.Context, ds flux.RenderDifferences, id, controller string, create bool, private privateSetter, diags *diag.Diagnostics) {
	if len(ds) == 0 {
		diags.Append(private.SetKey(ctx, privateFluxRender, nil)...)
		return
	}
	b, _ := json.Marshal(ds) // maps of strings
	diags.Append(private.SetKey(ctx, privateFluxRender, b)...)
	remedy := "The release is deployed and ready as the controller rendered it, and the state records that; the next plans show the controller's render for these fields, so the plan after this apply is empty."
	if create {
		remedy = "The release is deployed and ready as the controller rendered it, and the state records that, but Terraform marks a failed create tainted: run terraform untaint on this resource, so that the next apply does not reinstall it. The next plans show the controller's render for these fields."
	}
	diags.AddError("Controller deployed otherwise than planned",
		fmt.Sprintf("helmrelease_release %s: %s rendered the chart otherwise than this provider's plan did (its Helm renders these fields otherwise):\n%s\n%s If the difference matters, pin a helm-controller version that renders as the plan does (see the guide \"Handing releases to Flux\": render differences by controller version), or change the chart's template.", id, controller, ds.Lines(), remedy))
}

// renderDifferencesOf are the differences an earlier apply kept.
func renderDifferencesOf(ctx context.Context, get privateGetter, diags *diag.Diagnostics) flux.RenderDifferences {
	if get == nil {
		return nil
	}
	raw, d := get.GetKey(ctx, privateFluxRender)
	diags.Append(d...)
	var out flux.RenderDifferences
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &out) // written by the apply; nothing known otherwise
	}
	return out
}

// asTheControllerRenders is the planned resources with the fields the
// controller is known to deploy otherwise (ds) set as it deploys them
// (flux.RenderDifferences.AsDeployed): what the controller will deploy.
func asTheControllerRenders(planned types.Map, ds flux.RenderDifferences) types.Map {
	if len(ds) == 0 || planned.IsUnknown() || planned.IsNull() {
		return planned
	}
	elems := maps.Clone(planned.Elements())
	for key, v := range elems {
		p, ok := v.(types.String)
		if !ok || p.IsUnknown() || p.IsNull() {
			continue
		}
		if y, ok := ds.AsDeployed(key, p.ValueString()); ok {
			elems[key] = types.StringValue(y)
		}
	}
	return types.MapValueMust(types.StringType, elems)
}

// renderedOtherwise compares what the controller deployed (deployed, and
// latest's hooks) with the plan's render (m's resources and planned
// hooks), and returns the differences to report; with some, m's planned
// hooks become the deployed ones (the apply records its objects as
// deployed).
func renderedOtherwise(e *reconcile.Reconciler, m *releaseModel, latest *helm.Release, deployed types.Map, sensitive [][]string, diags *diag.Diagnostics) flux.RenderDifferences {
	differences := differencesFrom(m.Resources, deployed)
	if hooks := deployedHooks(e, latest, sensitive, diags); tfvalue.FullyKnown(hooks) && !m.PlannedHooks.IsUnknown() && !m.PlannedHooks.IsNull() {
		for key, ds := range differencesFrom(m.PlannedHooks, hooks) {
			differences["hook "+key] = ds
		}
		if len(differences) > 0 {
			m.PlannedHooks = hooks
		}
	}
	return differences
}
