package provider

import (
	"context"
	"fmt"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/flux"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/tfvalue"
)

// fluxField is a HelmRelease field that helm-controllers before since
// lack: their CRD would drop it silently, so a plan that needs it is
// refused.
type fluxField struct {
	// crd is the field's path under spec, dotted, through lists.
	crd   string
	since string
	// needed returns the attribute that needs the field, or nil.
	needed func(ctx context.Context, m *releaseModel) *path.Path
}

// fluxFields are the fields a configuration may need that older
// controllers lack.
var fluxFields = []fluxField{
	{crd: "healthCheckExprs", since: "v1.5 (Flux 2.8)", needed: func(_ context.Context, m *releaseModel) *path.Path {
		switch {
		case !m.HealthCheckExprs.IsNull():
			return new(path.Root("health_check_exprs"))
		case !m.WaitStrategy.IsNull():
			return new(path.Root("wait_strategy"))
		}
		return nil
	}},
	{crd: "install.serverSideApply", since: "v1.5 (Flux 2.8)", needed: serverSideApplyIn("install", func(m *releaseModel) types.Object { return m.Install })},
	{crd: "upgrade.serverSideApply", since: "v1.5 (Flux 2.8)", needed: serverSideApplyIn("upgrade", func(m *releaseModel) types.Object { return m.Upgrade })},
	{crd: "rollback.serverSideApply", since: "v1.5 (Flux 2.8)", needed: serverSideApplyIn("rollback", func(m *releaseModel) types.Object { return m.Rollback })},
	{crd: "postRenderStrategy", since: "v1.6 (Flux 2.9)", needed: func(_ context.Context, m *releaseModel) *path.Path {
		// nohooks is what older controllers do.
		if reconcile.PostRenderStrategy(m.PostRenderStrategy.ValueString()).PostRendersHooks() {
			return new(path.Root("post_render_strategy"))
		}
		return nil
	}},
	{crd: "upgrade.chartNameChangeStrategy", since: "v1.6 (Flux 2.9)", needed: func(ctx context.Context, m *releaseModel) *path.Path {
		// Reinstall is what older controllers do.
		if up := objectAs[upgradeModel](ctx, m.Upgrade, path.Root("upgrade"), &diag.Diagnostics{}); up != nil && up.ChartNameChangeStrategy.ValueString() == chartNameInPlaceUpdate {
			return new(path.Root("upgrade").AtName("chart_name_change_strategy"))
		}
		return nil
	}},
	{crd: "valuesFrom.literal", since: "v1.6 (Flux 2.9)", needed: func(ctx context.Context, m *releaseModel) *path.Path {
		if m.ValuesFrom.IsNull() || m.ValuesFrom.IsUnknown() {
			return nil
		}
		var refs []valuesFromModel
		if m.ValuesFrom.ElementsAs(ctx, &refs, false).HasError() {
			return nil
		}
		for i, ref := range refs {
			if ref.Literal.ValueBool() {
				return new(path.Root("values_from").AtListIndex(i).AtName("literal"))
			}
		}
		return nil
	}},
}

// serverSideApplyIn is the needed function of <block>.server_side_apply: set when its
// value is (one not known yet is checked once it is).
func serverSideApplyIn(block string, get func(*releaseModel) types.Object) func(context.Context, *releaseModel) *path.Path {
	return func(_ context.Context, m *releaseModel) *path.Path {
		o := get(m)
		if o.IsNull() || o.IsUnknown() {
			return nil
		}
		if v, ok := o.Attributes()["server_side_apply"]; !ok || v.IsNull() || v.IsUnknown() {
			return nil
		}
		return new(path.Root(block).AtName("server_side_apply"))
	}
}

// planSupported reports whether the cluster's Flux can run m: its CRDs are
// there, and declare the fields m needs that older versions lack.
func (f fluxEngine) planSupported(ctx context.Context, m *releaseModel, diags *diag.Diagnostics) bool {
	fe := f.client(m, diags)
	if fe == nil {
		return false
	}
	ok := true
	if c := objectAs[releaseChartModel](ctx, m.Chart, path.Root("chart"), diags); c != nil && c.Verify != nil && !c.Verify.TrustedRoot.IsNull() {
		// The OCIRepository's CRD, source-controller's.
		found, err := fe.HasOCIRepositorySpecField(ctx, "verify.trustedRootSecretRef")
		if err != nil {
			clusterUnavailable(diags, path.Root("engine"), err)
			return false
		}
		if !found {
			at := path.Root("chart").AtName("verify").AtName("trusted_root")
			attrError(diags, at, "Flux too old for "+at.String(),
				"The OCIRepository CRD in this cluster has no spec.verify.trustedRootSecretRef: its source-controller is older than v1.9 (Flux 2.9), and would verify against Sigstore's public-good instance instead.",
				"Upgrade Flux's source-controller to v1.9 or later, or remove "+at.String()+".")
			ok = false
		}
	}
	if !notationPolicyInSecret(ctx, fe, m, diags) {
		ok = false
	}
	for _, f := range fluxFields {
		p := f.needed(ctx, m)
		if p == nil {
			continue
		}
		found, err := fe.HasSpecField(ctx, f.crd)
		if err != nil {
			clusterUnavailable(diags, path.Root("engine"), err)
			return false
		}
		if !found {
			attrError(diags, *p, "Flux too old for "+p.String(),
				fmt.Sprintf("The HelmRelease CRD in this cluster has no spec.%s: its helm-controller is older than %s, and would drop the setting.", f.crd, f.since),
				"Upgrade Flux's helm-controller to "+f.since+" or later, or remove "+p.String()+".")
			ok = false
		}
	}
	return ok
}

func (f fluxEngine) allowCreate(ctx context.Context, plan *releaseModel, spec *reconcile.Spec, latest *helm.Release, diags *diag.Diagnostics) (asInstall, ok bool) {
	written, ok := f.createAllowed(ctx, plan, spec, diags)
	if !ok {
		return false, false
	}
	if written {
		// The release is its HelmRelease's, warned about above: planned
		// as the fresh install the apply makes, if any.
		return true, true
	}
	return releaseCreateAllowed(plan, spec, latest, diags)
}

// createAllowed checks, at the plan of a create with engine = "flux",
// the HelmRelease of the name: one written by another tool is refused,
// one written by this provider warned about (see above). It reports
// whether one written by this provider exists, and whether the plan may
// go on.
func (f fluxEngine) createAllowed(ctx context.Context, m *releaseModel, spec *reconcile.Spec, diags *diag.Diagnostics) (written, ok bool) {
	fe := f.client(m, diags)
	if fe == nil {
		return false, false
	}
	hr, err := fe.Get(ctx, spec.Namespace, spec.Name)
	if err != nil {
		clusterUnavailable(diags, path.Root("name"), err)
		return false, false
	}
	switch {
	case hr == nil:
		return false, true
	case flux.WrittenByProvider(hr):
		diags.AddAttributeWarning(path.Root("name"), "HelmRelease managed in another state",
			fmt.Sprintf("HelmRelease %s/%s was written by a helmrelease_release that this state does not hold. If this plan replaces this resource (tainted, -replace, or a changed release attribute), it is deleted first and written again; otherwise the apply refuses it: another Terraform state manages it, or this one lost it.\n\nTo manage it from this state, import it (terraform import <address> %s/%s) and remove it from the other state; otherwise give this resource another name.",
				hr.Namespace, hr.Name, spec.GetStorageNamespace(), spec.GetReleaseName()))
		return true, true
	default:
		hrExists(diags, hr, spec)
		return false, false
	}
}

// hrExists refuses a HelmRelease another tool wrote.
func hrExists(diags *diag.Diagnostics, hr *helmv2.HelmRelease, spec *reconcile.Spec) {
	attrError(diags, path.Root("name"), "HelmRelease already exists",
		fmt.Sprintf("HelmRelease %s/%s exists and was not written by a helmrelease_release: %s manages it.", hr.Namespace, hr.Name, flux.Managers(hr)),
		fmt.Sprintf("Import it (terraform import <address> %s/%s) and remove it from where it is declared to manage it with this resource, or give this resource another name.", spec.GetStorageNamespace(), spec.GetReleaseName()))
}

// controllerAtWork says what helm-controller is running on a release
// handed to it, as its status says (Reconciling, Progressing: an install,
// upgrade, test or remediation under way); empty when it runs nothing.
func controllerAtWork(st *reconcile.Status) string {
	c := st.Condition(fluxmeta.ReconcilingCondition)
	ready := st.Condition(reconcile.ConditionReady)
	if c == nil || !c.Status || c.Reason != fluxmeta.ProgressingReason || ready != nil && ready.Status {
		return ""
	}
	return c.Message
}

func (fluxEngine) handOverChange() string { return "handed to Flux's helm-controller" }

// atWork is what helm-controller runs on a release it was running before
// the plan (controllerAtWork).
func (fluxEngine) atWork(st *reconcile.Status, continuing bool) string {
	if !continuing {
		return ""
	}
	return controllerAtWork(st)
}

// inSyncStatus: what helm-controller records is its own, read after the
// apply.
func (fluxEngine) inSyncStatus(context.Context, *releaseModel, *redactor, *reconcile.Status, reconcile.Desired, bool) *reconcile.Status {
	return nil
}

// asDeployed renders, for a release the controller was running before the
// plan, the fields it is known to render otherwise as it will.
func (fluxEngine) asDeployed(ctx context.Context, private privateGetter, continuing bool, diags *diag.Diagnostics) func(types.Map) types.Map {
	if !continuing {
		return nil
	}
	known := renderDifferencesOf(ctx, private, diags)
	return func(planned types.Map) types.Map { return asTheControllerRenders(planned, known) }
}

// settledRender: the controller acts on the release on its own schedule.
func (fluxEngine) settledRender() bool { return true }

// notationPolicyInSecret refuses, at plan, notation verification by a
// Secret without trustpolicy.json: source-controller reads the trust
// policy from that Secret alone and fails the OCIRepository without one,
// where the in-process engine uses its default policy. A Secret that
// cannot be read is left for the chart's resolve to report.
func notationPolicyInSecret(ctx context.Context, fe *flux.Client, m *releaseModel, diags *diag.Diagnostics) bool {
	c := objectAs[releaseChartModel](ctx, m.Chart, path.Root("chart"), diags)
	if c == nil || c.Verify == nil || c.Verify.Provider.ValueString() != chartsource.ProviderNotation || c.Verify.SecretRef.IsNull() || !tfvalue.FullyKnown(c.Verify.SecretRef) {
		return true
	}
	ref := c.Verify.secretRef(ctx, m.Namespace.ValueString(), diags)
	if ref == nil {
		return true
	}
	v := &chartsource.Verification{Provider: chartsource.ProviderNotation}
	if err := fe.VerificationKeys(ctx, ref.Namespace.ValueString(), ref.Name.ValueString(), v); err != nil || v.TrustPolicy != nil {
		return true
	}
	attrError(diags, path.Root("chart").AtName("verify").AtName("secret_ref"), "Notation Secret without a trust policy with the Flux engine",
		fmt.Sprintf("The Secret %s/%s holds no %s: source-controller reads notation's trust policy from the Secret of spec.verify.secretRef alone, and fails the OCIRepository without one (the in-process engine would use its default policy).", ref.Namespace.ValueString(), ref.Name.ValueString(), flux.TrustPolicyKey),
		"Add the trust policy to the Secret under "+flux.TrustPolicyKey+" (the provider's default: "+strings.Join(strings.Fields(chartsource.DefaultTrustPolicy), " ")+"), or give the certificates in chart.verify.public_keys, for which the provider writes its default policy into a Secret of its own.")
	return false
}
