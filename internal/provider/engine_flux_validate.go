package provider

import (
	"context"
	"fmt"

	"github.com/fluxcd/pkg/runtime/cel"
	celgo "github.com/google/cel-go/cel"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
)

// validate refuses what Flux's controller cannot do or has no use for:
// a chart it cannot fetch, a provenance keyring, TLS verification off,
// dependencies it could not honour, post-renderer commands.
func (fluxEngine) validate(ctx context.Context, m *releaseModel, diags *diag.Diagnostics) {
	validateDependencies(ctx, m, diags)
	for i, pr := range postRenderersOf(ctx, m.PostRenderers, diags) {
		if pr.Exec != nil {
			attrError(diags, path.Root("post_renderers").AtListIndex(i).AtName("exec"), "Post-renderer command with the Flux engine",
				"helm-controller runs no commands: its post-renderers are Kustomize's only, so a command cannot be handed to Flux.",
				"Express the command's change as a kustomize post-renderer (patches, images), or keep engine = \""+engineHelm+"\", which runs the command on the machine running Terraform.")
		}
	}
	c := objectAs[releaseChartModel](ctx, m.Chart, path.Root("chart"), diags)
	if c == nil {
		return
	}
	chart := path.Root("chart")
	if c.Repository.IsNull() && c.Git.IsNull() && c.Bucket.IsNull() {
		attrError(diags, chart.AtName("repository"), "Local chart with the Flux engine",
			"A chart on the Terraform machine cannot be handed to Flux: helm-controller reads charts from a Helm repository, an OCI registry, a Git repository or a bucket its source-controller can reach.",
			"Publish the chart to a Helm repository, an OCI registry, Git or a bucket and set chart.repository, chart.git or chart.bucket, or keep engine = \""+engineHelm+"\" for a local chart.")
	}
	if v := c.Verify; v != nil {
		validateFluxVerify(ctx, m, v, chart.AtName("verify"), diags)
	}
	if c.DependencyUpdate.ValueBool() {
		attrError(diags, chart.AtName("dependency_update"), "Dependency update with the Flux engine",
			"source-controller builds a chart's dependencies that its charts/ lacks from Chart.yaml, and keeps the ones charts/ holds: it has no dependency update to hand the release to.",
			"Commit the dependencies you want in the chart's charts/ (helm dependency update), or remove them from charts/ so that source-controller fetches them, and remove dependency_update; or keep engine = \""+engineHelm+"\".")
	}
	if !c.ValuesFiles.IsNull() && !c.Repository.IsUnknown() && chartsource.IsOCI(c.Repository.ValueString()) {
		attrError(diags, chart.AtName("values_files"), "Values files of an OCI chart with the Flux engine",
			"The provider hands an OCI chart to Flux as an OCIRepository named by the HelmRelease's spec.chartRef, whose chart helm-controller deploys with its values.yaml: Flux has no values files for it, and the release would not be the one planned.",
			"Write the values files' content in values (or values_from), or keep engine = \""+engineHelm+"\".")
	}
	if c.InsecureSkipTLSVerify.ValueBool() {
		attrError(diags, chart.AtName("insecure_skip_tls_verify"), "TLS verification off with the Flux engine",
			"Flux's source-controller always verifies the TLS certificates of chart repositories.",
			"Give the repository's CA with chart.ca_file (it is written into the credentials Secret), or keep engine = \""+engineHelm+"\".")
	}
}

// validateDependencies refuses a release that depends on itself, and
// readiness expressions that helm-controller could not compile (it would
// stall the release on them).
func validateDependencies(ctx context.Context, m *releaseModel, diags *diag.Diagnostics) {
	f := objectAs[fluxModel](ctx, m.Flux, path.Root("flux"), diags)
	if f == nil || f.DependsOn.IsNull() || f.DependsOn.IsUnknown() {
		return
	}
	var deps []dependencyModel
	if f.DependsOn.ElementsAs(ctx, &deps, false).HasError() {
		return // not known yet
	}
	for i, d := range deps {
		p := path.Root("flux").AtName("depends_on").AtListIndex(i)
		// The configuration's namespace: null before its default applies.
		own := m.Namespace
		if own.IsNull() {
			own = types.StringValue("default")
		}
		ns := d.Namespace
		if ns.IsNull() {
			ns = own
		}
		if !d.Name.IsUnknown() && !ns.IsUnknown() && !m.Name.IsUnknown() && !own.IsUnknown() &&
			d.Name.ValueString() == m.Name.ValueString() && ns.ValueString() == own.ValueString() {
			attrError(diags, p.AtName("name"), "Release depends on itself",
				fmt.Sprintf("flux.depends_on[%d] names this release's own HelmRelease %s/%s: the controller would wait for it forever.", i, ns.ValueString(), d.Name.ValueString()),
				"Name another HelmRelease, or remove the entry.")
		}
		if expr := d.ReadyExpr.ValueString(); expr != "" && !d.ReadyExpr.IsUnknown() {
			if _, err := cel.NewExpression(expr, cel.WithCompile(), cel.WithOutputType(celgo.BoolType), cel.WithStructVariables("self", "dep")); err != nil {
				attrError(diags, p.AtName("ready_expr"), "Invalid readiness expression",
					fmt.Sprintf("The CEL expression at %s does not compile to a boolean over self and dep: %s.", p.AtName("ready_expr"), err),
					"Write a CEL expression that yields true or false, e.g. dep.status.conditions.filter(c, c.type == 'Ready').all(c, c.status == 'True').")
			}
		}
	}
}

// validateFluxVerify refuses a chart.verify the OCIRepository's
// spec.verify cannot carry: provenance files, a Secret of another
// namespace, keys given both inline and by Secret.
func validateFluxVerify(ctx context.Context, m *releaseModel, v *chartVerifyModel, at path.Path, diags *diag.Diagnostics) {
	if v.provider() == verifyPGP {
		attrError(diags, at.AtName("provider"), "Provenance keyring with the Flux engine",
			"Flux's controllers verify charts with cosign or notation signatures of OCI artifacts, not with a GnuPG keyring of provenance files.",
			"Sign the chart with cosign or notation and set chart.verify.provider to it, or keep engine = \""+engineHelm+"\" to verify provenance files.")
		return
	}
	if v.SecretRef.IsNull() || v.SecretRef.IsUnknown() {
		return
	}
	if !v.PublicKeys.IsNull() {
		attrError(diags, at.AtName("public_keys"), "Keys both inline and in a Secret with the Flux engine",
			"The OCIRepository's spec.verify.secretRef names one Secret: the keys of chart.verify.public_keys cannot be added to the Secret of chart.verify.secret_ref.",
			"Put every key in the Secret, or give them all in chart.verify.public_keys (the provider writes them into a Secret of its own).")
	}
	if !v.TrustPolicy.IsNull() {
		attrError(diags, at.AtName("trust_policy"), "Trust policy beside a Secret with the Flux engine",
			"source-controller reads notation's trust policy from the Secret of spec.verify.secretRef (its key trustpolicy.json).",
			"Put the trust policy into the Secret under trustpolicy.json and remove chart.verify.trust_policy.")
	}
	own := m.Namespace.ValueString()
	if m.Namespace.IsNull() {
		own = "default" // the configuration's, before its default applies
	}
	ref := v.secretRef(ctx, own, diags)
	if ref != nil && !ref.Namespace.IsUnknown() && !m.Namespace.IsUnknown() && ref.Namespace.ValueString() != own {
		attrError(diags, at.AtName("secret_ref").AtName("namespace"), "Verification Secret in another namespace with the Flux engine",
			"The OCIRepository's spec.verify.secretRef names a Secret of its own namespace, the release's.",
			"Copy the Secret into the release's namespace, or give the keys in chart.verify.public_keys.")
	}
}
