package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var _ resource.ResourceWithIdentity = (*releaseResource)(nil)

// releaseIdentity is the identity of a helmrelease_release: the Helm
// release it manages, where Helm stores it (Terraform ≥ 1.12).
type releaseIdentity struct {
	Cluster   types.String `tfsdk:"cluster"`
	Namespace types.String `tfsdk:"namespace"`
	Name      types.String `tfsdk:"name"`
}

func (r *releaseResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = identityschema.Schema{
		Attributes: map[string]identityschema.Attribute{
			"cluster": identityschema.StringAttribute{
				OptionalForImport: true,
				Description:       "Name of the provider's `clusters` entry the release is in (`cluster`); null for the cluster of the provider's `kubernetes` block.",
			},
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
	if m.Cluster.IsUnknown() {
		return nil
	}
	return identity.Set(ctx, releaseIdentity{Cluster: m.Cluster, Namespace: m.StorageNamespace, Name: m.ReleaseName})
}
