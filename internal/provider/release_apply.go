package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

func (r *releaseResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.apply(ctx, req.Plan, req.Config, nil, nil, &resp.State, resp.Private, resp.Identity, &resp.Diagnostics)
}

func (r *releaseResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.apply(ctx, req.Plan, req.Config, &req.State, req.Private, &resp.State, resp.Private, resp.Identity, &resp.Diagnostics)
}

// apply reads the plan, the configuration and the prior state, then has
// the engine of the plan apply it (engine.apply).
func (r *releaseResource) apply(ctx context.Context, planned tfsdk.Plan, cfg tfsdk.Config, prior *tfsdk.State, priorPrivate privateGetter, out *tfsdk.State, private privateSetter, identity *tfsdk.ResourceIdentity, diags *diag.Diagnostics) {
	op := &applyOp{m: &releaseModel{}, config: &releaseModel{}, st: &reconcile.Status{}, priorPrivate: priorPrivate, out: out, private: private, identity: identity, diags: diags}
	diags.Append(releaseModelOf(ctx, planned.Raw, op.m)...)
	diags.Append(releaseModelOf(ctx, cfg.Raw, op.config)...)
	if prior != nil {
		op.prior = &releaseModel{}
		diags.Append(releaseModelOf(ctx, prior.Raw, op.prior)...)
		s, d := statusOf(ctx, op.prior.Status)
		diags.Append(d...)
		op.st = s
	}
	if diags.HasError() || r.data == nil {
		return
	}
	fillIdentity(op.m, op.config)
	diags.Append(private.SetKey(ctx, privateDrift, nil)...)
	diags.Append(private.SetKey(ctx, privateDriftChanges, nil)...)
	diags.Append(private.SetKey(ctx, privateGitPlan, nil)...)
	if !r.waitForKinds(ctx, op.m, diags) {
		return
	}
	r.engineOf(op.m).apply(ctx, op)
}
