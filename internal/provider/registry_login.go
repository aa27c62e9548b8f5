package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
)

// registryModel is one login of the provider's registries.
type registryModel struct {
	URL          types.String `tfsdk:"url"`
	Username     types.String `tfsdk:"username"`
	Password     types.String `tfsdk:"password"`
	Exec         types.Object `tfsdk:"exec"`
	DockerConfig types.Bool   `tfsdk:"docker_config"`
	PlainHTTP    types.Bool   `tfsdk:"plain_http"`
}

type registryExecModel struct {
	Command types.String `tfsdk:"command"`
	Args    types.List   `tfsdk:"args"`
	Env     types.Map    `tfsdk:"env"`
}

// registryLogins converts the provider's registries.
func registryLogins(ctx context.Context, models []registryModel) (chartsource.RegistryLogins, diag.Diagnostics) {
	var diags diag.Diagnostics
	logins := make(chartsource.RegistryLogins, 0, len(models))
	for _, m := range models {
		l := chartsource.RegistryLogin{URL: m.URL.ValueString(), Auth: chartsource.Auth{
			Username: m.Username.ValueString(), Password: m.Password.ValueString(), DockerConfig: m.DockerConfig.ValueBool(),
			PlainHTTP: m.PlainHTTP.ValueBool(),
		}}
		if !m.Exec.IsNull() && !m.Exec.IsUnknown() {
			var e registryExecModel
			diags.Append(m.Exec.As(ctx, &e, objectAsOptions)...)
			l.Exec = &chartsource.ExecLogin{Command: e.Command.ValueString()}
			if !e.Args.IsNull() {
				diags.Append(e.Args.ElementsAs(ctx, &l.Exec.Args, false)...)
			}
			if !e.Env.IsNull() {
				diags.Append(e.Env.ElementsAs(ctx, &l.Exec.Env, false)...)
			}
			l.Auth.Login = l.Exec
		}
		logins = append(logins, l)
	}
	return logins, diags
}

// withRegistryLogin completes auth, a chart's own, with the provider's
// login for repository (chartsource.RegistryLogins.Complete).
func (d *providerData) withRegistryLogin(repository string, auth chartsource.Auth) chartsource.Auth {
	if d == nil {
		return auth
	}
	return d.registries.Complete(repository, auth)
}

// chartAsConfigured is chart, read back from a release, as a
// configuration would write it: without plain_http when the provider's
// registries entry for its repository sets it.
func (d *providerData) chartAsConfigured(chart types.Object, diags *diag.Diagnostics) types.Object {
	attrs := chart.Attributes()
	plain, _ := attrs["plain_http"].(types.Bool)
	repository, _ := attrs["repository"].(types.String)
	if !plain.ValueBool() || d == nil {
		return chart
	}
	if login := d.registries.For(repository.ValueString()); login == nil || !login.PlainHTTP {
		return chart
	}
	attrs["plain_http"] = types.BoolNull()
	c, dd := types.ObjectValue(chart.AttributeTypes(context.Background()), attrs)
	diags.Append(dd...)
	return c
}

// registryLoginValidator checks that a login of registries is one of:
// username with password, username with exec, docker_config (OCI only).
type registryLoginValidator struct{}

var _ validator.Object = registryLoginValidator{}

func (registryLoginValidator) Description(context.Context) string {
	return "one of username with password, username with exec, or docker_config"
}

func (v registryLoginValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (registryLoginValidator) ValidateObject(ctx context.Context, req validator.ObjectRequest, resp *validator.ObjectResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	var m registryModel
	resp.Diagnostics.Append(req.ConfigValue.As(ctx, &m, objectAsOptions)...)
	if resp.Diagnostics.HasError() || m.URL.IsUnknown() || m.Username.IsUnknown() || m.Password.IsUnknown() || m.Exec.IsUnknown() || m.DockerConfig.IsUnknown() || m.PlainHTTP.IsUnknown() {
		return
	}
	const remedy = "Give a login one of: username and password; username and exec (a command printing a token); docker_config = true (OCI registries)."
	sources := 0
	for _, set := range []bool{!m.Password.IsNull(), !m.Exec.IsNull(), m.DockerConfig.ValueBool()} {
		if set {
			sources++
		}
	}
	switch {
	case m.PlainHTTP.ValueBool() && !chartsource.IsOCI(m.URL.ValueString()):
		attrError(&resp.Diagnostics, req.Path.AtName("plain_http"), "plain_http for a Helm repository", "plain_http reaches an OCI registry over plain HTTP; "+m.URL.ValueString()+" is a Helm repository, whose URL says http:// itself.", "Remove plain_http, or use the registry's oci:// url.")
	case sources == 0 && m.PlainHTTP.ValueBool() && m.Username.IsNull():
		// Plain HTTP to a registry that needs no login.
	case sources == 0:
		attrError(&resp.Diagnostics, req.Path, "Registry login without credentials", "The login of "+m.URL.ValueString()+" sets no password, exec or docker_config.", remedy+" An oci:// entry with plain_http = true may set none.")
	case sources > 1:
		attrError(&resp.Diagnostics, req.Path, "Registry login with several credentials", "The login of "+m.URL.ValueString()+" sets more than one of password, exec and docker_config.", remedy)
	case m.DockerConfig.ValueBool() && !chartsource.IsOCI(m.URL.ValueString()):
		attrError(&resp.Diagnostics, req.Path.AtName("docker_config"), "Docker configuration for a Helm repository", "Docker's credentials are for OCI registries; "+m.URL.ValueString()+" is a Helm repository.", "Use username and password or exec for a Helm repository, or an oci:// url.")
	case m.DockerConfig.ValueBool() && !m.Username.IsNull():
		attrError(&resp.Diagnostics, req.Path.AtName("username"), "User name with docker_config", "Docker's configuration gives the user name of "+m.URL.ValueString()+".", "Remove username, or use it with password or exec instead of docker_config.")
	case !m.DockerConfig.ValueBool() && m.Username.IsNull():
		attrError(&resp.Diagnostics, req.Path.AtName("username"), "Registry login without a user name", "The login of "+m.URL.ValueString()+" needs the user name its password or token goes with.", "Set username (ECR: AWS; GAR: oauth2accesstoken; ACR: 00000000-0000-0000-0000-000000000000).")
	}
}
