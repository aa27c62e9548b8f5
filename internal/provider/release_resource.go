package provider

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/tfvalue"
)

var (
	_ resource.Resource                   = (*releaseResource)(nil)
	_ resource.ResourceWithConfigure      = (*releaseResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*releaseResource)(nil)
	_ resource.ResourceWithImportState    = (*releaseResource)(nil)
	_ resource.ResourceWithValidateConfig = (*releaseResource)(nil)
)

// NewReleaseResource returns the helmrelease_release resource.
func NewReleaseResource() resource.Resource { return &releaseResource{} }

type releaseResource struct {
	data *providerData
}

func (r *releaseResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_release"
}

func (r *releaseResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = releaseSchema()
}

func (r *releaseResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	data, err := configureData(req.ProviderData)
	if err != nil {
		resp.Diagnostics.AddError("Provider not configured", err.Error())
		return
	}
	r.data = data
}

func (r *releaseResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m releaseModel
	resp.Diagnostics.Append(releaseModelOf(ctx, req.Config.Raw, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	validatePostRenderers(postRenderersOf(ctx, m.PostRenderers, &resp.Diagnostics), path.Root("post_renderers"), &resp.Diagnostics)
	if !m.Engine.IsUnknown() {
		r.engineOf(&m).validate(ctx, &m, &resp.Diagnostics)
	}
	validateStrategies(ctx, &m, &resp.Diagnostics)
	validateChartSource(&m, &resp.Diagnostics)
	if c := objectAs[releaseChartModel](ctx, m.Chart, path.Root("chart"), &resp.Diagnostics); c != nil {
		validateGit(&c.chartModel, path.Root("chart"), &resp.Diagnostics)
		validateBucket(&c.chartModel, path.Root("chart"), &resp.Diagnostics)
		validateVerify(ctx, &c.chartModel, path.Root("chart"), &resp.Diagnostics)
		validateDependencyUpdate(&c.chartModel, path.Root("chart"), &resp.Diagnostics)
		validatePlainHTTP(&c.chartModel, path.Root("chart"), &resp.Diagnostics)
		validateDigestVersion(&c.chartModel, path.Root("chart"), &resp.Diagnostics)
	}
	validateHealthChecks(ctx, &m, &resp.Diagnostics)
	for _, a := range []struct {
		name string
		v    types.Dynamic
	}{{"values", m.Values}} {
		if !tfvalue.FullyKnown(a.v) {
			continue
		}
		if _, err := tfvalue.ValuesMap(a.v); err != nil {
			// The message names only the type, never the value.
			invalidValue(&resp.Diagnostics, path.Root(a.name), strings.ReplaceAll(a.name, "_", " "), err, "Set "+a.name+" to an object, e.g. "+a.name+" = { replicaCount = 2 }.")
		}
	}
}
