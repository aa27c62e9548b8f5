package provider

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// read refreshes the release from Helm storage and the cluster (see Read).
func (h helmEngine) read(ctx context.Context, rf *releaseRefresh) *refreshed {
	r, m, spec, private, red, resp := h.r, rf.m, rf.spec, rf.private, rf.red, rf.resp
	importing := m.Status.IsNull()
	ctx, e := rf.reconciler(ctx)
	if e == nil {
		return nil
	}
	latest, err := e.Helm.LastRelease(spec.GetReleaseName())
	if err != nil {
		summary := "Release not readable"
		if unreachable(ctx, e, err) {
			summary = "Kubernetes cluster unreachable"
		}
		resp.Diagnostics.AddError(summary,
			fmt.Sprintf("Reading release %s from Helm storage failed: %s.\n\nThe state is kept as it is; check that the cluster is reachable and the provider's credentials may read Secrets in namespace %q, then refresh again.", m.ID.ValueString(), err, spec.GetStorageNamespace()))
		return nil
	}
	if latest != nil && latest.Info.Status != helm.StatusDeployed && !isEmpty(m.ValuesFrom) {
		// Only a release that is not deployed carries an error in its
		// description, which may quote values read from Secrets: read
		// them for their strings (their errors are the plan's).
		r.releaseValues(ctx, m, writeOnly{}, red, &diag.Diagnostics{})
	}
	if importing {
		r.readImported(ctx, m, e, latest, resp)
		return nil
	}
	st, d := statusOf(ctx, m.Status)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() {
		return nil
	}
	ready := st.Condition(reconcile.ConditionReady)
	if latest == nil || latest.Info.Status == helm.StatusUninstalled {
		if st.LastAttemptedReleaseAction == reconcile.ActionInstall && (ready == nil || !ready.Status) {
			// A failed install, uninstalled by its remediation: the state
			// keeps the failure counters.
			return nil
		}
		resp.State.RemoveResource(ctx)
		return nil
	}

	if st.HasPlainDigests() {
		// A status an older version recorded: its plain digests give a
		// way to confirm guessed values; keyed from now on.
		history, err := e.Helm.History(spec.GetReleaseName())
		if err == nil {
			err = e.Digests().Upgrade(st, history, nil)
		}
		if err != nil {
			resp.Diagnostics.AddWarning("Release not fully refreshed",
				fmt.Sprintf("helmrelease_release %s: replacing the digests an older version of the provider recorded: %s.\n\nThe state is kept as it is.", m.ID.ValueString(), err))
			return nil
		}
	}
	want := reconcile.Desired{
		Spec:                spec,
		Digests:             e.Digests(),
		ChartVersion:        st.LastAttemptedRevision,
		ConfigDigest:        st.LastAttemptedConfigDigest,
		PostRenderersDigest: st.ObservedPostRenderersDigest,
		OptionsDigest:       st.ObservedOptionsDigest,
	}
	if cur := st.Latest(); cur != nil {
		want.ChartName = cur.ChartName
	}
	loadInSync(ctx, private, e, &resp.Diagnostics)
	state, err := reconcile.DetermineReleaseState(ctx, latest, st, want, e.DriftDetector(spec))
	saveInSync(ctx, resp.Private, e, &resp.Diagnostics)
	if err != nil {
		resp.Diagnostics.AddWarning("Release not fully refreshed",
			fmt.Sprintf("helmrelease_release %s: %s.\n\nThe state is kept as it is.", m.ID.ValueString(), err))
		return nil
	}
	drift := markRefreshed(st, spec, state, ready, m.ID.ValueString(), &resp.Diagnostics)
	sensitive := readSensitivePaths(ctx, private, latest, red, &resp.Diagnostics)
	resources, err := displayResources(ctx, e, latest, drift, sensitive)
	if err != nil {
		resp.Diagnostics.AddWarning("Release objects not readable", err.Error())
		return nil
	}
	r.setDriftPrivate(ctx, resp, e, latest, drift, sensitive)
	requests := []byte(nil)
	if rq := reconcile.RequestsOf(latest); rq != (reconcile.Requests{}) {
		requests, _ = json.Marshal(rq) // strings
	}
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateRequests, requests)...)
	return &refreshed{status: st, latestRead: true, latest: latest, resources: resources}
}

// markRefreshed records in st what the refresh found the release to be
// (state): not this resource's, locked, drifted, or in sync again; ready
// is st's Ready condition before. It returns the drift to plan back (mode
// enabled); in warn mode the drift is a warning only.
func markRefreshed(st *reconcile.Status, spec *reconcile.Spec, state reconcile.ReleaseState, ready *reconcile.Condition, id string, diags *diag.Diagnostics) *reconcile.DriftReport {
	reconcile.MarkDrift(st, spec, state)
	switch state.Status {
	case reconcile.StateUnmanaged:
		st.SetCondition(reconcile.Condition{Type: reconcile.ConditionReady, Status: false, Reason: reasonUnmanaged, Message: state.Reason})
	case reconcile.StateLocked, reconcile.StateUninstalling:
		st.SetCondition(reconcile.Condition{Type: reconcile.ConditionReady, Status: false, Reason: reasonLocked, Message: state.Reason})
	case reconcile.StateDrifted:
		if spec.Drift.Mode == reconcile.DriftWarn {
			diags.AddWarning("Release drifted",
				fmt.Sprintf("helmrelease_release %s: %s.\n\n%s\nDrift detection is in warn mode: nothing is corrected. Set drift_detection.mode = \"enabled\" to correct it on apply, or add ignore rules for fields other controllers own.", id, state.Reason, driftDetails(state.Drift)))
		} else {
			return state.Drift
		}
	case reconcile.StateInSync:
		if ready != nil && !ready.Status && (ready.Reason == reasonUnmanaged || ready.Reason == reasonLocked) {
			// Back to what this resource made (e.g. rolled back by hand).
			st.SetCondition(reconcile.Condition{Type: reconcile.ConditionReady, Status: true, Reason: string(reconcile.StateInSync), Message: "release is in sync"})
		}
	}
	return nil
}

// setDriftPrivate keeps the desired YAML of the drifted and missing objects
// for the plan, or clears it.
func (r *releaseResource) setDriftPrivate(ctx context.Context, resp *resource.ReadResponse, e *reconcile.Reconciler, latest *helm.Release, drift *reconcile.DriftReport, sensitive [][]string) {
	if !drift.HasChanges() {
		resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateDrift, nil)...)
		resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateDriftChanges, nil)...)
		return
	}
	entries, _ := json.Marshal(driftEntries(drift)) // a map of strings
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateDriftChanges, entries)...)
	desired, err := displayResources(ctx, e, latest, nil, sensitive)
	if err != nil {
		return
	}
	out := map[string]string{}
	for _, o := range drift.Objects {
		if v, ok := desired.Elements()[o.Key].(types.String); ok {
			out[o.Key] = v.ValueString()
		}
	}
	b, _ := json.Marshal(out) // map of strings
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateDrift, b)...)
}

// driftDetails lists the drifted fields, Secret values as hashes.
func driftDetails(r *reconcile.DriftReport) string {
	s := ""
	for _, o := range r.Objects {
		if o.Missing {
			s += fmt.Sprintf("- %s: missing\n", o.Key)
			continue
		}
		for _, c := range o.Changes {
			s += fmt.Sprintf("- %s %s: %s (desired: %s)\n", o.Key, c.Path, orNone(c.Live), orNone(c.Desired))
		}
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
