package provider

import (
	"context"
	"encoding/json"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// privateInSync is the private state key under which a resource keeps the
// objects its last drift detection found in sync, with their
// resourceVersions (reconcile.InSyncRecord as JSON): the next refresh
// compares only the objects written since.
const privateInSync = "drift_in_sync"

// loadInSync gives e the record kept in get, if any.
func loadInSync(ctx context.Context, get privateGetter, e *reconcile.Reconciler, diags *diag.Diagnostics) {
	if get == nil {
		return
	}
	raw, d := get.GetKey(ctx, privateInSync)
	diags.Append(d...)
	var rec reconcile.InSyncRecord
	if len(raw) > 0 && json.Unmarshal(raw, &rec) == nil {
		e.SetInSync(&rec)
	}
}

// saveInSync keeps e's newest record with set; none clears it.
func saveInSync(ctx context.Context, set privateSetter, e *reconcile.Reconciler, diags *diag.Diagnostics) {
	var raw []byte
	if rec := e.InSync(); rec != nil && len(rec.Versions) > 0 {
		raw, _ = json.Marshal(rec) // strings
	}
	diags.Append(set.SetKey(ctx, privateInSync, raw)...)
}

// privateValidated is the private state key under which a plan hands its
// apply the objects it had the API server validate whole
// (kube.ValidatedSet as JSON): the apply's first install or upgrade of
// those objects does not send them again.
const privateValidated = "validated_render"

// saveValidated keeps what e's plan validated with set; none clears it.
func saveValidated(ctx context.Context, set privateSetter, e *reconcile.Reconciler, diags *diag.Diagnostics) {
	var raw []byte
	if e != nil {
		if v := e.Validated(); v != nil {
			raw, _ = json.Marshal(v) // strings
		}
	}
	diags.Append(set.SetKey(ctx, privateValidated, raw)...)
}

// loadValidated gives e what its plan validated, if the plan kept it.
func loadValidated(ctx context.Context, get privateGetter, e *reconcile.Reconciler, diags *diag.Diagnostics) {
	if get == nil {
		return
	}
	raw, d := get.GetKey(ctx, privateValidated)
	diags.Append(d...)
	var v kube.ValidatedSet
	if len(raw) > 0 && json.Unmarshal(raw, &v) == nil && v.Digest != "" {
		e.TrustedRender = &v
	}
}
