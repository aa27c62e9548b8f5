package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
)

// validateEngine refuses, with engine = "flux", what Flux's controller
// cannot do or has no use for, and the flux settings with the helm
// engine. Values not known yet are checked when they are.
func validateEngine(ctx context.Context, m *releaseModel, diags *diag.Diagnostics) {
	if m.Engine.IsUnknown() {
		return
	}
	if !m.handedToFlux() {
		if !m.Flux.IsNull() && !m.Flux.IsUnknown() {
			attrError(diags, path.Root("flux"), "Flux settings without the Flux engine",
				"flux settings are used only by Flux's controller, and engine is not \""+engineFlux+"\".",
				"Set engine = \""+engineFlux+"\" to hand the release to Flux's helm-controller, or remove the flux block.")
		}
		return
	}
	c := objectAs[releaseChartModel](ctx, m.Chart, path.Root("chart"), diags)
	if c == nil {
		return
	}
	chart := path.Root("chart")
	if c.Repository.IsNull() {
		attrError(diags, chart.AtName("repository"), "Local chart with the Flux engine",
			"A chart on the Terraform machine cannot be handed to Flux: helm-controller reads charts from a Helm repository or an OCI registry its source-controller can reach.",
			"Publish the chart to a Helm repository or an OCI registry and set chart.repository, or keep engine = \""+engineHelm+"\" for a local chart.")
	}
	if c.Verify != nil {
		attrError(diags, chart.AtName("verify"), "Provenance keyring with the Flux engine",
			"Flux's controllers verify charts with Cosign or Notation signatures of OCI artifacts, not with a GnuPG keyring of provenance files.",
			"Remove chart.verify, or keep engine = \""+engineHelm+"\" to verify provenance files.")
	}
	if c.InsecureSkipTLSVerify.ValueBool() {
		attrError(diags, chart.AtName("insecure_skip_tls_verify"), "TLS verification off with the Flux engine",
			"Flux's source-controller always verifies the TLS certificates of chart repositories.",
			"Give the repository's CA with chart.ca_file (it is written into the credentials Secret), or keep engine = \""+engineHelm+"\".")
	}
}
