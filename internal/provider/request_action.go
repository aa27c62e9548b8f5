package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/flux"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

var _ action.ActionWithConfigure = (*requestAction)(nil)

// NewForceAction returns helmrelease_force: force_at without the
// configuration (Terraform ≥ 1.14).
func NewForceAction() action.Action {
	return &requestAction{kind: "force", label: reconcile.ForceRequestLabel,
		does: "forces one install or upgrade of the release at the next `terraform apply`, even when nothing changed, as a new `force_at` value does (Flux's `reconcile.fluxcd.io/forceAt`)"}
}

// NewResetAction returns helmrelease_reset: reset_at without the
// configuration (Terraform ≥ 1.14).
func NewResetAction() action.Action {
	return &requestAction{kind: "reset", label: reconcile.ResetRequestLabel,
		does: "resets the release's failure counters, so that the next `terraform apply` tries a release whose retries are exhausted again, as a new `reset_at` value does (Flux's `reconcile.fluxcd.io/resetAt`)"}
}

// requestAction records a force or reset request on the release, as a
// label of its latest revision's Helm storage, for the helmrelease_release
// that manages it: its next refresh sees the request, its plan shows the
// action it calls for, and its apply runs it once.
type requestAction struct {
	actionData
	kind, label string
	does        string
}

type requestActionModel struct {
	Cluster   types.String `tfsdk:"cluster"`
	Namespace types.String `tfsdk:"namespace"`
	Name      types.String `tfsdk:"name"`
}

func (a *requestAction) Metadata(_ context.Context, req action.MetadataRequest, resp *action.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + a.kind
}

func (a *requestAction) Schema(_ context.Context, _ action.SchemaRequest, resp *action.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: fmt.Sprintf("Asks the `helmrelease_release` that manages a release for what `%s_at` does, without editing the configuration (Terraform ≥ 1.14: `terraform apply -invoke=action.helmrelease_%s.<name>`, or an `action_trigger`): it %s. The request is kept with the release (label `%s` of its Helm storage), so the plan that follows shows what it calls for. A release handed to Flux (`engine = \"flux\"`) is asked of helm-controller instead, as `flux reconcile helmrelease --%s` asks: the HelmRelease's `%s` annotation with a `reconcile.fluxcd.io/requestedAt` of the same token; the action waits for the controller's outcome and fails with its reason, and leaves nothing for the next apply.", a.kind, a.kind, a.does, a.label, a.kind, map[string]string{"force": flux.ForceAtAnnotation, "reset": flux.ResetAtAnnotation}[a.kind]),
		Attributes: map[string]schema.Attribute{
			"cluster": schema.StringAttribute{
				MarkdownDescription: clusterDescription("the release is in, as its `helmrelease_release`'s `cluster` and identity say it", ""),
				Optional:            true,
				Validators:          []validator.String{clusterNameValidator()},
			},
			"namespace": schema.StringAttribute{
				MarkdownDescription: "Namespace of the release's Helm storage (`helmrelease_release` identity `namespace`, `storage_namespace`).",
				Required:            true,
				Validators:          []validator.String{dnsLabel(63)},
			},
			"name": schema.StringAttribute{
				MarkdownDescription: "Release name (`helmrelease_release` identity `name`, `release_name`).",
				Required:            true,
				Validators:          []validator.String{dnsLabel(reconcile.MaxReleaseNameLength)},
			},
		},
	}
}

func (a *requestAction) Invoke(ctx context.Context, req action.InvokeRequest, resp *action.InvokeResponse) {
	var m requestActionModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	r := a.openRelease(m.Cluster, m.Namespace, m.Name, nil, &resp.Diagnostics)
	if r == nil {
		return
	}
	if r.latest == nil {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Release not found",
			fmt.Sprintf("No release %s is in Helm storage.\n\nCheck namespace (the namespace of the release's Helm storage) and name, as the helmrelease_release's identity says them.", r.ref))
		return
	}
	engineFound(ctx, r.cluster, r.latest).ask(ctx, a, r, resp)
}
