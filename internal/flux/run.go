package flux

import (
	"context"
	"errors"
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// RunStep is the step of a run that failed (RunError).
type RunStep string

const (
	// StepRead: a create could not read the HelmRelease of its name;
	// nothing was written.
	StepRead RunStep = "read"
	// StepCheck: a create found the release's name taken (ExistsError,
	// or reconcile.CheckCreate's errors) or Helm storage unreadable;
	// nothing was written.
	StepCheck RunStep = "check"
	// StepNamespace: a namespace of install.createNamespace was not
	// created; nothing else was written.
	StepNamespace RunStep = "namespace"
	// StepBuild: the release cannot be written as Flux objects; nothing
	// was written.
	StepBuild RunStep = "build"
	// StepWrite: the objects were not written; a create removed what it
	// wrote before the failure (Left says when that failed too).
	StepWrite RunStep = "write"
)

// RunError is a run that ended before the controller was given the
// release.
type RunError struct {
	Step RunStep
	Err  error
	// Left is the failure to remove what a failed create wrote.
	Left error
}

func (e *RunError) Error() string { return e.Err.Error() }

func (e *RunError) Unwrap() error { return e.Err }

// ExistsError is a create refused because a HelmRelease of the name
// exists: another tool's, or (WrittenByProvider) another state's.
type ExistsError struct{ HelmRelease *helmv2.HelmRelease }

func (e *ExistsError) Error() string {
	return fmt.Sprintf("HelmRelease %s/%s exists", e.HelmRelease.Namespace, e.HelmRelease.Name)
}

// RunOptions are what a run needs besides the release.
type RunOptions struct {
	// Create says the release is new to the caller's state: a
	// HelmRelease of the name, or a Helm release that another resource or
	// tool made, refuses it (LastRelease reads the release's newest
	// revision from Helm storage).
	Create      bool
	LastRelease func() (*helm.Release, error)
	// Status is the status before the run (empty for a create): its
	// handled requests, failure counters and history.
	Status *reconcile.Status
	// Want is what the wait expects besides the generation written and
	// the reconcile request: the chart and config the plan resolved.
	Want Want
	// Verified says the provider verified the chart's signature: the
	// result then holds source-controller's words on its own
	// verification.
	Verified bool
}

// RunResult is what a run did: Written is the HelmRelease as written
// (nil when nothing was), Status the controller's status after the wait
// (or as written, when suspended or the wait failed), SourceVerified
// source-controller's message on the chart's signature (empty when not
// verified or not ready), Cleanup the failure to let go the chart sources
// and Secrets the release no longer uses (the release is written).
type RunResult struct {
	Written        *helmv2.HelmRelease
	Status         *reconcile.Status
	SourceVerified string
	Cleanup        error
}

// Run hands rel to helm-controller, as an apply with engine = "flux"
// does: a create is checked first (nothing written when refused); the
// namespaces rel creates are created, marked as the release's; the
// HelmRelease is fitted to the controller in the cluster, built with its
// source and Secrets (a shared HelmRepository asked to fetch its index
// only for a version not built yet), and written (a failed create removes
// what it wrote); then, unless suspended, Run waits as the flux CLI does for the
// controller's outcome of the written generation and request (with
// opts.Want.TakenUp, only until the controller has taken them up). The result
// holds what was written and the controller's status even when the wait
// fails; the error is then the wait's (*NotReadyError, or the context's),
// else a *RunError.
func (e *Client) Run(ctx context.Context, rel *Release, opts RunOptions) (*RunResult, error) {
	spec := rel.Spec
	if opts.Create {
		if err := e.checkCreate(ctx, spec, opts.LastRelease); err != nil {
			return nil, err
		}
	}
	rel.RequestedAt = RequestToken(spec, opts.Status)
	e.fitToController(ctx, rel)
	objs, err := Build(rel)
	if err != nil {
		return nil, &RunError{Step: StepBuild, Err: err}
	}
	if objs.Shared && objs.Chart != nil && rel.RequestedAt != "" {
		token, err := e.indexRequest(ctx, objs, rel.RequestedAt)
		if err != nil {
			return nil, &RunError{Step: StepWrite, Err: err}
		}
		setRequest(objs.Source, token)
	}
	if spec.Install.CreateNamespace {
		for _, ns := range CreatedNamespaces(spec, rel.KubeConfig != nil) {
			if err := e.CreateNamespace(ctx, ns, spec.ReleaseRef()); err != nil {
				return nil, &RunError{Step: StepNamespace, Err: err}
			}
		}
	}
	since := time.Now()
	res := &RunResult{}
	written, err := e.Apply(ctx, objs)
	var cleanup *CleanupError
	if errors.As(err, &cleanup) {
		res.Cleanup, err = cleanup.Err, nil
	}
	if err != nil {
		runErr := &RunError{Step: StepWrite, Err: err}
		if opts.Create {
			// Nothing is kept of a failed create: what it wrote goes too.
			runErr.Left = e.DeleteWritten(ctx, objs)
		}
		return nil, runErr
	}
	res.Written = written
	hr, waitErr := written, error(nil)
	if !rel.Suspend {
		want := opts.Want
		want.Generation, want.RequestedAt = written.Generation, rel.RequestedAt
		// The cluster's clock, which the controller's conditions and
		// events are stamped with, not this machine's.
		want.Since, want.ReconcilingAt = WriteTime(written, since), ReconcilingSince(written)
		hr, waitErr = e.Wait(ctx, spec.Namespace, spec.Name, want, WaitTimeout(spec, opts.Status))
		if hr == nil {
			hr = written
		}
	}
	res.Status = KeepHandled(StatusOf(hr, opts.Status, e.AsPlanned(ctx, hr)), opts.Status, spec)
	if opts.Verified && objs.Verified() && waitErr == nil && !opts.Want.TakenUp {
		// Ready, so source-controller verified it too: its words.
		res.SourceVerified = e.SourceVerified(ctx, spec.Namespace, SourceName(spec.Name))
	}
	return res, waitErr
}

// checkCreate refuses a create when a HelmRelease of the name exists
// (ExistsError; a replaced resource's is gone by now) or a release that
// another resource or tool made holds the name (reconcile.CheckCreate).
func (e *Client) checkCreate(ctx context.Context, spec *reconcile.Spec, lastRelease func() (*helm.Release, error)) error {
	hr, err := e.Get(ctx, spec.Namespace, spec.Name)
	if err != nil {
		return &RunError{Step: StepRead, Err: err}
	}
	if hr != nil {
		return &RunError{Step: StepCheck, Err: &ExistsError{HelmRelease: hr}}
	}
	latest, err := lastRelease()
	if err == nil {
		err = reconcile.CheckCreate(latest, spec)
	}
	if err != nil {
		return &RunError{Step: StepCheck, Err: err}
	}
	return nil
}

// fitToController sets what rel writes as the controller in the cluster
// takes it: without the CRD's answer (its read refused), hooks are written
// as the controller defaults them, and the apply says if they differ.
// Reinstall is what a controller without chartNameChangeStrategy does; a
// plan refuses InPlaceUpdate for such a controller.
func (e *Client) fitToController(ctx context.Context, rel *Release) {
	spec := rel.Spec
	if ok, _ := e.HasSpecField(ctx, "postRenderStrategy"); ok {
		rel.PostRenderStrategy = spec.PostRenderStrategy
		if rel.PostRenderStrategy == "" {
			rel.PostRenderStrategy = reconcile.PostRenderNoHooks
		}
	}
	rel.ChartNameChangeStrategy = spec.Upgrade.ChartNameChangeStrategy
	if ok, _ := e.HasSpecField(ctx, "upgrade.chartNameChangeStrategy"); !ok {
		rel.ChartNameChangeStrategy = ""
	}
}

// CreatedNamespaces are the namespaces install.createNamespace creates for
// a release handed to Flux, the release's own first: its target namespace
// when the controller installs into this cluster (remote: through a
// kubeConfig), created here so that it is marked as the release's (the
// controller would create it unmarked), and the HelmRelease's.
func CreatedNamespaces(spec *reconcile.Spec, remote bool) []string {
	target := spec.GetTargetNamespace()
	if target == spec.Namespace || remote {
		return []string{spec.Namespace}
	}
	return []string{target, spec.Namespace}
}
