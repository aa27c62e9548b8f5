package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/flux"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

func (fluxEngine) loadsChart() bool { return false }

// runsSuspended: a suspended release is written, suspended, for the
// controller to hold.
func (fluxEngine) runsSuspended() bool { return true }

// run writes the release for Flux's controller and waits for its result
// (flux.Client.Run). What it wrote and the controller's status are saved
// even when the wait fails; the generation written is kept in the private
// state, to tell later edits by others. The objects the controller's Helm
// rendered otherwise than the plan are recorded as deployed, and named
// (reportRenderDifferences).
func (f fluxEngine) run(ctx context.Context, run *releaseRun) *applied {
	m, spec, resolved, e, diags := run.m, run.spec, run.resolved, run.e, run.diags
	rel := f.release(ctx, run)
	if rel == nil {
		return nil
	}
	fe := f.client(m, diags)
	if fe == nil {
		return nil
	}
	configDigest, err := e.Digests().Config(run.values)
	if err != nil {
		attrError(diags, path.Root("values"), "Values not usable", err.Error()+".", "Use values that encode as JSON.")
		return nil
	}
	wait := m.fluxSettings(ctx, diags).wait
	res, err := fe.Run(ctx, rel, flux.RunOptions{
		Create:      run.prior == nil,
		LastRelease: func() (*helm.Release, error) { return e.Helm.LastRelease(spec.GetReleaseName()) },
		Status:      run.st,
		Want:        flux.Want{ChartVersion: resolved.Version, SourceRevision: resolved.SourceRevision, ConfigDigest: flux.ConfigDigest(run.values), TakenUp: !wait},
		Verified:    resolved.Verified != nil,
	})
	var notRun *flux.RunError
	if !errors.As(err, &notRun) && res == nil {
		notRun = &flux.RunError{Step: flux.StepWrite, Err: err}
	}
	if notRun != nil {
		reportNotRun(diags, m, spec, notRun)
		return nil
	}
	if res.Cleanup != nil {
		warnCleanupLeft(diags, res.Cleanup, m.ID.ValueString(), spec.Namespace)
	}
	b, _ := json.Marshal(fluxWritten{Generation: res.Written.Generation}) // an int
	diags.Append(run.private.SetKey(ctx, privateFlux, b)...)
	st := res.Status
	st.LastAttemptedConfigDigest = configDigest
	st.ObservedOptionsDigest, st.ObservedPostRenderersDigest = reconcile.OptionsDigest(spec), e.Digests().PostRenderers(spec)
	waitErr := err
	if !wait && !m.Suspend.ValueBool() && waitErr == nil {
		// Taken up, not deployed yet: the next refresh reads the outcome.
		// The revision handed over is the one the controller attempts
		// (flux.Unfinished); its digest is the controller's to tell.
		st.LastAttemptedRevision, st.LastAttemptedRevisionDigest = resolved.Version, ""
		return &applied{status: st, asPlanned: true, pending: true, report: func(context.Context, bool) {}}
	}
	var differences flux.RenderDifferences
	return &applied{
		status: st, asPlanned: waitErr == nil, sourceVerified: res.SourceVerified,
		compare: func(ctx context.Context, latest *helm.Release, deployed func() types.Map) bool {
			differences = renderedOtherwise(e, m, latest, deployed(), run.sensitive, diags)
			return len(differences) > 0
		},
		report: func(ctx context.Context, latestRead bool) {
			switch {
			case waitErr != nil:
				reportFluxWait(diags, m.ID.ValueString(), waitErr)
			case latestRead:
				controller := ""
				if len(differences) > 0 {
					controller = fe.ControllerVersion(ctx)
				}
				reportRenderDifferences(ctx, differences, m.ID.ValueString(), controller, run.prior == nil, run.private, diags)
			}
		},
	}
}

// reportNotRun turns a run that ended before the controller was given the
// release into an error with a remedy.
func reportNotRun(diags *diag.Diagnostics, m *releaseModel, spec *reconcile.Spec, err *flux.RunError) {
	id := m.ID.ValueString()
	var exists *flux.ExistsError
	switch {
	case errors.As(err, &exists) && flux.WrittenByProvider(exists.HelmRelease):
		hr := exists.HelmRelease
		diags.AddAttributeError(path.Root("name"), "HelmRelease managed in another state",
			fmt.Sprintf("helmrelease_release %s: HelmRelease %s/%s was written by a helmrelease_release that this state does not hold: another Terraform state manages it, or this one lost it. Nothing was written.\n\nTo manage it from this state, import it (terraform import <address> %s/%s) and remove it from the other state; otherwise give this resource another name.",
				id, hr.Namespace, hr.Name, spec.GetStorageNamespace(), spec.GetReleaseName()))
	case errors.As(err, &exists):
		hrExists(diags, exists.HelmRelease, spec)
	case err.Step == flux.StepRead:
		diags.AddError("HelmRelease not readable", fmt.Sprintf("helmrelease_release %s: %s.\n\nNothing was written; check that the cluster is reachable, then apply again.", id, err.Err))
	case err.Step == flux.StepCheck:
		reportRun(diags, id, nil, err.Err, runNotCreated, false)
	case err.Step == flux.StepBuild:
		attrError(diags, path.Root("chart"), "Release not writable for Flux", err.Err.Error()+".", "Fix the chart settings named above.")
	case err.Step == flux.StepNamespace:
		attrError(diags, path.Root("install").AtName("create_namespace"), "Namespace not created", err.Err.Error()+".", "Check that the provider's credentials may create namespaces, or create the namespace first.")
	default:
		left := ""
		if err.Left != nil {
			left = fmt.Sprintf(" Removing the chart source and Secrets it wrote failed too (%s): delete the objects labelled %s=%s in namespace %q.", err.Left, flux.ReleaseLabel, spec.Name, spec.Namespace)
		}
		diags.AddError("HelmRelease not written", fmt.Sprintf("helmrelease_release %s: %s.%s\n\nThe provider's credentials need to apply HelmReleases, HelmRepositories, HelmCharts, OCIRepositories (GitRepositories and Buckets for charts from them) and Secrets in namespace %q (see the guide \"Handing releases to Flux\"); check them and that the cluster is reachable, then apply again.", id, err.Err, left, spec.Namespace))
	}
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
