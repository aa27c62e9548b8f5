package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// validate refuses the flux settings, which only Flux's controller uses,
// and the settings only a Helm 4 controller honours; it warns about a
// retry_interval, which the helm engine has no use for.
func (helmEngine) validate(ctx context.Context, m *releaseModel, diags *diag.Diagnostics) {
	if !m.Flux.IsNull() && !m.Flux.IsUnknown() {
		attrError(diags, path.Root("flux"), "Flux settings without the Flux engine",
			"flux settings are used only by Flux's controller, and engine is not \""+engineFlux+"\".",
			"Set engine = \""+engineFlux+"\" to hand the release to Flux's helm-controller, or remove the flux block.")
	}
	validateHelm3(ctx, m, diags)
	for action, st := range strategiesOf(ctx, m, diags) {
		if st.Name.ValueString() != string(reconcile.StrategyRetryOnFailure) {
			continue // refused by validateStrategies
		}
		diags.AddAttributeWarning(path.Root(action).AtName("strategy").AtName("retry_interval"), "Retry interval unused by the helm engine",
			"The helm engine retries a failed "+action+" at the next terraform apply and has no use for retry_interval: it is helm-controller's wait between its own retries.\n\nRemove retry_interval, or set engine = \""+engineFlux+"\" to hand the release to helm-controller.")
	}
}

// validateHelm3 refuses, with the in-process engine, the settings only a
// Helm 4 controller honours: Helm 3 post-renders no hook and writes objects
// client-side.
func validateHelm3(ctx context.Context, m *releaseModel, diags *diag.Diagnostics) {
	const remedy = "Set engine = \"" + engineFlux + "\" to hand the release to a helm-controller that runs Helm 4, or remove the setting."
	if v := m.PostRenderStrategy.ValueString(); reconcile.PostRenderStrategy(v).PostRendersHooks() {
		attrError(diags, path.Root("post_render_strategy"), "Hooks not post-rendered by Helm 3",
			fmt.Sprintf("post_render_strategy = %q sends the hooks through the post-renderers, which Helm 4.2 does (helm-controller v1.6 and later); the in-process engine runs Helm 3, which post-renders no hook.", v), remedy)
	}
	const ssa = "The in-process engine runs Helm 3, which writes objects client-side; server-side apply is Helm 4's (helm-controller v1.5 and later)."
	if in := objectAs[installModel](ctx, m.Install, path.Root("install"), diags); in != nil && in.ServerSideApply.ValueBool() {
		attrError(diags, path.Root("install").AtName("server_side_apply"), "Server-side apply needs Helm 4", ssa, remedy)
	}
	if up := objectAs[upgradeModel](ctx, m.Upgrade, path.Root("upgrade"), diags); up != nil && up.ServerSideApply.ValueString() == ssaEnabled {
		attrError(diags, path.Root("upgrade").AtName("server_side_apply"), "Server-side apply needs Helm 4", ssa, remedy)
	}
	if r := objectAs[rollbackModel](ctx, m.Rollback, path.Root("rollback"), diags); r != nil && r.ServerSideApply.ValueString() == ssaEnabled {
		attrError(diags, path.Root("rollback").AtName("server_side_apply"), "Server-side apply needs Helm 4", ssa, remedy)
	}
}
