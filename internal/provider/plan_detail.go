package provider

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/manifest"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/show"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/values"
)

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
		if ok && !s.IsNull() && !s.IsUnknown() && !manifest.IsDigest(s.ValueString()) {
			v = types.StringValue(manifest.Digest(s.ValueString()))
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
		if s, ok := v.(types.String); ok && manifest.IsDigest(s.ValueString()) {
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
			for ptr, change := range manifest.FieldChanges(old, s.ValueString()) {
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
func (r *releaseResource) shownBefore(e *reconcile.Reconciler, spec *reconcile.Spec, composed map[string]any, red *redactor, opts show.Options, diags *diag.Diagnostics) map[string]string {
	latest, err := e.Helm.LastRelease(spec.GetReleaseName())
	if err != nil || latest == nil {
		return nil
	}
	before := show.Options{Key: opts.Key, Sensitive: append(slices.Clone(opts.Sensitive), values.StringsAt(latest.Config, values.SensitivePaths(composed, red.values))...)}
	shown, _, err := show.Manifest(latest.Manifest, spec.GetTargetNamespace(), releaseScope(e), nil, before)
	if err != nil {
		diags.AddWarning("Current release not shown", "planned_changes lists every object as created: "+err.Error())
		return nil
	}
	return shown
}
