package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"sigs.k8s.io/yaml"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// objectDigestPrefix starts what plan_detail names and changes show of an
// object; no object's YAML starts so.
const objectDigestPrefix = "sha256:"

// showsNames reports whether m shows objects as digests.
func (m *releaseModel) showsNames() bool {
	return m.PlanDetail.ValueString() == planDetailNames || m.showsChanges()
}

// showsChanges reports whether m's plans list the changed fields.
func (m *releaseModel) showsChanges() bool { return m.PlanDetail.ValueString() == planDetailChanges }

// applyPlanDetail turns the objects m shows into digests when its
// plan_detail is names or changes. Values already digests, unknown and
// null ones stay as they are.
func (m *releaseModel) applyPlanDetail() {
	if !m.showsNames() {
		return
	}
	m.Resources = objectDigests(m.Resources)
	m.PlannedHooks = objectDigests(m.PlannedHooks)
	m.PlannedCRDs = objectDigests(m.PlannedCRDs)
}

func objectDigests(objects types.Map) types.Map {
	if objects.IsNull() || objects.IsUnknown() {
		return objects
	}
	elems := make(map[string]attr.Value, len(objects.Elements()))
	for k, v := range objects.Elements() {
		s, ok := v.(types.String)
		if ok && !s.IsNull() && !s.IsUnknown() && !strings.HasPrefix(s.ValueString(), objectDigestPrefix) {
			sum := sha256.Sum256([]byte(s.ValueString()))
			v = types.StringValue(objectDigestPrefix + hex.EncodeToString(sum[:]))
		}
		elems[k] = v
	}
	return types.MapValueMust(types.StringType, elems)
}

// showsDigests reports whether some known object of objects is a digest:
// a plan that shows the objects again in full cannot expand them.
func showsDigests(objects types.Map) bool {
	if objects.IsNull() || objects.IsUnknown() {
		return false
	}
	for _, v := range objects.Elements() {
		if s, ok := v.(types.String); ok && strings.HasPrefix(s.ValueString(), objectDigestPrefix) {
			return true
		}
	}
	return false
}

// plannedChanges lists what turns the objects before (as shown, in full)
// into after (the planned resources, in full): an entry per object created
// ("created"), deleted ("deleted") or known only after apply, and per leaf
// field of the other changed objects, keyed "<object key> <JSON pointer>",
// valued "<before> → <after>" (JSON; "(none)" where absent). Unknown
// when after is.
func plannedChanges(before map[string]string, after types.Map) types.Map {
	if after.IsUnknown() || after.IsNull() {
		return types.MapUnknown(types.StringType)
	}
	entries := map[string]attr.Value{}
	for key, v := range after.Elements() {
		s, ok := v.(types.String)
		old, existed := before[key]
		switch {
		case !ok || s.IsUnknown():
			entries[key] = types.StringValue("known after apply")
		case !existed:
			entries[key] = types.StringValue("created")
		case old != s.ValueString():
			for ptr, change := range fieldChanges(old, s.ValueString()) {
				entries[key+" "+ptr] = types.StringValue(change)
			}
		}
	}
	for key := range before {
		if _, ok := after.Elements()[key]; !ok {
			entries[key] = types.StringValue("deleted")
		}
	}
	return types.MapValueMust(types.StringType, entries)
}

// fieldChanges compares two objects shown as YAML leaf by leaf: JSON
// pointer → "<before> → <after>".
func fieldChanges(before, after string) map[string]string {
	oldLeaves, newLeaves := leaves(before), leaves(after)
	out := map[string]string{}
	for ptr, v := range newLeaves {
		if old, ok := oldLeaves[ptr]; !ok || old != v {
			out[ptr] = orAbsent(old, ok) + " → " + v
		}
	}
	for ptr, old := range oldLeaves {
		if _, ok := newLeaves[ptr]; !ok {
			out[ptr] = old + " → (none)"
		}
	}
	if len(out) == 0 && before != after {
		// The same fields, written otherwise (an object's YAML key order).
		out[""] = "formatting only"
	}
	return out
}

func orAbsent(s string, ok bool) string {
	if !ok {
		return "(none)"
	}
	return s
}

// leaves maps the JSON pointer of every leaf of a YAML object (scalars,
// empty maps and lists) to its value as JSON; nothing when y is not YAML.
func leaves(y string) map[string]string {
	var obj any
	if err := yaml.Unmarshal([]byte(y), &obj); err != nil {
		return map[string]string{}
	}
	return leavesOf(obj)
}

// leavesOf is leaves of a decoded object.
func leavesOf(obj any) map[string]string {
	out := map[string]string{}
	var walk func(ptr string, v any)
	walk = func(ptr string, v any) {
		switch t := v.(type) {
		case map[string]any:
			if len(t) == 0 {
				out[ptr] = "{}"
			}
			for k, e := range t {
				walk(ptr+"/"+pointerEscaper.Replace(k), e)
			}
		case []any:
			if len(t) == 0 {
				out[ptr] = "[]"
			}
			for i, e := range t {
				walk(ptr+"/"+strconv.Itoa(i), e)
			}
		default:
			b, _ := json.Marshal(t) // a decoded YAML scalar
			out[ptr] = string(b)
		}
	}
	walk("", obj)
	return out
}

// pointerEscaper escapes a key in a JSON pointer (RFC 6901).
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// privateDriftChanges is the private state key under which Read keeps the
// drifted fields for a plan with plan_detail = "changes": entries of
// planned_changes as JSON.
const privateDriftChanges = "drift_changes"

// driftEntries are the planned_changes entries of a drift correction: the
// drifted fields from their live value to the release's, and the objects
// deleted in the cluster.
func driftEntries(r *reconcile.DriftReport) map[string]string {
	out := map[string]string{}
	for _, o := range r.Objects {
		if o.Missing {
			out[o.Key] = "created again (deleted in the cluster)"
			continue
		}
		for _, c := range o.Changes {
			out[o.Key+" "+c.Path] = orNone(c.Live) + " → " + orNone(c.Desired)
		}
	}
	return out
}

// driftChanges are the entries Read kept for a drift correction's plan.
func driftChanges(ctx context.Context, get privateGetter, diags *diag.Diagnostics) types.Map {
	raw, d := get.GetKey(ctx, privateDriftChanges)
	diags.Append(d...)
	var entries map[string]string
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &entries) // a map of strings, or nothing to show
	}
	return types.MapValueMust(types.StringType, stringValues(entries))
}

// shownBefore is the current release's objects as resources shows them in
// full: what an upgrade's planned_changes start from. Nil when the release
// cannot be read (the changes then show every object as created).
func (r *releaseResource) shownBefore(e *reconcile.Reconciler, spec *reconcile.Spec, values map[string]any, red *redactor, show display, diags *diag.Diagnostics) map[string]string {
	latest, err := e.Helm.LastRelease(spec.GetReleaseName())
	if err != nil || latest == nil {
		return nil
	}
	before := display{Key: show.Key, Sensitive: append(slices.Clone(show.Sensitive), stringsAt(latest.Config, sensitivePaths(values, red.values))...)}
	shown, _, err := showManifest(latest.Manifest, spec.GetTargetNamespace(), releaseScope(e), nil, before)
	if err != nil {
		diags.AddWarning("Current release not shown", "planned_changes lists every object as created: "+err.Error())
		return nil
	}
	return shown
}
