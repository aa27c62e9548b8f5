package provider

import (
	"context"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/tfvalue"
)

// releaseObjectType is helmrelease_release's object type, built once.
var releaseObjectType = sync.OnceValue(func() basetypes.ObjectType {
	return releaseSchema().Type().(basetypes.ObjectType)
})

// releaseModelOf reads raw plan, state or configuration data of
// helmrelease_release into m.
func releaseModelOf(ctx context.Context, raw tftypes.Value, m *releaseModel) diag.Diagnostics {
	v, err := releaseObjectType().ValueFromTerraform(ctx, raw)
	if err != nil {
		return tfvalue.ConversionError("the release data", err)
	}
	return tfvalue.ObjectInto(ctx, v.(basetypes.ObjectValue), m)
}

// releaseData is m as raw plan or state data, for tfsdk.Plan.Set and
// tfsdk.State.Set (which take a tftypes.Value as it is).
func releaseData(ctx context.Context, m *releaseModel) (tftypes.Value, diag.Diagnostics) {
	o, diags := tfvalue.ObjectFrom(ctx, releaseObjectType().AttrTypes, m)
	if diags.HasError() {
		return tftypes.Value{}, diags
	}
	raw, err := o.ToTerraformValue(ctx)
	if err != nil {
		return tftypes.Value{}, tfvalue.ConversionError("the release data", err)
	}
	return raw, nil
}

// setRelease writes m into dst, the Raw of a tfsdk.Plan or tfsdk.State.
func setRelease(ctx context.Context, dst *tftypes.Value, m *releaseModel) diag.Diagnostics {
	m.applyPlanDetail()
	raw, diags := releaseData(ctx, m)
	if !diags.HasError() {
		*dst = raw
	}
	return diags
}
