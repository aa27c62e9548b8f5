package provider

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/flux"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// read refreshes a release handed to Flux: the controller's status of
// the HelmRelease, the objects of the release as stored. A HelmRelease
// changed by someone else since the last apply is marked not ready, so
// that the plan writes it back; one deleted removes the resource (the
// controller uninstalled the release, or will), so that the plan makes it
// again.
func (f fluxEngine) read(ctx context.Context, rf *releaseRefresh) *refreshed {
	m, spec, diags := rf.m, rf.spec, &rf.resp.Diagnostics
	fe := f.client(m, diags)
	if fe == nil {
		return nil
	}
	hr, err := fe.Get(ctx, spec.Namespace, spec.Name)
	if err != nil {
		diags.AddError("HelmRelease not readable", fmt.Sprintf("helmrelease_release %s: %s.\n\nThe state is kept as it is; check that the cluster is reachable and the provider's credentials may read HelmReleases in namespace %q, then refresh again.", m.ID.ValueString(), err, spec.Namespace))
		return nil
	}
	if hr == nil {
		// An import (no status yet) reads through the in-process engine's
		// read, which finds the engine: here the release was applied.
		rf.resp.State.RemoveResource(ctx)
		return nil
	}
	prev, d := statusOf(ctx, m.Status)
	diags.Append(d...)
	st := flux.KeepHandled(flux.StatusOf(hr, prev, fe.AsPlanned(ctx, hr)), prev, spec)
	raw, d := rf.private.GetKey(ctx, privateFlux)
	diags.Append(d...)
	var w fluxWritten
	switch {
	case len(raw) > 0 && json.Unmarshal(raw, &w) == nil && w.Generation != hr.Generation:
		st.SetCondition(reconcile.Condition{Type: reconcile.ConditionReady, Status: false, Reason: reasonChangedOutside,
			Message: fmt.Sprintf("HelmRelease %s/%s was changed outside Terraform (generation %d, written at %d): the next apply writes it back", spec.Namespace, spec.Name, hr.Generation, w.Generation)})
	case !m.fluxSettings(ctx, diags).wait && !flux.Finished(hr):
		// Handed over without waiting: the plan says the controller is
		// at work, and plans nothing until it is done.
		flux.Unfinished(st, prev, hr)
	}
	ctx, e := rf.reconciler(ctx)
	if e == nil {
		return nil
	}
	found := &refreshed{status: st}
	latest, err := e.Helm.LastRelease(spec.GetReleaseName())
	if err != nil {
		diags.AddWarning("Release objects not readable", err.Error())
		return found
	}
	found.latestRead, found.latest = true, latest
	found.resources = f.r.deployedResources(ctx, e, latest, readSensitivePaths(ctx, rf.private, latest, rf.red, diags), diags)
	return found
}
