package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

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

// reconciler returns the reconciler of spec on m's cluster (or the
// kube_config one); nil with a diagnostic when the cluster cannot be used.
// The credentials of its cluster join red, and the context returned masks
// them in log lines, the reconciler's own included.
func (r *releaseResource) reconciler(ctx context.Context, m *releaseModel, spec *reconcile.Spec, red *redactor, diags *diag.Diagnostics) (context.Context, *reconcile.Reconciler) {
	return r.reconcilerOn(ctx, m, spec, red, false, diags)
}

// reconcilerOn is reconciler, rendering from the release's newest settled
// revision when settled (reconcile.Options.Settled; see
// engine.settledRender).
func (r *releaseResource) reconcilerOn(ctx context.Context, m *releaseModel, spec *reconcile.Spec, red *redactor, settled bool, diags *diag.Diagnostics) (context.Context, *reconcile.Reconciler) {
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
	log := newReconcilerLogger(ctx)
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
		PlannedKinds:  &c.plannedKinds,
	})
	if err != nil {
		p := path.Root("name")
		if ref != nil {
			p = path.Root("kube_config")
		}
		attrError(diags, p, "Release cluster unavailable", err.Error()+".", "Check the provider's kubernetes settings and, with kube_config, that the Secret holds a kubeconfig of a reachable cluster.")
		return ctx, nil
	}
	red.addReconciler(e)
	ctx = red.context(ctx)
	log.setContext(ctx)
	return ctx, e
}
