package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var _ resource.ResourceWithIdentity = (*releaseResource)(nil)

// releaseIdentity is the identity of a helmrelease_release: the Helm
// release it manages, where Helm stores it (Terraform ≥ 1.12).
type releaseIdentity struct {
	Namespace types.String `tfsdk:"namespace"`
	Name      types.String `tfsdk:"name"`
}

func (r *releaseResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = identityschema.Schema{
		Attributes: map[string]identityschema.Attribute{
			"namespace": identityschema.StringAttribute{
				RequiredForImport: true,
				Description:       "Namespace of the release's Helm storage (`storage_namespace`), as `helm list --namespace` takes it.",
			},
			"name": identityschema.StringAttribute{
				RequiredForImport: true,
				Description:       "Helm release name (`release_name`).",
			},
		},
	}
}

// setIdentity sets the identity of m where Terraform keeps one.
func setIdentity(ctx context.Context, identity *tfsdk.ResourceIdentity, m *releaseModel) diag.Diagnostics {
	if identity == nil || m.StorageNamespace.IsUnknown() || m.ReleaseName.IsUnknown() {
		return nil
	}
	return identity.Set(ctx, releaseIdentity{Namespace: m.StorageNamespace, Name: m.ReleaseName})
}

// ImportState takes over an existing release by `<storage_namespace>/<release_name>`
// or by identity `{ namespace, name }`; the refresh that follows adopts it.
func (r *releaseResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	storageNamespace, releaseName := "", ""
	if req.ID != "" {
		var ok bool
		storageNamespace, releaseName, ok = strings.Cut(req.ID, "/")
		if !ok || storageNamespace == "" || releaseName == "" || strings.Contains(releaseName, "/") {
			resp.Diagnostics.AddError("Invalid import ID",
				fmt.Sprintf("The import ID %q is not <storage_namespace>/<release_name>.\n\nUse the namespace of the release's Helm storage and the release name, e.g. `terraform import helmrelease_release.web apps/web`, or an import block with identity = { namespace = \"apps\", name = \"web\" }.", req.ID))
			return
		}
	} else {
		var id releaseIdentity
		resp.Diagnostics.Append(req.Identity.Get(ctx, &id)...)
		if resp.Diagnostics.HasError() {
			return
		}
		storageNamespace, releaseName = id.Namespace.ValueString(), id.Name.ValueString()
		if storageNamespace == "" || releaseName == "" {
			resp.Diagnostics.AddError("Invalid import identity", "The import identity needs namespace (the namespace of the release's Helm storage) and name (the release name).")
			return
		}
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), storageNamespace+"/"+releaseName)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("storage_namespace"), storageNamespace)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("release_name"), releaseName)...)
	if resp.Identity != nil {
		resp.Diagnostics.Append(resp.Identity.Set(ctx, releaseIdentity{Namespace: types.StringValue(storageNamespace), Name: types.StringValue(releaseName)})...)
	}
}
