package provider

import (
	"context"
	"errors"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/api/meta"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/manifest"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// releaseEngine runs the operations of a helmrelease_release on one
// engine: helmEngine in the provider's process, fluxEngine through Flux's
// helm-controller. The resource asks the engine of its model (engineOf)
// and nothing else, so that each promise of the guide's "What each engine
// keeps" is kept, or refused, by each implementation, not per call site.
type releaseEngine interface {
	// apply installs or upgrades the release as planned and saves what
	// it did, even when it fails. A create (op.prior nil) never takes over
	// a release or HelmRelease that another state or tool manages.
	apply(ctx context.Context, op *applyOp)
	// read refreshes the release, writing nothing to the cluster; the
	// resource leaves the state only when the release is confirmed gone.
	read(ctx context.Context, m *releaseModel, private privateGetter, resp *resource.ReadResponse)
	// remove uninstalls the release (or lets it go, as configured); the
	// resource stays when that fails.
	remove(ctx context.Context, m *releaseModel, private privateGetter, resp *resource.DeleteResponse)
	// allowCreate checks, at the plan of a create, what already holds the
	// release's name (latest: its newest revision, nil for none): it
	// refuses what another tool manages, warns about what another
	// helmrelease_release may, and says whether the create renders as an
	// install. ok is false when the plan must stop.
	allowCreate(ctx context.Context, plan *releaseModel, spec *reconcile.Spec, latest *helm.Release, diags *diag.Diagnostics) (asInstall, ok bool)
}

var (
	_ releaseEngine = helmEngine{}
	_ releaseEngine = fluxEngine{}
)

// helmEngine runs releases in the provider's process (engine = "helm").
type helmEngine struct{ r *releaseResource }

// fluxEngine hands releases to Flux's helm-controller (engine = "flux").
type fluxEngine struct{ r *releaseResource }

// engineOf is the engine of m: the one place the engine is chosen.
func (r *releaseResource) engineOf(m *releaseModel) releaseEngine {
	if m.handedToFlux() {
		return fluxEngine{r}
	}
	return helmEngine{r}
}

// applyOp is what an apply is given: the plan (m), the configuration, the
// prior state (nil for a create) and its status (empty for a create), and
// where the result goes.
type applyOp struct {
	m, config    *releaseModel
	prior        *releaseModel
	st           *reconcile.Status
	priorPrivate privateGetter
	out          *tfsdk.State
	private      privateSetter
	identity     *tfsdk.ResourceIdentity
	diags        *diag.Diagnostics
}

// clusterOf is the cluster m is on; nil with a diagnostic on cluster when
// the provider does not configure it.
func (r *releaseResource) clusterOf(m *releaseModel, diags *diag.Diagnostics) *cluster {
	c, err := r.data.cluster(m.Cluster)
	if err != nil {
		clusterNotConfigured(diags, "helmrelease_release "+m.ID.ValueString(), err)
		return nil
	}
	return c
}

// clusterKnown reports whether the settings of m's cluster are known (they
// are not at plan when the cluster is made in the same apply). A cluster
// the provider does not configure counts as known: using it reports it.
func (r *releaseResource) clusterKnown(m *releaseModel) bool {
	c, err := r.data.cluster(m.Cluster)
	return err != nil || c.known()
}

// newEngine returns the engine of spec on the provider's cluster (or the
// kube_config one); nil with a diagnostic when the cluster cannot be used.
// The credentials of the engine's cluster join red, and the context
// returned masks them in log lines, the engine's own included.
func (r *releaseResource) newEngine(ctx context.Context, m *releaseModel, spec *reconcile.Spec, red *redactor, diags *diag.Diagnostics) (context.Context, *reconcile.Reconciler) {
	return r.openEngine(ctx, m, spec, red, false, diags)
}

// renderEngine is newEngine for a plan's render. A release handed to Flux
// is rendered from its newest settled revision (reconcile.Options.Settled):
// the controller acts on it on its own schedule, and a plan must neither
// wait for nor be refused by the lock of an upgrade it runs.
func (r *releaseResource) renderEngine(ctx context.Context, m *releaseModel, spec *reconcile.Spec, red *redactor, diags *diag.Diagnostics) (context.Context, *reconcile.Reconciler) {
	return r.openEngine(ctx, m, spec, red, m.handedToFlux(), diags)
}

func (r *releaseResource) openEngine(ctx context.Context, m *releaseModel, spec *reconcile.Spec, red *redactor, settled bool, diags *diag.Diagnostics) (context.Context, *reconcile.Reconciler) {
	c := r.clusterOf(m, diags)
	if c == nil {
		return ctx, nil
	}
	cfg, err := c.clients.RESTConfig()
	if err != nil {
		clusterUnavailable(diags, path.Root("name"), err)
		return ctx, nil
	}
	ref := m.kubeConfigRef(ctx, diags)
	if diags.HasError() {
		return ctx, nil
	}
	log := newEngineLogger(ctx)
	impersonate := ""
	if spec.ServiceAccountName != "" {
		impersonate = kube.ServiceAccountUser(spec.Namespace, spec.ServiceAccountName)
	}
	e, err := reconcile.New(ctx, spec, reconcile.Options{
		Config:     cfg,
		KubeConfig: ref,
		Log:        log,
		HelmLog:    log.helm,
		// Terraform shows only "Still creating…": the log says for what.
		ProgressEvery: waitProgressEvery(),
		Discovery:     c.discovery(cfg, impersonate),
		Settled:       settled,
	})
	if err != nil {
		p := path.Root("name")
		if ref != nil {
			p = path.Root("kube_config")
		}
		attrError(diags, p, "Release cluster unavailable", err.Error()+".", "Check the provider's kubernetes settings and, with kube_config, that the Secret holds a kubeconfig of a reachable cluster.")
		return ctx, nil
	}
	red.addEngine(e)
	ctx = red.context(ctx)
	log.setContext(ctx)
	return ctx, e
}

// resolveChart resolves the chart of the model; nil with a diagnostic on
// failure. With versionOnly, a chart of a Helm repository is resolved from
// the index alone (Chart nil): what a plan without a Helm action needs.
func (r *releaseResource) resolveChart(ctx context.Context, m *releaseModel, wo writeOnly, versionOnly bool, diags *diag.Diagnostics) *chartsource.Resolved {
	c := objectAs[releaseChartModel](ctx, m.Chart, path.Root("chart"), diags)
	if c == nil {
		return nil
	}
	src, d := c.source(ctx, r.data)
	diags.Append(d...)
	if diags.HasError() {
		return nil
	}
	if p := wo.ChartPassword.ValueString(); p != "" {
		src.Auth.Password = p
	}
	resolve := r.data.charts.Resolve
	if versionOnly {
		resolve = r.data.charts.Version
	}
	resolved, err := resolve(ctx, src)
	if err != nil {
		chartError(diags, path.Root("chart"), err)
		return nil
	}
	staleIndexWarning(diags, path.Root("chart").AtName("repository"), resolved.StaleIndex)
	return resolved
}

// composeValues composes the values of the model, its write-only ones
// included.
func (r *releaseResource) composeValues(ctx context.Context, m *releaseModel, wo writeOnly, red *redactor, diags *diag.Diagnostics) map[string]any {
	var refs []valuesFromModel
	if !m.ValuesFrom.IsNull() {
		diags.Append(m.ValuesFrom.ElementsAs(ctx, &refs, false)...)
	}
	if diags.HasError() {
		return nil
	}
	c := r.clusterOf(m, diags)
	if c == nil {
		return nil
	}
	return composeValues(ctx, c, m.Namespace.ValueString(), m.Values, []sensitiveInput{{path.Root("sensitive_values"), m.SensitiveValues}, {path.Root("sensitive_values_wo"), wo.SensitiveValues}}, refs, red, diags)
}

// displayResources is the resources attribute of a release: objects keyed
// as in helmrelease_template, Secret values hashed with the engine's
// SecretHashKey, and the strings at the sensitive paths of its values
// hidden wherever the chart put them.
func displayResources(ctx context.Context, e *reconcile.Reconciler, rel *helm.Release, drift *reconcile.DriftReport, sensitive [][]string) (types.Map, error) {
	shown, _, err := showManifest(rel.Manifest, rel.Namespace, engineScope(e), drift, display{Key: e.Key, Sensitive: stringsAt(rel.Config, sensitive)})
	if err != nil {
		return types.MapNull(types.StringType), err
	}
	v, d := types.MapValueFrom(ctx, types.StringType, shown)
	if d.HasError() {
		return v, errors.New("resources: " + d[0].Detail())
	}
	return v, nil
}

// engineScope tells the scope of kinds from the release cluster's API.
func engineScope(e *reconcile.Reconciler) manifest.Scope {
	mapper, err := e.Kube.ToRESTMapper()
	if err != nil {
		return nil
	}
	return mapperScope(mapper)
}

// mapperScope tells the scope of kinds from a REST mapper; nil (no mapper)
// leaves it to manifest.Parse.
func mapperScope(mapper meta.RESTMapper) manifest.Scope {
	if mapper == nil {
		return nil
	}
	return func(gvk k8sschema.GroupVersionKind) (bool, bool) {
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return false, false
		}
		return m.Scope.Name() == "namespace", true
	}
}
