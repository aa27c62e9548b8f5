package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// Read refreshes the release from Helm storage and the cluster, writing
// nothing to either. The resource leaves the state only when the release is
// confirmed gone. A release changed outside Terraform (manual helm upgrade
// or rollback) or left pending is marked not ready, so that the plan acts
// on it; with drift detection, drifted objects show their live fields in
// resources and missing ones are left out, so that the plan puts them back.
// Nothing changes in the state when nothing changed in the cluster.
func (r *releaseResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m releaseModel
	resp.Diagnostics.Append(releaseModelOf(ctx, req.State.Raw, &m)...)
	if resp.Diagnostics.HasError() || r.data == nil {
		return
	}
	// The identity never changes: the release this resource manages.
	resp.Diagnostics.Append(setIdentity(ctx, resp.Identity, &m)...)
	importing := m.Status.IsNull()
	if !importing && m.Suspend.ValueBool() {
		return
	}
	c := r.clusterOf(&m, &resp.Diagnostics)
	if c == nil {
		return
	}
	switch _, err := c.clients.RESTConfig(); {
	case errors.Is(err, errConfigUnknown) && req.ClientCapabilities.DeferralAllowed:
		// Planning before the cluster exists: Terraform refreshes it once
		// the provider's settings are known.
		resp.Deferred = &resource.Deferred{Reason: resource.DeferredReasonProviderConfigUnknown}
		return
	case errors.Is(err, errConfigUnknown) && !importing:
		// Planning before the cluster exists, with a Terraform that cannot
		// defer: the state stands, the apply refreshes.
		return
	case errors.Is(err, kube.ErrNotConfigured):
		resp.Diagnostics.AddError("Kubernetes cluster not configured",
			fmt.Sprintf("helmrelease_release %s cannot be refreshed: the provider has no kubernetes settings, and no KUBE_* or KUBECONFIG variable names a cluster (nor does it run in one).\n\nThe state is kept as it is. Configure the provider's kubernetes block (config_path, or host and credentials), or set KUBECONFIG, then plan again.", m.ID.ValueString()))
		return
	case err != nil:
		resp.Diagnostics.AddError("Kubernetes cluster unavailable",
			fmt.Sprintf("helmrelease_release %s cannot be refreshed: %s cannot be used: %s.\n\nThe state is kept as it is. Check the cluster's settings in the provider configuration, then plan again.", m.ID.ValueString(), c.describe(), err))
		return
	}
	r.pinChart(ctx, &m, resp.Private, &resp.Diagnostics)
	r.refresh(ctx, &m, req.Private, resp)
}

// releaseRefresh is a release as a refresh decoded it, for its engine to
// read (engine.read): the state's model and private state, and the spec.
type releaseRefresh struct {
	r       *releaseResource
	m       *releaseModel
	private privateGetter
	resp    *resource.ReadResponse
	spec    *reconcile.Spec
	red     *redactor
}

// reconciler is the reconciler of the release on its cluster, whose Key
// is the state's; nil with a diagnostic when the cluster cannot be used.
// The context returned masks the cluster's credentials.
func (rf *releaseRefresh) reconciler(ctx context.Context) (context.Context, *reconcile.Reconciler) {
	ctx, e := rf.r.reconciler(ctx, rf.m, rf.spec, rf.red, &rf.resp.Diagnostics)
	if e != nil {
		e.Key = secretHashKeyOf(ctx, rf.private, rf.resp.Private, &rf.resp.Diagnostics)
	}
	return ctx, e
}

// refreshed is what an engine's read found: the release's status, and its
// newest revision when it was read (latestRead; the state's objects,
// notes and description are then the ones read, resources).
type refreshed struct {
	status     *reconcile.Status
	latestRead bool
	latest     *helm.Release
	resources  types.Map
}

// refresh has the engine of m read the release, writing nothing to the
// cluster, and saves what it found; the state stays as it is when the
// engine says nothing was refreshed, and the resource leaves it only when
// the engine removed it.
func (r *releaseResource) refresh(ctx context.Context, m *releaseModel, private privateGetter, resp *resource.ReadResponse) {
	eng := r.engineOf(m)
	rf := &releaseRefresh{r: r, m: m, private: private, resp: resp, red: r.redactorFor(ctx, m, writeOnly{})}
	ctx = rf.red.context(ctx)
	defer rf.red.finish(ctx, &resp.State, &resp.Diagnostics)
	rf.spec = eng.spec(ctx, m, &resp.Diagnostics)
	r.recordInputs(ctx, m, rf.spec, private, resp.Private, &resp.Diagnostics)
	found := eng.read(ctx, rf)
	if found == nil {
		return
	}
	status, d := statusObject(ctx, found.status)
	resp.Diagnostics.Append(d...)
	m.Status = status
	if found.latestRead {
		m.Resources = found.resources
		m.Notes, m.Description = releaseInfo(found.latest, nil, m.Notes, m.Description)
	}
	m.PlannedAction = types.StringNull() // describes the last plan, not the release
	m.PlannedHooks, m.PlannedCRDs = types.MapNull(types.StringType), types.MapNull(types.StringType)
	m.PlannedDependencies = types.MapNull(types.StringType)
	m.PlannedChanges = types.MapNull(types.StringType)
	resp.Diagnostics.Append(setRelease(ctx, &resp.State.Raw, m)...)
}
