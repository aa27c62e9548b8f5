package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/flux"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/postrender"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// fluxEngine hands releases to Flux's helm-controller (engine = "flux"):
// the apply writes a HelmRelease with its chart source and Secrets, and
// waits for the controller's result.
type fluxEngine struct{ r *releaseResource }

func (fluxEngine) name() string { return engineFlux }

// spec is the reconciler's view of m, rendered as helm-controller renders
// it: its objects carry the controller's origin labels.
func (fluxEngine) spec(ctx context.Context, m *releaseModel, diags *diag.Diagnostics) *reconcile.Spec {
	s := m.spec(ctx, diags)
	s.OriginGroup = postrender.FluxOriginGroup
	return s
}

// fluxWritten is what an apply wrote: a HelmRelease of another generation
// was changed by someone else since.
type fluxWritten struct {
	Generation int64 `json:"generation"`
}

// fluxSettings are the flux block's settings, defaulted.
type fluxSettings struct {
	interval  time.Duration
	uninstall bool
	wait      bool
}

// fluxSettings are m's flux block's settings, defaulted.
func (m *releaseModel) fluxSettings(ctx context.Context, diags *diag.Diagnostics) fluxSettings {
	out := fluxSettings{interval: flux.DefaultInterval, uninstall: true, wait: true}
	f := objectAs[fluxModel](ctx, m.Flux, path.Root("flux"), diags)
	if f == nil {
		return out
	}
	if d := parseDuration(f.Interval); d > 0 {
		out.interval = d
	}
	if !f.UninstallOnDestroy.IsNull() {
		out.uninstall = f.UninstallOnDestroy.ValueBool()
	}
	if !f.Wait.IsNull() {
		out.wait = f.Wait.ValueBool()
	}
	return out
}

// client is the Flux client of m's cluster; nil with a diagnostic when
// the cluster cannot be used or lacks Flux's kinds.
// getter is the Kubernetes client getter of m's cluster, with the
// provider's credentials.
func (f fluxEngine) getter(m *releaseModel, diags *diag.Diagnostics) *kube.Getter {
	c := f.r.clusterOf(m, diags)
	if c == nil {
		return nil
	}
	cfg, err := c.clients.RESTConfig()
	if err != nil {
		clusterUnavailable(diags, path.Root("engine"), err)
		return nil
	}
	return kube.NewGetter(cfg, m.Namespace.ValueString(), "", c.discovery(cfg, ""))
}

func (f fluxEngine) client(m *releaseModel, diags *diag.Diagnostics) *flux.Client {
	c := f.r.clusterOf(m, diags)
	if c == nil {
		return nil
	}
	e, err := c.fluxClient()
	if err != nil {
		clusterUnavailable(diags, path.Root("engine"), err)
		return nil
	}
	if err := e.CheckCRDs(); err != nil {
		if errors.Is(err, flux.ErrCRDsMissing) {
			attrError(diags, path.Root("engine"), "Flux not installed",
				fmt.Sprintf("engine = %q hands the release to Flux's helm-controller, but %s.", engineFlux, err),
				"Install Flux's source-controller and helm-controller in the cluster (flux install, or the Flux Operator) before planning, or set engine = \""+engineHelm+"\".")
			return nil
		}
		clusterUnavailable(diags, path.Root("engine"), err)
		return nil
	}
	return e
}

// release is the release of run as Flux objects, with the values as
// configured, for the controller to compose; nil with a diagnostic when
// it cannot be.
func (f fluxEngine) release(ctx context.Context, run *releaseRun) *flux.Release {
	m, resolved, diags := run.m, run.resolved, run.diags
	var src chartsource.Source
	var verifySecret string
	if ref := m.chartRef(ctx, diags); ref != nil {
		// The object is the controller's source: nothing of it is written.
		src = chartsource.Source{Name: resolved.Name(), ChartRef: ref}
	} else {
		c := objectAs[releaseChartModel](ctx, m.Chart, path.Root("chart"), diags)
		if c == nil {
			return nil
		}
		var d diag.Diagnostics
		src, d = c.source(ctx, f.r.data)
		diags.Append(d...)
		run.wo.credentials(&src)
		// The controller gets the login's current token, which expires in
		// the credentials Secret (the guide says so).
		auth, err := src.Auth.Concrete(ctx, src.Repository)
		if err != nil {
			chartError(diags, path.Root("chart"), err)
			return nil
		}
		src.Auth = auth
		if c.Verify != nil && !c.Verify.SecretRef.IsNull() {
			if ref := c.Verify.secretRef(ctx, m.Namespace.ValueString(), diags); ref != nil {
				verifySecret = ref.Name.ValueString()
			}
		}
	}
	settings := m.fluxSettings(ctx, diags)
	rel := &flux.Release{
		Spec:            run.spec,
		Chart:           flux.Chart{Source: src, Version: resolved.Version, Digest: resolved.Digest, SourceRevision: resolved.SourceRevision},
		Values:          run.input.Values,
		SensitiveValues: run.input.SensitiveValues,
		ValuesFrom:      run.input.References,
		Interval:        settings.interval,
		Suspend:         m.Suspend.ValueBool(),
		VerifySecret:    verifySecret,
	}
	if ref := m.kubeConfigRef(ctx, diags); ref != nil {
		rel.KubeConfig = &meta.SecretKeyReference{Name: ref.Name, Key: ref.Key}
	}
	if f := objectAs[fluxModel](ctx, m.Flux, path.Root("flux"), diags); f != nil && !f.DependsOn.IsNull() {
		var deps []dependencyModel
		diags.Append(f.DependsOn.ElementsAs(ctx, &deps, false)...)
		for _, d := range deps {
			rel.DependsOn = append(rel.DependsOn, meta.DependencyReference{Name: d.Name.ValueString(), Namespace: d.Namespace.ValueString(), ReadyExpr: d.ReadyExpr.ValueString()})
		}
	}
	if diags.HasError() {
		return nil
	}
	return rel
}

// cleanupLeft warns, and reports true, when err is only the failure to
// let go the chart sources and Secrets the release no longer uses: what
// it wrote or deleted stands.
func cleanupLeft(diags *diag.Diagnostics, err error, id, namespace string) bool {
	var cleanup *flux.CleanupError
	if !errors.As(err, &cleanup) {
		return false
	}
	warnCleanupLeft(diags, cleanup.Err, id, namespace)
	return true
}

// warnCleanupLeft warns that letting go the chart sources and Secrets
// the release no longer uses failed (err).
func warnCleanupLeft(diags *diag.Diagnostics, err error, id, namespace string) {
	diags.AddWarning("Unused chart sources left",
		fmt.Sprintf("helmrelease_release %s: letting go the chart sources and Secrets the release no longer uses failed: %s.\n\nKubernetes' garbage collector deletes them with their last HelmRelease; the provider's credentials need list on HelmRepositories and HelmCharts in namespace %q (see the guide \"Handing releases to Flux\").", id, err, namespace))
}
