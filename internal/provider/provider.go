// Package provider is the Terraform glue of helmrelease: provider
// configuration, resources and data sources, and their conversion to the
// engine's types. It holds no Helm or Kubernetes logic of its own.
package provider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"k8s.io/client-go/rest"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/flux"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
)

var (
	_ provider.Provider                  = (*helmReleaseProvider)(nil)
	_ provider.ProviderWithListResources = (*helmReleaseProvider)(nil)
	_ provider.ProviderWithActions       = (*helmReleaseProvider)(nil)
	_ provider.ProviderWithFunctions     = (*helmReleaseProvider)(nil)
)

// errConfigUnknown is returned by clients whose configuration is not known
// yet (planning a cluster created in the same apply).
var errConfigUnknown = errors.New("the provider's kubernetes configuration is not known until apply")

// objectAsOptions converts nested objects leniently: unset attributes stay null.
var objectAsOptions = basetypes.ObjectAsOptions{UnhandledNullAsEmpty: true, UnhandledUnknownAsEmpty: true}

// providerData is what Configure hands to resources and data sources.
type providerData struct {
	clients    *kube.Clients
	charts     *chartsource.Repositories
	registries []registryLogin

	// discoveries are the provider cluster's discovery by impersonated
	// user ("" for the provider's own), shared by all releases.
	discoveries sync.Map // string → *kube.Discovery

	// fluxMu guards flux, the Flux engine of the provider's cluster, made
	// on first use.
	fluxMu sync.Mutex
	flux   *flux.Engine
}

// fluxEngine is the shared Flux engine of the provider's cluster.
func (d *providerData) fluxEngine() (*flux.Engine, error) {
	d.fluxMu.Lock()
	defer d.fluxMu.Unlock()
	if d.flux != nil {
		return d.flux, nil
	}
	cfg, err := d.clients.RESTConfig()
	if err != nil {
		return nil, err
	}
	e, err := flux.New(cfg)
	if err != nil {
		return nil, err
	}
	d.flux = e
	return e, nil
}

// discovery is the shared discovery of the provider's cluster for the user
// impersonate ("" for the provider's credentials).
func (d *providerData) discovery(cfg *rest.Config, impersonate string) *kube.Discovery {
	v, _ := d.discoveries.LoadOrStore(impersonate, kube.NewDiscovery(cfg, impersonate))
	return v.(*kube.Discovery)
}

type helmReleaseProvider struct {
	version string
	getenv  func(string) string
}

// New returns the provider factory for version.
func New(version string) func() provider.Provider {
	return func() provider.Provider {
		return &helmReleaseProvider{version: version, getenv: os.Getenv}
	}
}

func (p *helmReleaseProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "helmrelease"
	resp.Version = p.version
}

func (p *helmReleaseProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = providerSchema()
}

func (p *helmReleaseProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var cfg providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	cacheDir := cfg.CacheDir.ValueString()
	if cacheDir == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			dir = os.TempDir()
		}
		cacheDir = filepath.Join(dir, "terraform-provider-helmrelease")
	}
	agent := userAgent(p.version, req.TerraformVersion)
	data := &providerData{charts: chartsource.NewRepositories(cacheDir, 0).WithUserAgent(agent)}
	if !cfg.Registries.IsUnknown() && !cfg.Registries.IsNull() {
		var models []registryModel
		resp.Diagnostics.Append(cfg.Registries.ElementsAs(ctx, &models, false)...)
		logins, diags := registryLogins(ctx, models)
		resp.Diagnostics.Append(diags...)
		data.registries = logins
	}

	switch {
	case !fullyKnown(cfg.Kubernetes):
		// Planning before the cluster exists: what needs no cluster still works.
		data.clients = kube.NewClients(func() (*rest.Config, error) { return nil, errConfigUnknown })
	default:
		var km kubernetesModel
		if !cfg.Kubernetes.IsNull() {
			resp.Diagnostics.Append(cfg.Kubernetes.As(ctx, &km, objectAsOptions)...)
		}
		kc, diags := km.kubeConfig(ctx)
		resp.Diagnostics.Append(diags...)
		if resp.Diagnostics.HasError() {
			return
		}
		kc, err := kc.WithEnvironment(p.getenv)
		if err != nil {
			attrError(&resp.Diagnostics, path.Root("kubernetes").AtName("insecure"), "Invalid KUBE_INSECURE", err.Error()+".", "Set KUBE_INSECURE to true or false, or unset it.")
			return
		}
		if kc.ProxyURL != "" {
			if err := kube.ValidateProxyURL(kc.ProxyURL); err != nil {
				invalidValue(&resp.Diagnostics, path.Root("kubernetes").AtName("proxy_url"), "proxy URL", err, "Use a URL like http://proxy.example:3128 (schemes http, https or socks5).")
				return
			}
		}
		kc.UserAgent = agent
		getenv := p.getenv
		data.clients = kube.NewClients(func() (*rest.Config, error) { return kc.RESTConfig(getenv) })
	}
	resp.DataSourceData = data
	resp.ResourceData = data
	resp.ListResourceData = data
	resp.ActionData = data
}

// userAgent names the provider's version, and the version of Terraform (or
// OpenTofu, which reports its own) that runs it, to API servers,
// repositories and registries.
func userAgent(version, terraformVersion string) string {
	agent := "terraform-provider-helmrelease/" + version
	if terraformVersion != "" {
		agent += " Terraform/" + terraformVersion
	}
	return agent
}

func (p *helmReleaseProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{NewReleaseResource}
}

// Actions are what `terraform apply -invoke` and action triggers run
// (Terraform ≥ 1.14).
func (p *helmReleaseProvider) Actions(context.Context) []func() action.Action {
	return []func() action.Action{NewTestAction, NewForceAction, NewResetAction}
}

// ListResources are the resources `terraform query` lists (Terraform ≥ 1.14).
func (p *helmReleaseProvider) ListResources(context.Context) []func() list.ListResource {
	return []func() list.ListResource{NewReleaseList}
}

// Functions are the provider's functions (Terraform ≥ 1.8).
func (p *helmReleaseProvider) Functions(context.Context) []func() function.Function {
	return []func() function.Function{NewMergeValuesFunction}
}

func (p *helmReleaseProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{NewTemplateDataSource, NewChartDataSource}
}

// configureData extracts the provider data; nil before the provider is configured.
func configureData(v any) (*providerData, error) {
	if v == nil {
		return nil, nil
	}
	d, ok := v.(*providerData)
	if !ok {
		return nil, fmt.Errorf("unexpected provider data %T: this is a bug in the provider", v)
	}
	return d, nil
}
