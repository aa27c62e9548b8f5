package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/flux"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// apply writes the release for Flux's controller and waits for its
// result; what it wrote and the controller's status are saved even when
// the wait fails (a failed create leaves the resource tainted, so that
// destroying it removes what was written).
func (f fluxEngine) apply(ctx context.Context, op *applyOp) {
	r, m, config, st, diags := f.r, op.m, op.config, op.st, op.diags
	create, priorPrivate, out, private, identity := op.prior == nil, op.priorPrivate, op.out, op.private, op.identity
	if _, ok := handOver(ctx, r, f, op); !ok {
		return
	}
	spec := f.spec(ctx, m, diags)
	wo := writeOnlyOf(ctx, config, diags)
	red := r.redactorFor(ctx, m, wo)
	ctx = red.context(ctx)
	defer red.finish(ctx, out, diags)
	if diags.HasError() {
		return
	}
	resolved := r.resolveChart(ctx, m, wo, true, chartPin{Revision: m.ChartSourceRevision}, diags)
	if diags.HasError() {
		return
	}
	if chartChangedSincePlan(m, resolved, diags) {
		return
	}
	composed := r.releaseValues(ctx, m, wo, red, diags)
	ctx = red.context(ctx)
	sensitive := sensitivePaths(composed, red.values)
	saveSensitivePaths(ctx, private, sensitive, diags)
	rel := f.release(ctx, m, wo, spec, resolved, diags)
	if diags.HasError() {
		return
	}
	fe := f.client(m, diags)
	if fe == nil {
		return
	}
	ctx, e := r.reconciler(ctx, m, spec, red, diags)
	if e == nil {
		return
	}
	e.Key = secretHashKeyOf(ctx, priorPrivate, private, diags)
	if create && fluxCreateRefused(ctx, fe, e, spec, m.ID.ValueString(), diags) {
		return
	}
	configDigest, err := e.Digests().Config(composed)
	if err != nil {
		attrError(diags, path.Root("values"), "Values not usable", err.Error()+".", "Use values that encode as JSON.")
		return
	}
	rel.RequestedAt = flux.RequestToken(spec, st)
	fitToController(ctx, fe, rel, spec)
	objs, err := flux.Build(rel)
	if err != nil {
		attrError(diags, path.Root("chart"), "Release not writable for Flux", err.Error()+".", "Fix the chart settings named above.")
		return
	}
	since := time.Now()
	written, ok := f.write(ctx, fe, op, spec, objs)
	if !ok {
		return
	}

	hr, waitErr := written, error(nil)
	if !m.Suspend.ValueBool() {
		want := flux.Want{Generation: written.Generation, RequestedAt: rel.RequestedAt, ChartVersion: resolved.Version, SourceRevision: resolved.SourceRevision, ConfigDigest: flux.ConfigDigest(composed), Since: since}
		hr, waitErr = fe.Wait(ctx, spec.Namespace, spec.Name, want, flux.WaitTimeout(spec, st))
		if hr == nil {
			hr = written
		}
	}
	st = flux.KeepHandled(flux.StatusOf(hr, st, fe.AsPlanned(ctx, hr)), st, spec)
	var controller string
	if resolved.Verified != nil && objs.Verified() && waitErr == nil {
		// Ready, so source-controller verified it too: its words.
		controller = fe.SourceVerified(ctx, spec.Namespace, flux.SourceName(spec.Name))
	}
	applySourceVerified(ctx, m.Status, st, resolved.Verified, controller, diags)
	st.LastAttemptedConfigDigest = configDigest
	st.ObservedOptionsDigest, st.ObservedPostRenderersDigest = reconcile.OptionsDigest(spec), e.Digests().PostRenderers(spec)
	status, d := statusObject(ctx, st)
	diags.Append(d...)
	m.Status = status
	m.ChartVersion, m.AppVersion = types.StringValue(resolved.Version), types.StringValue(resolved.AppVersion)
	if m.ChartSourceRevision.IsUnknown() {
		// Known, it is as planned (see the in-process engine's apply).
		m.ChartSourceRevision = stringOrNull(resolved.SourceRevision)
	}
	if m.ChartDigest.IsUnknown() {
		m.ChartDigest = types.StringValue(resolved.Digest)
	}
	latest, latestErr := e.Helm.LastRelease(spec.GetReleaseName())
	if latestErr != nil {
		diags.AddWarning("Release objects not readable", latestErr.Error())
	}
	differences := r.asDeployedByController(ctx, e, m, latest, sensitive, waitErr == nil, latestErr == nil, diags)
	m.Notes, m.Description = releaseInfo(latest, latestErr, m.Notes, m.Description)
	settlePlanned(m, e, latest, sensitive, diags)
	diags.Append(setRelease(ctx, &out.Raw, m)...)
	diags.Append(setIdentity(ctx, identity, m)...)
	if waitErr != nil {
		reportFluxWait(diags, m.ID.ValueString(), waitErr)
		return
	}
	if latestErr == nil {
		controller := ""
		if len(differences) > 0 {
			controller = fe.ControllerVersion(ctx)
		}
		reportRenderDifferences(ctx, differences, m.ID.ValueString(), controller, create, private, diags)
	}
}

// fitToController sets what rel writes as the controller in the cluster
// takes it: without the CRD's answer (its read refused), hooks are written
// as the controller defaults them, and the apply says if they differ.
func fitToController(ctx context.Context, fe *flux.Client, rel *flux.Release, spec *reconcile.Spec) {
	if ok, _ := fe.HasSpecField(ctx, "postRenderStrategy"); ok {
		rel.PostRenderStrategy = spec.PostRenderStrategy
		if rel.PostRenderStrategy == "" {
			rel.PostRenderStrategy = reconcile.PostRenderNoHooks
		}
	}
	// Reinstall is what a controller without the field does; the plan
	// refused InPlaceUpdate for such a controller.
	rel.ChartNameChangeStrategy = spec.Upgrade.ChartNameChangeStrategy
	if ok, _ := fe.HasSpecField(ctx, "upgrade.chartNameChangeStrategy"); !ok {
		rel.ChartNameChangeStrategy = ""
	}
}

// write creates the namespaces the release asks for, then writes its
// objects; a create that fails removes what it wrote (nothing is saved).
// It keeps the written HelmRelease's generation in the private state, to
// tell later edits by others.
func (f fluxEngine) write(ctx context.Context, fe *flux.Client, op *applyOp, spec *reconcile.Spec, objs *flux.Objects) (*helmv2.HelmRelease, bool) {
	m, create, private, diags := op.m, op.prior == nil, op.private, op.diags
	if spec.Install.CreateNamespace {
		// The HelmRelease's namespace, and its target namespace when the
		// controller installs into this cluster: marked as the release's,
		// which uninstall.delete_namespace deletes.
		for _, ns := range fluxCreatedNamespaces(ctx, m, spec, diags) {
			if err := fe.CreateNamespace(ctx, ns, spec.ReleaseRef()); err != nil {
				attrError(diags, path.Root("install").AtName("create_namespace"), "Namespace not created", err.Error()+".", "Check that the provider's credentials may create namespaces, or create the namespace first.")
				return nil, false
			}
		}
	}
	written, err := fe.Apply(ctx, objs)
	if cleanupLeft(diags, err, m.ID.ValueString(), spec.Namespace) {
		err = nil
	}
	if err != nil {
		left := ""
		if create {
			// Not saved: what was written before the failure goes too.
			if cleanErr := fe.DeleteWritten(ctx, objs); cleanErr != nil {
				left = fmt.Sprintf(" Removing the chart source and Secrets it wrote failed too (%s): delete the objects labelled %s=%s in namespace %q.", cleanErr, flux.ReleaseLabel, spec.Name, spec.Namespace)
			}
		}
		diags.AddError("HelmRelease not written", fmt.Sprintf("helmrelease_release %s: %s.%s\n\nThe provider's credentials need to apply HelmReleases, HelmRepositories, HelmCharts, OCIRepositories (GitRepositories and Buckets for charts from them) and Secrets in namespace %q (see the guide \"Handing releases to Flux\"); check them and that the cluster is reachable, then apply again.", m.ID.ValueString(), err, left, spec.Namespace))
		return nil, false
	}
	b, _ := json.Marshal(fluxWritten{Generation: written.Generation}) // an int
	diags.Append(private.SetKey(ctx, privateFlux, b)...)
	return written, true
}

// reportFluxWait turns a failed wait for the controller into an error
// with a remedy.
func reportFluxWait(diags *diag.Diagnostics, id string, err error) {
	var nr *flux.NotReadyError
	remedy := "Check that the cluster is reachable, then apply again."
	summary := "Release not ready"
	if errors.As(err, &nr) {
		switch {
		case !nr.Observed:
			summary = "Flux controller not reconciling"
			remedy = "Start Flux's helm-controller (and source-controller) in the cluster, or check why it does not reconcile this namespace, then apply again: the HelmRelease stays as written."
		case nr.Stalled:
			summary = "Release stalled in Flux"
			remedy = "Fix the cause the conditions name, then apply: a change of chart or values is retried; otherwise set reset_at to a new value to retry with the remediation settings, or force_at to force one upgrade."
		case nr.RetryingLater:
			summary = "Release failed in Flux"
			remedy = "Fix the cause the conditions and events name. The controller retries the release on its own after the strategy's retry_interval (default 5m), and every apply retries it too (strategy RetryOnFailure: no remediation)."
		case nr.SourceStalled != "":
			summary = "Chart source failed in Flux"
			remedy = "Fix what source-controller names (a values file must be in the chart's directory, as values_files says; the chart must be at chart.name), then apply again: the HelmRelease stays as written."
		case nr.Mismatch != "":
			summary = "Release not as planned"
			remedy = "Another change reached the HelmRelease or its source between the plan and the controller's reconcile; plan again."
		default:
			remedy = "The controller keeps trying on its own (remediation retries, interval); fix the cause the conditions and events name, then apply again to wait for it."
		}
	}
	diags.AddError(summary, fmt.Sprintf("helmrelease_release %s: %s\n\n%s", id, err, remedy))
}

// letGo makes Flux's controller let go of the release of a resource that
// was handed to it, without uninstalling it (suspend, then delete the
// HelmRelease and what was written for it). The release keeps the
// controller's labels, for the next engine to adopt.
func (f fluxEngine) letGo(ctx context.Context, previous *releaseModel, diags *diag.Diagnostics) (adopt, ok bool) {
	spec := f.spec(ctx, previous, diags)
	fe := f.client(previous, diags)
	if fe == nil {
		return false, false
	}
	err := fe.Delete(ctx, spec.Namespace, spec.Name, false, 2*time.Minute)
	if cleanupLeft(diags, err, previous.ID.ValueString(), spec.Namespace) {
		err = nil
	}
	if err != nil {
		diags.AddError("Release not taken back from Flux", fmt.Sprintf("helmrelease_release %s: %s.\n\nNothing was uninstalled. Check that helm-controller runs (it must see the HelmRelease suspended before it is deleted), then apply again.", previous.ID.ValueString(), err))
		return false, false
	}
	return true, true
}

// fluxCreateRefused checks, at the apply of a create with engine =
// "flux", that neither a HelmRelease of the name nor a release another
// resource or tool made exists (a replaced resource is gone by now);
// true with a diagnostic when one does, and nothing is written.
func fluxCreateRefused(ctx context.Context, fe *flux.Client, e *reconcile.Reconciler, spec *reconcile.Spec, id string, diags *diag.Diagnostics) bool {
	hr, err := fe.Get(ctx, spec.Namespace, spec.Name)
	if err != nil {
		diags.AddError("HelmRelease not readable", fmt.Sprintf("helmrelease_release %s: %s.\n\nNothing was written; check that the cluster is reachable, then apply again.", id, err))
		return true
	}
	if hr != nil && !flux.WrittenByProvider(hr) {
		hrExists(diags, hr, spec)
		return true
	}
	if hr != nil {
		diags.AddAttributeError(path.Root("name"), "HelmRelease managed in another state",
			fmt.Sprintf("helmrelease_release %s: HelmRelease %s/%s was written by a helmrelease_release that this state does not hold: another Terraform state manages it, or this one lost it. Nothing was written.\n\nTo manage it from this state, import it (terraform import <address> %s/%s) and remove it from the other state; otherwise give this resource another name.",
				id, hr.Namespace, hr.Name, spec.GetStorageNamespace(), spec.GetReleaseName()))
		return true
	}
	latest, err := e.Helm.LastRelease(spec.GetReleaseName())
	if err == nil {
		err = reconcile.CheckCreate(latest, spec)
	}
	if err != nil {
		reportRun(diags, id, nil, err, runNotCreated, false)
		return true
	}
	return false
}
