package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// validate refuses the flux settings, which only Flux's controller uses;
// it warns about a retry_interval, which the helm engine has no use for.
func (helmEngine) validate(ctx context.Context, m *releaseModel, diags *diag.Diagnostics) {
	if !m.Flux.IsNull() && !m.Flux.IsUnknown() {
		attrError(diags, path.Root("flux"), "Flux settings without the Flux engine",
			"flux settings are used only by Flux's controller, and engine is not \""+engineFlux+"\".",
			"Set engine = \""+engineFlux+"\" to hand the release to Flux's helm-controller, or remove the flux block.")
	}
	for action, st := range strategiesOf(ctx, m, diags) {
		if st.Name.ValueString() != string(reconcile.StrategyRetryOnFailure) {
			continue // refused by validateStrategies
		}
		diags.AddAttributeWarning(path.Root(action).AtName("strategy").AtName("retry_interval"), "Retry interval unused by the helm engine",
			"The helm engine retries a failed "+action+" at the next terraform apply and has no use for retry_interval: it is helm-controller's wait between its own retries.\n\nRemove retry_interval, or set engine = \""+engineFlux+"\" to hand the release to helm-controller.")
	}
}
