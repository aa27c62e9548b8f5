package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// helmSchemaProvider stands where HashiCorp's helm provider (which cannot
// be built here) stands in a configuration moving away from it: Terraform
// wants the provider of every resource in the state before it plans, even
// one that only moves. It serves the schema of helm_release v3.1.2 (schema
// version 2), so that Terraform reads the state the helm provider wrote
// and hands it to helmrelease_release's MoveState; any other use of it is
// an error.
type helmSchemaProvider struct{}

func (helmSchemaProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "helm"
}

func (helmSchemaProvider) Schema(context.Context, provider.SchemaRequest, *provider.SchemaResponse) {}

func (helmSchemaProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}

func (helmSchemaProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{func() resource.Resource { return helmReleaseSchemaOnly{} }}
}

func (helmSchemaProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }

type helmReleaseSchemaOnly struct{}

func (helmReleaseSchemaOnly) Metadata(_ context.Context, _ resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = "helm_release"
}

// Schema is helm_release's as the v3.1.2 state shows it.
func (helmReleaseSchemaOnly) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	str := schema.StringAttribute{Optional: true}
	boolean := schema.BoolAttribute{Optional: true}
	number := schema.Int64Attribute{Optional: true}
	attrs := map[string]schema.Attribute{
		"values":    schema.ListAttribute{ElementType: types.StringType, Optional: true},
		"resources": schema.MapAttribute{ElementType: types.StringType, Optional: true},
		"postrender": schema.SingleNestedAttribute{Optional: true, Attributes: map[string]schema.Attribute{
			"binary_path": str, "args": schema.ListAttribute{ElementType: types.StringType, Optional: true},
		}},
		"timeouts": schema.SingleNestedAttribute{Optional: true, Attributes: map[string]schema.Attribute{
			"create": str, "read": str, "update": str, "delete": str,
		}},
		"metadata": schema.SingleNestedAttribute{Optional: true, Attributes: map[string]schema.Attribute{
			"app_version": str, "chart": str, "first_deployed": number, "last_deployed": number, "name": str,
			"namespace": str, "notes": str, "revision": number, "values": str, "version": str,
		}},
		"set": schema.ListNestedAttribute{Optional: true, NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"name": str, "type": str, "value": str,
		}}},
		"set_wo": schema.ListNestedAttribute{Optional: true, NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"name": str, "type": str, "value": str,
		}}},
		"set_sensitive": schema.ListNestedAttribute{Optional: true, NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"name": str, "type": str, "value": schema.StringAttribute{Optional: true, Sensitive: true},
		}}},
		"set_list": schema.ListNestedAttribute{Optional: true, NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"name": str, "value": schema.ListAttribute{ElementType: types.StringType, Optional: true},
		}}},
	}
	for _, name := range []string{"chart", "description", "id", "keyring", "manifest", "name", "namespace", "repository",
		"repository_ca_file", "repository_cert_file", "repository_key_file", "repository_username", "status", "version"} {
		attrs[name] = str
	}
	attrs["repository_password"] = schema.StringAttribute{Optional: true, Sensitive: true}
	for _, name := range []string{"atomic", "cleanup_on_fail", "create_namespace", "dependency_update", "devel", "disable_crd_hooks",
		"disable_openapi_validation", "disable_webhooks", "force_update", "lint", "pass_credentials", "recreate_pods",
		"render_subchart_notes", "replace", "reset_values", "reuse_values", "skip_crds", "take_ownership", "upgrade_install",
		"verify", "wait", "wait_for_jobs"} {
		attrs[name] = boolean
	}
	for _, name := range []string{"max_history", "timeout", "set_wo_revision"} {
		attrs[name] = number
	}
	resp.Schema = schema.Schema{Version: 2, Attributes: attrs}
}

func (helmReleaseSchemaOnly) Create(_ context.Context, _ resource.CreateRequest, resp *resource.CreateResponse) {
	resp.Diagnostics.AddError("helm_release stand-in", "Only the state of helm_release is read here, to move it.")
}

func (helmReleaseSchemaOnly) Read(_ context.Context, _ resource.ReadRequest, resp *resource.ReadResponse) {
	resp.Diagnostics.AddError("helm_release stand-in", "Only the state of helm_release is read here, to move it.")
}

func (helmReleaseSchemaOnly) Update(_ context.Context, _ resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.Diagnostics.AddError("helm_release stand-in", "Only the state of helm_release is read here, to move it.")
}

func (helmReleaseSchemaOnly) Delete(_ context.Context, _ resource.DeleteRequest, resp *resource.DeleteResponse) {
	resp.Diagnostics.AddError("helm_release stand-in", "Only the state of helm_release is read here, to move it.")
}
