//go:build floor

package provider

import (
	"context"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The floor provider serves this provider's schemas and does no work: its
// release resource's plan is the framework's and its read returns the
// state as stored. A no-change plan of real states with it is the cost of
// terraform-plugin-framework for this schema, which the provider's own
// work in plan and read adds to (planbench -floor). Built with -tags floor
// only, never into a release.
var (
	_ provider.Provider             = (*floorProvider)(nil)
	_ resource.ResourceWithIdentity = floorRelease{}
)

type floorProvider struct {
	version string
	// lean leaves out the release's top-level attributes that are computed
	// only (its status, objects, notes), and applies: what a state without
	// them would cost (HELMRELEASE_FLOOR_SCHEMA=lean).
	lean bool
}

// NewFloor returns the floor provider's factory for version.
func NewFloor(version string) func() provider.Provider {
	lean := os.Getenv("HELMRELEASE_FLOOR_SCHEMA") == "lean"
	return func() provider.Provider { return &floorProvider{version: version, lean: lean} }
}

func (p *floorProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "helmrelease"
	resp.Version = p.version
}

func (p *floorProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = providerSchema()
}

func (p *floorProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}

func (p *floorProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{func() resource.Resource { return floorRelease{lean: p.lean} }}
}

func (p *floorProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }

// floorRelease has helmrelease_release's type name, schema and identity,
// and none of its operations.
type floorRelease struct{ lean bool }

func (floorRelease) Metadata(ctx context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	(&releaseResource{}).Metadata(ctx, req, resp)
}

func (f floorRelease) Schema(ctx context.Context, req resource.SchemaRequest, resp *resource.SchemaResponse) {
	(&releaseResource{}).Schema(ctx, req, resp)
	if f.lean {
		for name, a := range resp.Schema.Attributes {
			if a.IsComputed() && !a.IsOptional() && name != "id" {
				delete(resp.Schema.Attributes, name)
			}
		}
	}
}

func (floorRelease) IdentitySchema(ctx context.Context, req resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	(&releaseResource{}).IdentitySchema(ctx, req, resp)
}

// Read leaves the state as stored (the framework's response holds it) and
// sets the identity Terraform wants back, from three of its attributes.
func (floorRelease) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if resp.Identity != nil && resp.Identity.Raw.IsNull() {
		resp.Diagnostics.Append(floorIdentity(ctx, req.State.GetAttribute, resp.Identity)...)
	}
}

// Create, of the lean floor only, stores the plan with what it left
// unknown null.
func (f floorRelease) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if !f.lean {
		resp.Diagnostics.AddError("Floor provider", "The floor provider plans and reads only: apply with the provider itself.")
		return
	}
	raw, err := tftypes.Transform(req.Plan.Raw, func(_ *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		if !v.IsKnown() {
			return tftypes.NewValue(v.Type(), nil), nil
		}
		return v, nil
	})
	if err != nil {
		resp.Diagnostics.AddError("Floor provider", err.Error())
		return
	}
	resp.State.Raw = raw
	if resp.Identity != nil {
		resp.Diagnostics.Append(floorIdentity(ctx, resp.State.GetAttribute, resp.Identity)...)
	}
}

// floorIdentity sets identity from the release's attributes that get reads.
func floorIdentity(ctx context.Context, get func(context.Context, path.Path, any) diag.Diagnostics, identity *tfsdk.ResourceIdentity) diag.Diagnostics {
	var id releaseIdentity
	var diags diag.Diagnostics
	diags.Append(get(ctx, path.Root("cluster"), &id.Cluster)...)
	diags.Append(get(ctx, path.Root("storage_namespace"), &id.Namespace)...)
	diags.Append(get(ctx, path.Root("release_name"), &id.Name)...)
	// A lean floor's create leaves them null: their defaults.
	if id.Namespace.IsNull() {
		diags.Append(get(ctx, path.Root("namespace"), &id.Namespace)...)
	}
	if id.Name.IsNull() {
		diags.Append(get(ctx, path.Root("name"), &id.Name)...)
	}
	diags.Append(identity.Set(ctx, id)...)
	return diags
}

func (floorRelease) Update(_ context.Context, _ resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.Diagnostics.AddError("Floor provider", "The floor provider plans and reads only: apply with the provider itself.")
}

func (floorRelease) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}
