package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
)

// chartChangedSincePlan refuses, in both engines, an apply whose chart
// resolves to another revision or digest than its plan did.
func chartChangedSincePlan(m *releaseModel, resolved *chartsource.Resolved, diags *diag.Diagnostics) bool {
	if !m.ChartVersion.IsUnknown() && m.ChartVersion.ValueString() != resolved.Version {
		attrError(diags, path.Root("chart").AtName("version"), "Chart changed since the plan",
			fmt.Sprintf("The plan was made with chart revision %s, but the chart now resolves to %s (%s).", m.ChartVersion.ValueString(), resolved.Version, strings.Join(resolved.RevisionChanges(m.ChartVersion.ValueString()), "; ")),
			"Plan again to review the change, or pin chart.version to the version you reviewed; a local chart must not change between plan and apply.")
		return true
	}
	// An empty planned digest with a known one now: an adopted release
	// planned without a Helm action (planDriftCorrection).
	if !m.ChartDigest.IsUnknown() && m.ChartDigest.ValueString() != "" && m.ChartDigest.ValueString() != resolved.Digest {
		attrError(diags, path.Root("chart").AtName("version"), "Chart changed since the plan",
			fmt.Sprintf("The plan was made with chart %s of digest %s, but it was published again with digest %s.", resolved.Version, m.ChartDigest.ValueString(), resolved.Digest),
			"Plan again to review the chart published again.")
		return true
	}
	return false
}

// chartPin says which chart a resolve must find again.
type chartPin struct {
	// Revision, when known and not empty, is the Git or bucket revision
	// read: the plan's chart_source_revision, at apply.
	Revision types.String
	// Resolution, when set, is the chart to find again (the refresh's,
	// at plan; the plan's, at apply), provided the source's fingerprint
	// is Fingerprint (any, when empty).
	Resolution  *chartsource.Pin
	Fingerprint string
	// Deployed, without a Resolution, is the chart a refresh found
	// deployed for a state no apply wrote (privateDeployedChart): taken
	// where the configuration's source can give it.
	Deployed *chartsource.Pin
}

// resolveChart resolves the chart of the model; nil with a diagnostic on
// failure. With versionOnly, a chart of a Helm repository is resolved from
// the index alone (Chart nil): what a plan without a Helm action needs.
// pin says which chart is found again.
func (r *releaseResource) resolveChart(ctx context.Context, m *releaseModel, wo writeOnly, versionOnly bool, pin chartPin, diags *diag.Diagnostics) *chartsource.Resolved {
	resolved, _ := r.resolveChartSource(ctx, m, wo, versionOnly, pin, diags)
	return resolved
}

// resolveChartSource is resolveChart, which also returns the source
// resolved, its Pin set when pin applied to it.
func (r *releaseResource) resolveChartSource(ctx context.Context, m *releaseModel, wo writeOnly, versionOnly bool, pin chartPin, diags *diag.Diagnostics) (*chartsource.Resolved, chartsource.Source) {
	src, ok := r.chartSource(ctx, m, wo, diags)
	if !ok {
		return nil, src
	}
	pinned := ""
	if !pin.Revision.IsUnknown() {
		pinned = pin.Revision.ValueString()
	}
	if pin.Resolution != nil && (pin.Fingerprint == "" || pin.Fingerprint == src.Fingerprint()) {
		src.Pin = pin.Resolution
	} else if deployed, ok := src.Deployed(pin.Deployed); ok {
		var scratch diag.Diagnostics
		if resolved, taken := r.resolveSource(ctx, deployed, versionOnly, pinned, &scratch); resolved != nil && !scratch.HasError() {
			diags.Append(scratch...)
			return resolved, taken
		}
		// The source no longer gives the chart deployed (a version gone
		// from the index, a bucket changed): it resolves anew.
	}
	return r.resolveSource(ctx, src, versionOnly, pinned, diags)
}

// resolveSource resolves src, its Git or bucket source pinned to the
// revision pinned when not empty.
func (r *releaseResource) resolveSource(ctx context.Context, src chartsource.Source, versionOnly bool, pinned string, diags *diag.Diagnostics) (*chartsource.Resolved, chartsource.Source) {
	switch {
	case src.ChartRef != nil:
		// Pinned by the object's artifact.
	case src.Git != nil:
		src.Git.Pinned = pinned
	case src.Bucket != nil:
		src.Bucket.Pinned = pinned
	}
	resolve := r.data.charts.Resolve
	if versionOnly {
		resolve = r.data.charts.Version
	}
	resolved, err := resolve(ctx, src)
	if err != nil {
		if src.ChartRef != nil && !errors.Is(err, chartsource.ErrChangedSincePlan) {
			chartRefError(diags, fmt.Errorf("%s: %w", src.ChartRef, err))
			return nil, src
		}
		chartError(diags, path.Root("chart"), err)
		return nil, src
	}
	staleIndexWarning(diags, path.Root("chart").AtName("repository"), resolved.StaleIndex)
	cacheRepairWarning(diags, path.Root("chart"), resolved.CacheRepaired)
	switch v := resolved.Verified; {
	case v == nil || v.Warning == "":
	case v.Ignored:
		diags.AddAttributeWarning(path.Root("chart").AtName("verify"), "Chart signature not enforced",
			fmt.Sprintf("The chart %s (%s) is deployed unverified: its signature's authenticity was not verified, and the trust policy let it through: %s. Its status says SourceVerified False (%s), as source-controller leaves such a source unverified.\n\nUse a trust policy of level strict to refuse charts whose signature does not verify.", resolved.Name(), v.Digest, v.Warning, reasonVerificationIgnored))
	default:
		diags.AddAttributeWarning(path.Root("chart").AtName("verify"), "Chart signature checks let through",
			fmt.Sprintf("The chart %s (%s) has an authentic signature by %s, but the trust policy let these checks fail: %s.\n\nUse a trust policy of level strict to refuse charts whose signature fails any check.", resolved.Name(), v.Digest, v.Signer, v.Warning))
	}
	return resolved, src
}

// chartSource is the chart source m names: chart with the write-only
// credentials, or the source of the object chart_ref names; false with a
// diagnostic when there is none.
func (r *releaseResource) chartSource(ctx context.Context, m *releaseModel, wo writeOnly, diags *diag.Diagnostics) (chartsource.Source, bool) {
	if ref := m.chartRef(ctx, diags); ref != nil {
		return r.chartRefSource(ctx, m, ref, diags)
	}
	c := objectAs[releaseChartModel](ctx, m.Chart, path.Root("chart"), diags)
	if c == nil {
		return chartsource.Source{}, false
	}
	src, d := c.source(ctx, r.data)
	diags.Append(d...)
	if diags.HasError() {
		return chartsource.Source{}, false
	}
	wo.credentials(&src)
	if src.Verify != nil && !c.Verify.SecretRef.IsNull() {
		if !r.releaseVerificationKeys(ctx, m, c.Verify, src.Verify, diags) {
			return chartsource.Source{}, false
		}
	}
	return src, true
}

// releaseVerificationKeys adds the keys of chart.verify.secret_ref's
// Secret to v, read from the cluster of the release m (verificationKeys).
func (r *releaseResource) releaseVerificationKeys(ctx context.Context, m *releaseModel, verify *chartVerifyModel, v *chartsource.Verification, diags *diag.Diagnostics) bool {
	c := r.clusterOf(m, diags)
	return c != nil && verificationKeys(ctx, c, m.Namespace.ValueString(), verify, v, diags)
}

// verificationKeys adds the keys of verify.secret_ref's Secret to v, read
// from the cluster c; namespace is the release's.
func verificationKeys(ctx context.Context, c *cluster, namespace string, verify *chartVerifyModel, v *chartsource.Verification, diags *diag.Diagnostics) bool {
	at := path.Root("chart").AtName("verify").AtName("secret_ref")
	ref := verify.secretRef(ctx, namespace, diags)
	if ref == nil {
		return false
	}
	fc, err := c.fluxClient()
	if err != nil {
		clusterUnavailable(diags, at, err)
		return false
	}
	if err := fc.VerificationKeys(ctx, ref.Namespace.ValueString(), ref.Name.ValueString(), v); err != nil {
		attrError(diags, at, "Verification Secret not usable", "chart.verify.secret_ref: "+err.Error()+".",
			"Create the Secret with the public keys (cosign: keys ending in .pub) or certificates (notation: keys ending in .crt or .pem, and trustpolicy.json), and check that the provider's credentials may read it.")
		return false
	}
	if err := v.Check(); err != nil {
		attrError(diags, at, "Verification Secret not usable", "chart.verify.secret_ref: "+err.Error()+".", "Fix the keys or certificates the Secret holds.")
		return false
	}
	return true
}
