package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// ImportState takes over an existing release by
// `[<cluster>:]<storage_namespace>/<release_name>` or by identity
// `{ cluster, namespace, name }`; the refresh that follows adopts it.
func (r *releaseResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	var cluster, storageNamespace, releaseName string
	if req.ID != "" {
		var ok bool
		cluster, storageNamespace, releaseName, ok = parseReleaseID(req.ID)
		if !ok {
			resp.Diagnostics.AddError("Invalid import ID",
				fmt.Sprintf("The import ID %q is not <storage_namespace>/<release_name>, nor <cluster>:<storage_namespace>/<release_name> for a release on one of the provider's clusters.\n\nUse the namespace of the release's Helm storage and the release name, e.g. `terraform import helmrelease_release.web apps/web` (or `prod:apps/web` on cluster prod), or an import block with identity = { namespace = \"apps\", name = \"web\" } (and cluster = \"prod\").", req.ID))
			return
		}
	} else {
		var id releaseIdentity
		resp.Diagnostics.Append(req.Identity.Get(ctx, &id)...)
		if resp.Diagnostics.HasError() {
			return
		}
		cluster, storageNamespace, releaseName = id.Cluster.ValueString(), id.Namespace.ValueString(), id.Name.ValueString()
		if storageNamespace == "" || releaseName == "" {
			resp.Diagnostics.AddError("Invalid import identity", "The import identity needs namespace (the namespace of the release's Helm storage) and name (the release name), and cluster for a release on one of the provider's clusters.")
			return
		}
		if cluster != "" && !clusterNamePattern.MatchString(cluster) {
			resp.Diagnostics.AddError("Invalid import identity", fmt.Sprintf("The import identity's cluster %q is not the name of one of the provider's clusters.", cluster))
			return
		}
	}
	clusterValue := types.StringNull()
	if cluster != "" {
		clusterValue = types.StringValue(cluster)
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), releaseID(cluster, storageNamespace, releaseName))...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("cluster"), clusterValue)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("storage_namespace"), storageNamespace)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("release_name"), releaseName)...)
	if resp.Identity != nil {
		resp.Diagnostics.Append(resp.Identity.Set(ctx, releaseIdentity{Cluster: clusterValue, Namespace: types.StringValue(storageNamespace), Name: types.StringValue(releaseName)})...)
	}
}
