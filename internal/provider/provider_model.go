package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
)

type providerModel struct {
	Kubernetes types.Object `tfsdk:"kubernetes"`
	Clusters   types.Map    `tfsdk:"clusters"`
	Registries types.List   `tfsdk:"registries"`
	CacheDir   types.String `tfsdk:"cache_dir"`
}

type kubernetesModel struct {
	ConfigPath           types.String  `tfsdk:"config_path"`
	ConfigPaths          types.List    `tfsdk:"config_paths"`
	ConfigContext        types.String  `tfsdk:"config_context"`
	Host                 types.String  `tfsdk:"host"`
	Token                types.String  `tfsdk:"token"`
	ClusterCACertificate types.String  `tfsdk:"cluster_ca_certificate"`
	ClientCertificate    types.String  `tfsdk:"client_certificate"`
	ClientKey            types.String  `tfsdk:"client_key"`
	Insecure             types.Bool    `tfsdk:"insecure"`
	TLSServerName        types.String  `tfsdk:"tls_server_name"`
	ProxyURL             types.String  `tfsdk:"proxy_url"`
	Exec                 types.Object  `tfsdk:"exec"`
	Kubeconfig           types.String  `tfsdk:"kubeconfig"`
	QPS                  types.Float64 `tfsdk:"qps"`
	Burst                types.Int64   `tfsdk:"burst"`
}

type execModel struct {
	APIVersion types.String `tfsdk:"api_version"`
	Command    types.String `tfsdk:"command"`
	Args       types.List   `tfsdk:"args"`
	Env        types.Map    `tfsdk:"env"`
}

// kubeConfig converts the kubernetes block; the caller has checked that it
// is fully known.
func (m kubernetesModel) kubeConfig(ctx context.Context) (kube.Config, diag.Diagnostics) {
	var diags diag.Diagnostics
	c := kube.Config{
		ConfigPath:           m.ConfigPath.ValueString(),
		ConfigContext:        m.ConfigContext.ValueString(),
		Host:                 m.Host.ValueString(),
		Token:                m.Token.ValueString(),
		ClusterCACertificate: m.ClusterCACertificate.ValueString(),
		ClientCertificate:    m.ClientCertificate.ValueString(),
		ClientKey:            m.ClientKey.ValueString(),
		TLSServerName:        m.TLSServerName.ValueString(),
		ProxyURL:             m.ProxyURL.ValueString(),
		Kubeconfig:           m.Kubeconfig.ValueString(),
		Insecure:             m.Insecure.ValueBoolPointer(),
		QPS:                  m.QPS.ValueFloat64Pointer(),
		Burst:                m.Burst.ValueInt64Pointer(),
	}
	if !m.ConfigPaths.IsNull() {
		diags.Append(m.ConfigPaths.ElementsAs(ctx, &c.ConfigPaths, false)...)
	}
	if !m.Exec.IsNull() {
		var e execModel
		diags.Append(m.Exec.As(ctx, &e, objectAsOptions)...)
		c.Exec = &kube.ExecConfig{APIVersion: e.APIVersion.ValueString(), Command: e.Command.ValueString()}
		if !e.Args.IsNull() {
			diags.Append(e.Args.ElementsAs(ctx, &c.Exec.Args, false)...)
		}
		if !e.Env.IsNull() {
			diags.Append(e.Env.ElementsAs(ctx, &c.Exec.Env, false)...)
		}
	}
	return c, diags
}
