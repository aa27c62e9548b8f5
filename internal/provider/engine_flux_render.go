package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"sigs.k8s.io/yaml"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// Flux's helm-controller renders with its own Helm, whose version may
// render some objects otherwise than this provider's plan did (a block
// scalar's final newline, an empty map written as null). Such a difference
// is never left to Terraform's "inconsistent result" error: the apply
// fails naming it, the state records what is deployed, and the
// differences are kept so that the next plans show the controller's
// render for those fields.

// renderDifference is a field the controller deployed otherwise than the
// plan rendered it, as resources shows them (JSON values; "(none)" where
// absent; Secret values hashed, sensitive strings hidden).
type renderDifference struct {
	Planned  string `json:"planned"`
	Deployed string `json:"deployed"`
}

// renderDifferences are the differences of a release: object key → JSON
// pointer → difference; the pointer "" stands for the whole object
// (planned and not deployed, or the other way round, or shown as digests).
type renderDifferences map[string]map[string]renderDifference

// differencesFrom compares the known planned objects with the deployed
// ones.
func differencesFrom(planned, deployed types.Map) renderDifferences {
	out := renderDifferences{}
	add := func(key, ptr string, d renderDifference) {
		if out[key] == nil {
			out[key] = map[string]renderDifference{}
		}
		out[key][ptr] = d
	}
	for key, v := range planned.Elements() {
		p, ok := v.(types.String)
		if !ok || p.IsUnknown() || p.IsNull() {
			continue
		}
		d, found := deployed.Elements()[key].(types.String)
		switch {
		case !found:
			add(key, "", renderDifference{Planned: "the object", Deployed: "(none)"})
		case strings.HasPrefix(p.ValueString(), objectDigestPrefix):
			if dig := objectDigests(types.MapValueMust(types.StringType, map[string]attr.Value{key: d})).Elements()[key].(types.String).ValueString(); dig != p.ValueString() {
				add(key, "", renderDifference{Planned: p.ValueString(), Deployed: dig})
			}
		case d.ValueString() != p.ValueString():
			plannedLeaves, deployedLeaves := storedLeaves(p.ValueString()), storedLeaves(d.ValueString())
			for ptr, pv := range plannedLeaves {
				if dv, ok := deployedLeaves[ptr]; !ok || dv != pv {
					add(key, ptr, renderDifference{Planned: pv, Deployed: orAbsent(dv, ok)})
				}
			}
			for ptr, dv := range deployedLeaves {
				if _, ok := plannedLeaves[ptr]; !ok {
					add(key, ptr, renderDifference{Planned: "(none)", Deployed: dv})
				}
			}
		}
	}
	for key := range deployed.Elements() {
		if _, ok := planned.Elements()[key]; !ok {
			add(key, "", renderDifference{Planned: "(none)", Deployed: "the object"})
		}
	}
	return out
}

// storedLeaves is leaves of an object shown as YAML as the API server
// stores it: a map entry set to null, an empty map or an empty list is no
// entry (one Helm writes podinfo's resources.limits as null where another
// leaves it out; Helm 3.19 writes an empty annotations as null; a chart's
// `annotations: {}` is kept by one render and left out by another, and
// the API server stores none of them), so both deploy the same.
func storedLeaves(y string) map[string]string {
	var obj any
	if err := yaml.Unmarshal([]byte(y), &obj); err != nil {
		return map[string]string{}
	}
	return leavesOf(withoutEmpty(obj))
}

// withoutEmpty is v without its maps' null, empty-map and empty-list
// entries, walked through lists; a map left empty is null too. That
// forgets an `emptyDir: {}` the other render lacks, a difference no two
// Helm renders of one chart make, to never name one that the API server
// stores alike.
func withoutEmpty(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			if e = withoutEmpty(e); e != nil {
				out[k] = e
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		if len(t) == 0 {
			return nil
		}
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = withoutEmpty(e)
		}
		return out
	}
	return v
}

// lines lists the differences, one field a line, in order.
func (ds renderDifferences) lines() string {
	var b strings.Builder
	for _, key := range slices.Sorted(maps.Keys(ds)) {
		for _, ptr := range slices.Sorted(maps.Keys(ds[key])) {
			d := ds[key][ptr]
			field := ptr
			if field == "" {
				field = "(the object)"
			}
			fmt.Fprintf(&b, "- %s %s: planned %s, deployed %s\n", key, field, d.Planned, d.Deployed)
		}
	}
	return b.String()
}

// reportRenderDifferences fails the apply of a release the controller
// deployed otherwise than planned, and keeps the differences for the next
// plans; with none, it clears what an earlier apply kept.
func reportRenderDifferences(ctx context.Context, ds renderDifferences, id, controller string, create bool, private privateSetter, diags *diag.Diagnostics) {
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
		fmt.Sprintf("helmrelease_release %s: %s rendered the chart otherwise than this provider's plan did (its Helm renders these fields otherwise):\n%s\n%s If the difference matters, pin a helm-controller version that renders as the plan does (see the guide \"Handing releases to Flux\": render differences by controller version), or change the chart's template.", id, controller, ds.lines(), remedy))
}

// renderDifferencesOf are the differences an earlier apply kept.
func renderDifferencesOf(ctx context.Context, get privateGetter, diags *diag.Diagnostics) renderDifferences {
	if get == nil {
		return nil
	}
	raw, d := get.GetKey(ctx, privateFluxRender)
	diags.Append(d...)
	var out renderDifferences
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &out) // written by the apply; nothing known otherwise
	}
	return out
}

// asTheControllerRenders is the planned resources with the fields the
// controller is known to deploy otherwise (ds) set as it deploys them,
// where the render still gives them the value it gave when the controller
// deployed them otherwise: what the controller will deploy. Other changes
// of the object stay; objects shown as digests, and differences of whole
// objects, are left as rendered.
func asTheControllerRenders(planned types.Map, ds renderDifferences) types.Map {
	if len(ds) == 0 || planned.IsUnknown() || planned.IsNull() {
		return planned
	}
	elems := maps.Clone(planned.Elements())
	for key, v := range elems {
		p, ok := v.(types.String)
		if !ok || p.IsUnknown() || p.IsNull() || ds[key] == nil || strings.HasPrefix(p.ValueString(), objectDigestPrefix) {
			continue
		}
		if y, ok := withDeployedFields(p.ValueString(), ds[key]); ok {
			elems[key] = types.StringValue(y)
		}
	}
	return types.MapValueMust(types.StringType, elems)
}

// withDeployedFields is the object shown as YAML with each field of ds
// that still has its planned value set to its deployed one, written as
// manifest.Display writes objects; false when none is.
func withDeployedFields(shown string, ds map[string]renderDifference) (string, bool) {
	var obj any
	useNumber := func(d *json.Decoder) *json.Decoder { d.UseNumber(); return d }
	if err := yaml.Unmarshal([]byte(shown), &obj, useNumber); err != nil {
		return "", false
	}
	root, ok := obj.(map[string]any)
	if !ok {
		return "", false
	}
	changed := false
	for ptr, d := range ds {
		if ptr == "" {
			continue
		}
		tokens := strings.Split(ptr, "/")[1:]
		for i := range tokens {
			tokens[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(tokens[i])
		}
		parent, last := containerAt(root, tokens)
		cur, present := childOf(parent, last)
		curJSON := "(none)"
		if present {
			b, err := json.Marshal(cur)
			if err != nil {
				continue
			}
			curJSON = string(b)
		}
		if curJSON != d.Planned {
			continue
		}
		var v any
		if d.Deployed != "(none)" {
			dec := json.NewDecoder(strings.NewReader(d.Deployed))
			dec.UseNumber()
			if dec.Decode(&v) != nil {
				continue
			}
		}
		if setChild(parent, last, v, d.Deployed == "(none)") {
			changed = true
		}
	}
	if !changed {
		return "", false
	}
	b, err := yaml.Marshal(root)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// containerAt is the map or list holding the last of a JSON pointer's
// tokens, and that token; nil when the path is not in v.
func containerAt(v any, tokens []string) (any, string) {
	if len(tokens) == 0 {
		return nil, ""
	}
	for _, t := range tokens[:len(tokens)-1] {
		var ok bool
		if v, ok = childOf(v, t); !ok {
			return nil, ""
		}
	}
	return v, tokens[len(tokens)-1]
}

// childOf is the element token names of a map or list.
func childOf(container any, token string) (any, bool) {
	switch c := container.(type) {
	case map[string]any:
		v, ok := c[token]
		return v, ok
	case []any:
		i, err := strconv.Atoi(token)
		if err != nil || i < 0 || i >= len(c) {
			return nil, false
		}
		return c[i], true
	}
	return nil, false
}

// setChild sets (or, with remove, deletes) the element token names of a
// map, or sets an existing element of a list (whose length it keeps);
// false when it cannot.
func setChild(container any, token string, v any, remove bool) bool {
	switch c := container.(type) {
	case map[string]any:
		if remove {
			delete(c, token)
		} else {
			c[token] = v
		}
		return true
	case []any:
		i, err := strconv.Atoi(token)
		if remove || err != nil || i < 0 || i >= len(c) {
			return false
		}
		c[i] = v
		return true
	}
	return false
}

// asDeployedByController sets m's resources to the objects of latest, the
// release the controller made, where its render differs from the plan's
// (the planned hooks too), where the wait failed (not waited), or where
// the plan could not know them; it returns the differences to report.
// Without latest read, nothing is compared.
func (r *releaseResource) asDeployedByController(ctx context.Context, e *reconcile.Reconciler, m *releaseModel, latest *helm.Release, sensitive [][]string, waited, read bool, diags *diag.Diagnostics) renderDifferences {
	deployed := r.deployedResources(ctx, e, latest, sensitive, diags)
	var differences renderDifferences
	if waited && read {
		// What the controller's Helm rendered, against the plan's.
		differences = differencesFrom(m.Resources, deployed)
		if hooks := deployedHooks(e, latest, sensitive, diags); fullyKnown(hooks) && !m.PlannedHooks.IsUnknown() && !m.PlannedHooks.IsNull() {
			for key, ds := range differencesFrom(m.PlannedHooks, hooks) {
				differences["hook "+key] = ds
			}
			if len(differences) > 0 {
				m.PlannedHooks = hooks
			}
		}
	}
	switch {
	case !waited || m.Resources.IsUnknown() || len(differences) > 0:
		m.Resources = deployed
	case !fullyKnown(m.Resources):
		// Objects a render cannot reproduce: as deployed; the others
		// stay as planned (the same objects, written otherwise at most:
		// a null field left out).
		m.Resources = withUnknownsFrom(m.Resources, deployed)
	}
	return differences
}
