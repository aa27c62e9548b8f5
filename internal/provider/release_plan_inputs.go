package provider

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/tfvalue"
)

// inputs resolves the chart's version and composes the values, and reads
// the state's key and status. It reports whether the plan can say more:
// false when something failed, or when what the release is made of is not
// known yet (what depends on it is then known after apply).
func (p *releasePlan) inputs(ctx context.Context) bool {
	m := &p.m
	// What the next revision says, unless no Helm action runs.
	p.out.notes, p.out.description = types.StringUnknown(), types.StringUnknown()
	p.wo = writeOnlyOf(ctx, &p.config, p.diags)
	if p.diags.HasError() {
		return false
	}
	p.red = p.r.redactorFor(ctx, m, p.wo)
	ctx = p.red.context(ctx)
	if tfvalue.FullyKnown(m.Chart) && tfvalue.FullyKnown(m.ChartRef) {
		// The pin of the refresh, when the release is updated in place:
		// the second plan of a replacement has no prior state.
		var pin chartPin
		if p.state != nil {
			pin = chartPinOf(ctx, p.req.Private, p.diags)
		}
		if p.resolved, p.src = p.r.resolveChartSource(ctx, m, p.wo, true, pin, p.diags); p.resolved == nil {
			return false
		}
		p.pinned = p.src.Pin != nil || (p.src.Reproducible() && len(p.resolved.RangedDependencies) == 0)
		p.out.chartVersion = types.StringValue(p.resolved.Version)
		p.out.appVersion = types.StringValue(p.resolved.AppVersion)
		p.out.chartDigest = types.StringValue(p.resolved.Digest)
		p.out.sourceRevision = stringOrNull(p.resolved.SourceRevision)
	} else {
		p.out.chartVersion, p.out.appVersion, p.out.chartDigest = types.StringUnknown(), types.StringUnknown(), types.StringUnknown()
		p.out.sourceRevision = types.StringUnknown()
	}

	// Everything the release is made of must be known to say more.
	known := p.resolved != nil && tfvalue.FullyKnown(m.Values) && tfvalue.FullyKnown(m.SensitiveValues) && tfvalue.FullyKnown(p.wo.SensitiveValues) && tfvalue.FullyKnown(m.ValuesFrom) &&
		specKnown(m) && (isEmpty(m.ValuesFrom) || p.cluster.known())
	if !known {
		p.out.unknownObjects()
		p.out.status = types.ObjectUnknown(statusAttrTypes())
		if p.state != nil {
			p.out.action = types.StringUnknown()
		}
		return false
	}
	p.spec = p.engine.spec(ctx, m, p.diags)
	if p.state != nil {
		requestsOf(ctx, p.req.Private, p.diags).Apply(p.spec)
	}
	var reads []valuesRead
	in := releaseValuesInput(ctx, m, p.wo, p.diags)
	if in != nil {
		in.Observe = observer(&reads)
	}
	p.values = p.r.composeReleaseValues(ctx, m, in, p.red, p.diags)
	ctx = p.red.context(ctx)
	if p.diags.HasError() {
		return false
	}
	// The key is the state's: one made here would differ when Terraform
	// plans again during the apply. Without one, Secrets are known after
	// apply, which makes it, and values are compared only with digests
	// an older version recorded.
	if p.state != nil {
		p.key = secretHashKeyOf(ctx, p.req.Private, nil, p.diags)
		if p.checkInputs(ctx, reads); p.diags.HasError() {
			return false
		}
	}
	st, diags := statusOf(ctx, stateStatus(p.state))
	p.diags.Append(diags...)
	p.st = st
	attempted := st.LastAttemptedConfigDigest
	if cur := st.Latest(); attempted == "" && cur != nil {
		// Cleared as unconfirmed (a plain digest of an older version):
		// the newest revision's values stand for the last attempt.
		attempted = cur.ConfigDigest
	}
	same, err := reconcile.Digests{Key: p.key}.SameConfig(attempted, p.values)
	if errors.Is(err, reconcile.ErrNoDigestKey) {
		err = nil // a state without its key: the values are applied again
	}
	if err == nil {
		_, err = json.Marshal(p.values)
	}
	if err != nil {
		attrError(p.diags, path.Root("values"), "Values not usable", err.Error()+".", "Use values that encode as JSON.")
		return false
	}
	p.sameValues = same
	return true
}
