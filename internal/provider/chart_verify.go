package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/tfvalue"
)

// Signature providers of chart.verify: Flux's two for OCI charts, and
// Helm's provenance files.
const (
	verifyCosign   = chartsource.ProviderCosign
	verifyNotation = chartsource.ProviderNotation
	verifyPGP      = "pgp"
)

var verifyProviders = enum{verifyCosign, verifyNotation, verifyPGP}

// chartVerifyAttribute is chart.verify (HelmRelease
// spec.chart.spec.verify, OCIRepository spec.verify).
func chartVerifyAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: "Verify the chart's signature before anything is rendered (`verify`). " +
			"`cosign` and `notation` verify the signature of an OCI chart's manifest (`repository = \"oci://…\"`), as Flux's source-controller does: the plan resolves the digest, verifies it, and pulls and renders that digest only; the apply installs the digest the plan verified. " +
			"`pgp` verifies a provenance file (`.prov`, `helm package --sign`) against a GnuPG keyring, as `helm install --verify` does (Helm repositories, OCI registries and packaged local charts). " +
			"An unsigned chart, a signature by another key or identity, or a chart changed after signing fails the plan, naming the chart, its digest, the provider and the reason. " +
			"The digest verified and the signer show in `status.conditions` (type `SourceVerified`). Default: no verification.",
		Optional: true,
		Attributes: map[string]schema.Attribute{
			"provider": schema.StringAttribute{
				MarkdownDescription: "How the chart is signed (`provider`): " + verifyProviders.markdown() + ". Default: `pgp` when `keyring` is set, else `cosign` (Flux's default).",
				Optional:            true,
				Validators:          []validator.String{verifyProviders.validator()},
			},
			"keyring": schema.StringAttribute{
				MarkdownDescription: "`pgp` only: path of the keyring file (GnuPG public keys) holding the signers' keys, e.g. exported with `gpg --export`. Required with `pgp`. Default: none.",
				Optional:            true,
				Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
			},
			"public_keys": schema.ListAttribute{
				MarkdownDescription: "`cosign`: PEM public keys (`cosign.pub`), any of which may have signed; without them and without `secret_ref`, the signature must be keyless. " +
					"`notation`: PEM certificates of the trust store (the signing certificate's CA). Use `file(\"cosign.pub\")` to read one from a file. " +
					"Flux reads the same from the Secret `secretRef` names (its `*.pub` keys for cosign, its `*.crt` and `*.pem` keys for notation). Default: none.",
				ElementType: types.StringType,
				Optional:    true,
				Validators:  []validator.List{listvalidator.SizeAtLeast(1), listvalidator.ValueStringsAre(stringvalidator.LengthAtLeast(1))},
			},
			"secret_ref": schema.SingleNestedAttribute{
				MarkdownDescription: "A Secret in the cluster holding the keys (`secretRef`), read at plan: for `cosign`, its keys ending in `.pub` (public keys); for `notation`, its keys ending in `.crt` or `.pem` (certificates) and `trustpolicy.json` (the trust policy, which `trust_policy` then must not set). Default: none.",
				Optional:            true,
				Attributes: map[string]schema.Attribute{
					"name": schema.StringAttribute{
						MarkdownDescription: "Name of the Secret (`secretRef.name`). Required in `secret_ref`.",
						Required:            true,
						Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
					},
					"namespace": schema.StringAttribute{
						MarkdownDescription: "Namespace of the Secret. With `engine = \"flux\"` it must be the release's (Flux's `secretRef` is local). Default: the release's namespace.",
						Optional:            true,
					},
				},
			},
			"match_oidc_identity": schema.ListNestedAttribute{
				MarkdownDescription: "`cosign` keyless only: the identities whose signatures pass (`matchOIDCIdentity`), any of them. Required for keyless signatures: without it any Sigstore certificate would pass (Flux accepts that; this provider refuses it). Default: none.",
				Optional:            true,
				Validators:          []validator.List{listvalidator.SizeAtLeast(1)},
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"issuer": schema.StringAttribute{
						MarkdownDescription: "Regular expression (Go syntax) the OIDC issuer of the signing certificate must match (`matchOIDCIdentity[].issuer`), e.g. `^https://token\\.actions\\.githubusercontent\\.com$`. Required in each identity.",
						Required:            true,
						Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
					},
					"subject": schema.StringAttribute{
						MarkdownDescription: "Regular expression (Go syntax) the signing certificate's subject (an e-mail address, or a workflow's URI) must match (`matchOIDCIdentity[].subject`), e.g. `^https://github\\.com/my-org/charts/\\.github/workflows/release\\.yaml@refs/heads/main$`. Required in each identity.",
						Required:            true,
						Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
					},
				}},
			},
			"trusted_root": schema.StringAttribute{
				MarkdownDescription: "`cosign` keyless only: content of a Sigstore `trusted_root.json` (Fulcio CAs, Rekor and CT logs) for a private Sigstore instance or an air-gapped network (OCIRepository `trustedRootSecretRef`), e.g. `file(\"trusted_root.json\")`. Default: Sigstore's public-good instance, whose trusted root is read from its TUF repository (over the network) and cached in `cache_dir`.",
				Optional:            true,
				Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
			},
			"trust_policy": schema.StringAttribute{
				MarkdownDescription: "`notation` only: content of a notation `trustpolicy.json` (Flux's `trustpolicy.json` key). A policy whose level does not enforce authenticity (`audit`, or `skip`) lets an unverified chart through, as Flux does: it is deployed with a warning and `SourceVerified` False (`VerificationIgnored`), never as verified. Default: one policy for every registry, level `strict`, trusting the certificates given for any signer: `" + strings.ReplaceAll(strings.Join(strings.Fields(chartsource.DefaultTrustPolicy), " "), "`", "") + "`.",
				Optional:            true,
				Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
			},
		},
	}
}

type chartVerifyModel struct {
	Provider          types.String `tfsdk:"provider"`
	Keyring           types.String `tfsdk:"keyring"`
	PublicKeys        types.List   `tfsdk:"public_keys"`
	SecretRef         types.Object `tfsdk:"secret_ref"`
	MatchOIDCIdentity types.List   `tfsdk:"match_oidc_identity"`
	TrustedRoot       types.String `tfsdk:"trusted_root"`
	TrustPolicy       types.String `tfsdk:"trust_policy"`
}

type secretRefModel struct {
	Name      types.String `tfsdk:"name"`
	Namespace types.String `tfsdk:"namespace"`
}

// provider is the signature provider, with its default; empty while
// unknown.
func (v *chartVerifyModel) provider() string {
	switch {
	case v.Provider.IsUnknown():
		return ""
	case !v.Provider.IsNull():
		return v.Provider.ValueString()
	case !v.Keyring.IsNull():
		return verifyPGP
	}
	return verifyCosign
}

// verification is the cosign or notation verification v configures,
// without the keys of its Secret (verificationKeys adds them); nil for
// pgp.
func (v *chartVerifyModel) verification(ctx context.Context, diags *diag.Diagnostics) *chartsource.Verification {
	p := v.provider()
	if p != verifyCosign && p != verifyNotation {
		return nil
	}
	out := &chartsource.Verification{Provider: p}
	var keys []string
	diags.Append(v.PublicKeys.ElementsAs(ctx, &keys, false)...)
	for _, k := range keys {
		out.PublicKeys = append(out.PublicKeys, []byte(k))
	}
	out.Identities = v.identities(ctx, diags)
	if !v.TrustedRoot.IsNull() {
		out.TrustedRoot = []byte(v.TrustedRoot.ValueString())
	}
	if !v.TrustPolicy.IsNull() {
		out.TrustPolicy = []byte(v.TrustPolicy.ValueString())
	}
	return out
}

// secretRef is secret_ref, its namespace defaulted to namespace; nil
// when not set.
func (v *chartVerifyModel) secretRef(ctx context.Context, namespace string, diags *diag.Diagnostics) *secretRefModel {
	ref := objectAs[secretRefModel](ctx, v.SecretRef, path.Root("chart").AtName("verify").AtName("secret_ref"), diags)
	if ref != nil && (ref.Namespace.IsNull() || ref.Namespace.ValueString() == "") {
		ref.Namespace = types.StringValue(namespace)
	}
	return ref
}

// validateVerify refuses, at plan, a chart.verify that cannot verify:
// fields of another provider, a provider without its keys, keys that do
// not parse, cosign or notation for a chart that is not OCI.
func validateVerify(ctx context.Context, c *chartModel, at path.Path, diags *diag.Diagnostics) {
	v := c.Verify
	if v == nil || v.Provider.IsUnknown() {
		return
	}
	at = at.AtName("verify")
	p := v.provider()
	if !slices.Contains(verifyProviders, p) {
		return // the provider's validator says so
	}
	refuse := func(field, why string) {
		attrError(diags, at.AtName(field), "chart.verify."+field+" with provider "+p, why, "Remove chart.verify."+field+", or set chart.verify.provider to the provider it belongs to.")
	}
	set := func(a interface{ IsNull() bool }) bool { return !a.IsNull() }
	switch p {
	case verifyPGP:
		if v.Keyring.IsNull() {
			attrError(diags, at.AtName("keyring"), "No keyring for pgp verification", "Provenance files are verified against a GnuPG keyring, which chart.verify.keyring names.", "Set chart.verify.keyring to the path of the signers' public keys (gpg --export), or choose provider cosign or notation for a signed OCI chart.")
		}
		for _, f := range []struct {
			name string
			set  bool
		}{{"public_keys", set(v.PublicKeys)}, {"secret_ref", set(v.SecretRef)}, {"match_oidc_identity", set(v.MatchOIDCIdentity)}, {"trusted_root", set(v.TrustedRoot)}, {"trust_policy", set(v.TrustPolicy)}} {
			if f.set {
				refuse(f.name, "pgp verifies a provenance file against chart.verify.keyring; this field is for cosign or notation signatures of OCI charts.")
			}
		}
		return
	case verifyCosign:
		if set(v.TrustPolicy) {
			refuse("trust_policy", "A trust policy is notation's; cosign verifies against public keys, or keyless against OIDC identities and a Sigstore trusted root.")
		}
		keyed := set(v.PublicKeys) || set(v.SecretRef)
		if keyed && set(v.MatchOIDCIdentity) {
			refuse("match_oidc_identity", "OIDC identities are matched for keyless signatures; with public_keys or secret_ref the signature must be made by one of the keys.")
		}
		if keyed && set(v.TrustedRoot) {
			refuse("trusted_root", "A Sigstore trusted root is for keyless signatures; with public_keys or secret_ref the signature must be made by one of the keys.")
		}
		if !keyed && !set(v.MatchOIDCIdentity) && !v.MatchOIDCIdentity.IsUnknown() && !v.PublicKeys.IsUnknown() && !v.SecretRef.IsUnknown() {
			attrError(diags, at.AtName("match_oidc_identity"), "Keyless cosign verification without an identity",
				"Without public_keys or secret_ref the signature must be keyless, and a keyless signature is only worth what its identity is: without match_oidc_identity a signature by anyone holding a Sigstore certificate would pass.",
				"Set chart.verify.match_oidc_identity to the OIDC issuer and subject that sign your charts (e.g. your CI workflow), or give the signing key with chart.verify.public_keys or chart.verify.secret_ref.")
		}
	case verifyNotation:
		for _, f := range []struct {
			name string
			set  bool
		}{{"match_oidc_identity", set(v.MatchOIDCIdentity)}, {"trusted_root", set(v.TrustedRoot)}} {
			if f.set {
				refuse(f.name, "OIDC identities and a Sigstore trusted root are for keyless cosign signatures; notation verifies against the certificates of its trust store.")
			}
		}
		if !set(v.PublicKeys) && !set(v.SecretRef) && !v.PublicKeys.IsUnknown() && !v.SecretRef.IsUnknown() {
			attrError(diags, at.AtName("public_keys"), "No certificates for notation verification", "notation verifies a signature against the certificates of a trust store, which chart.verify.public_keys or the Secret of chart.verify.secret_ref gives.", "Set chart.verify.public_keys to the PEM certificate of the CA that issued the signing certificate, or chart.verify.secret_ref to a Secret holding it.")
		}
	}
	if set(v.Keyring) {
		refuse("keyring", "A keyring verifies provenance files (provider pgp); "+p+" verifies the signature of an OCI chart's manifest.")
	}
	if repo := c.Repository; !repo.IsUnknown() && (repo.IsNull() || !chartsource.IsOCI(repo.ValueString())) {
		attrError(diags, at.AtName("provider"), p+" verification of a chart that is not in an OCI registry",
			p+" signs OCI artifacts: it verifies charts of an OCI registry (chart.repository = \"oci://…\") only, as Flux does; this chart comes from "+sourceKind(c)+".",
			"Publish the chart to an OCI registry and sign it there, or use provider pgp with a provenance file for a Helm repository or packaged chart.")
		return
	}
	if v.PublicKeys.IsUnknown() || v.MatchOIDCIdentity.IsUnknown() || v.TrustedRoot.IsUnknown() || v.TrustPolicy.IsUnknown() {
		return
	}
	verification := v.verification(ctx, diags)
	if verification == nil {
		return
	}
	check := verification.Check
	if set(v.SecretRef) {
		check = verification.CheckParts // with the Secret's keys, read at plan
	}
	if err := check(); err != nil {
		attrError(diags, at, "Invalid chart.verify", "chart.verify cannot verify a signature: "+err.Error()+".", "Fix the keys, certificates, identities, trusted root or trust policy chart.verify gives.")
	}
}

// sourceKind says where a chart that is not OCI comes from.
func sourceKind(c *chartModel) string {
	switch {
	case !c.Git.IsNull():
		return "a Git repository"
	case !c.Bucket.IsNull():
		return "a bucket"
	case c.Repository.IsNull():
		return "a local path"
	}
	return "a Helm repository"
}

// signatureError reports a chart whose signature did not verify.
func signatureError(diags *diag.Diagnostics, at path.Path, err error) {
	attrError(diags, at, "Chart signature not verified", err.Error()+".",
		"Install a chart signed as chart.verify says (cosign sign or notation sign of the digest above), or fix chart.verify: the keys or certificates, the OIDC identities of a keyless signature, the trusted root, the trust policy. A chart pushed again after signing must be signed again.")
}

// markSourceVerified sets the SourceVerified condition of st to the
// verification the chart passed, as source-controller sets it on the
// source, with source-controller's own message when it verified too; a
// chart without one drops it.
func markSourceVerified(st *reconcile.Status, v *chartsource.Verified, controller string) {
	if v == nil {
		st.RemoveCondition(reconcile.ConditionSourceVerified)
		return
	}
	if v.Ignored {
		// Let through by the trust policy: deployed, not verified.
		st.SetCondition(reconcile.Condition{Type: reconcile.ConditionSourceVerified, Status: false, Reason: reasonVerificationIgnored,
			Message: fmt.Sprintf(fmtVerificationIgnored, v.Digest, v.Provider, v.Warning)})
		return
	}
	msg := fmt.Sprintf("verified signature of revision %s with %s: signed by %s", v.Digest, v.Provider, v.Signer)
	if v.Warning != "" {
		msg += " (" + v.Warning + ")"
	}
	if controller != "" {
		msg += "; source-controller: " + controller
	}
	st.SetCondition(reconcile.Condition{Type: reconcile.ConditionSourceVerified, Status: true, Reason: "Succeeded", Message: msg})
}

// reasonVerificationIgnored is the SourceVerified reason of a chart the
// trust policy let through with its signature's authenticity unverified.
const reasonVerificationIgnored = "VerificationIgnored"

// fmtVerificationIgnored is its message: the digest, the provider, what
// the policy let through. It starts as a verified one does, so that a
// plan keeps a condition that still holds (planSourceVerified).
const fmtVerificationIgnored = "signature of revision %s with %s: not verified, the trust policy let the chart through (%s)"

// planSourceVerified brings a planned status that is known (no Helm
// action) in line with this plan's verification: the condition is set
// when chart.verify was added or the digest changed, and dropped when
// chart.verify was removed; one that still holds is kept as it is
// (with source-controller's words), so that an unchanged release plans
// nothing.
func (p *releasePlan) planSourceVerified(ctx context.Context) {
	if p.resolved == nil || p.out.status.IsUnknown() || p.out.status.IsNull() {
		return
	}
	st, d := statusOf(ctx, p.out.status)
	p.diags.Append(d...)
	cur, v := st.Condition(reconcile.ConditionSourceVerified), p.resolved.Verified
	switch {
	case v == nil && cur == nil:
		return
	case v != nil && cur != nil && cur.Status == !v.Ignored && strings.Contains(cur.Message, fmt.Sprintf("revision %s with %s:", v.Digest, v.Provider)):
		return
	}
	markSourceVerified(st, v, "")
	p.out.status, d = statusObject(ctx, st)
	p.diags.Append(d...)
}

// applySourceVerified sets the SourceVerified condition of st, the status
// an apply writes: as the plan had it when the plan knew the status (no
// Helm action), else from the verification the apply made.
func applySourceVerified(ctx context.Context, planned types.Object, st *reconcile.Status, v *chartsource.Verified, controller string, diags *diag.Diagnostics) {
	if planned.IsUnknown() || planned.IsNull() {
		markSourceVerified(st, v, controller)
		return
	}
	was, d := statusOf(ctx, planned)
	diags.Append(d...)
	if c := was.Condition(reconcile.ConditionSourceVerified); c != nil {
		st.SetCondition(*c)
	} else {
		st.RemoveCondition(reconcile.ConditionSourceVerified)
	}
}

// identities are match_oidc_identity's.
func (v *chartVerifyModel) identities(ctx context.Context, diags *diag.Diagnostics) []chartsource.Identity {
	var ids []struct {
		Issuer  types.String `tfsdk:"issuer"`
		Subject types.String `tfsdk:"subject"`
	}
	diags.Append(v.MatchOIDCIdentity.ElementsAs(ctx, &ids, false)...)
	var out []chartsource.Identity
	for _, id := range ids {
		out = append(out, chartsource.Identity{Issuer: id.Issuer.ValueString(), Subject: id.Subject.ValueString()})
	}
	return out
}

// config is v as the configuration wrote it, for the release to record
// (chartsource.VerifyConfig); nil when part of it is not known yet.
func (v *chartVerifyModel) config(ctx context.Context) *chartsource.VerifyConfig {
	for _, a := range []attr.Value{v.Provider, v.Keyring, v.PublicKeys, v.SecretRef, v.MatchOIDCIdentity, v.TrustedRoot, v.TrustPolicy} {
		if !tfvalue.FullyKnown(a) {
			return nil
		}
	}
	out := &chartsource.VerifyConfig{Provider: v.Provider.ValueString(), Keyring: v.Keyring.ValueString(),
		TrustedRoot: v.TrustedRoot.ValueString(), TrustPolicy: v.TrustPolicy.ValueString()}
	var diags diag.Diagnostics
	diags.Append(v.PublicKeys.ElementsAs(ctx, &out.PublicKeys, false)...)
	out.Identities = v.identities(ctx, &diags)
	if !v.SecretRef.IsNull() {
		var ref secretRefModel
		diags.Append(v.SecretRef.As(ctx, &ref, objectAsOptions)...)
		out.SecretRef = &chartsource.SecretRef{Name: ref.Name.ValueString(), Namespace: ref.Namespace.ValueString()}
	}
	if diags.HasError() {
		return nil
	}
	return out
}

// verifyObject is chart.verify as c records it (null for none), as an
// import writes it.
func verifyObject(ctx context.Context, c *chartsource.VerifyConfig, diags *diag.Diagnostics) types.Object {
	t := chartVerifyAttribute().GetType().(types.ObjectType)
	if c == nil {
		return types.ObjectNull(t.AttrTypes)
	}
	attrs := map[string]attr.Value{
		"provider": stringOrNull(c.Provider), "keyring": stringOrNull(c.Keyring),
		"trusted_root": stringOrNull(c.TrustedRoot), "trust_policy": stringOrNull(c.TrustPolicy),
		"public_keys": types.ListNull(types.StringType), "secret_ref": types.ObjectNull(t.AttrTypes["secret_ref"].(types.ObjectType).AttrTypes),
		"match_oidc_identity": types.ListNull(t.AttrTypes["match_oidc_identity"].(types.ListType).ElemType),
	}
	if len(c.PublicKeys) > 0 {
		l, d := types.ListValueFrom(ctx, types.StringType, c.PublicKeys)
		diags.Append(d...)
		attrs["public_keys"] = l
	}
	if ref := c.SecretRef; ref != nil {
		o, d := types.ObjectValue(t.AttrTypes["secret_ref"].(types.ObjectType).AttrTypes, map[string]attr.Value{"name": types.StringValue(ref.Name), "namespace": stringOrNull(ref.Namespace)})
		diags.Append(d...)
		attrs["secret_ref"] = o
	}
	if len(c.Identities) > 0 {
		elem := t.AttrTypes["match_oidc_identity"].(types.ListType).ElemType.(types.ObjectType)
		ids := make([]attr.Value, 0, len(c.Identities))
		for _, id := range c.Identities {
			o, d := types.ObjectValue(elem.AttrTypes, map[string]attr.Value{"issuer": types.StringValue(id.Issuer), "subject": types.StringValue(id.Subject)})
			diags.Append(d...)
			ids = append(ids, o)
		}
		l, d := types.ListValue(elem, ids)
		diags.Append(d...)
		attrs["match_oidc_identity"] = l
	}
	o, d := types.ObjectValue(t.AttrTypes, attrs)
	diags.Append(d...)
	return o
}
