package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource"
)

func (r *releaseResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m releaseModel
	resp.Diagnostics.Append(releaseModelOf(ctx, req.State.Raw, &m)...)
	if resp.Diagnostics.HasError() || r.data == nil {
		return
	}
	r.engineOf(&m).remove(ctx, &m, req.Private, resp)
}
