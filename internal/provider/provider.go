// Package provider is the Terraform side of helmrelease: the provider
// configuration and its clusters, the helmrelease_release resource, the
// data sources, list resource, functions and actions, and their mapping
// to and from internal/reconcile's Spec and Status.
//
// It owns what Terraform shows of a release: the plan (decided in
// release_plan.go's named steps), the objects as resources shows them
// (Secret values hashed, sensitive strings hidden, drift put back), the
// diagnostics with their remedies, and what is kept in private state
// between plan and apply. Helm is reached through internal/helm and internal/chartsource only.
//
// A release runs on the engine its engine attribute names, each in files
// of its own: engine_helm_*.go drives internal/reconcile in-process;
// engine_flux_*.go hands the release to Flux's helm-controller through
// internal/flux, and keeps what that needs here: the controller's status
// mapped to the provider's, the fields a controller's CRD lacks, and the
// fields it is known to render otherwise than the plan. engine.go says
// what differs between them; the operation files (release_plan.go,
// release_apply.go, release_read.go, release_delete.go,
// release_import.go) never ask which engine runs a release.
package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"k8s.io/client-go/rest"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/tfvalue"
)

var (
	_ provider.Provider                  = (*helmReleaseProvider)(nil)
	_ provider.ProviderWithListResources = (*helmReleaseProvider)(nil)
	_ provider.ProviderWithActions       = (*helmReleaseProvider)(nil)
	_ provider.ProviderWithFunctions     = (*helmReleaseProvider)(nil)
)

// objectAsOptions converts nested objects leniently: unset attributes stay null.
var objectAsOptions = basetypes.ObjectAsOptions{UnhandledNullAsEmpty: true, UnhandledUnknownAsEmpty: true}

// providerData is what Configure hands to resources and data sources.
type providerData struct {
	charts     *chartsource.Repositories
	registries chartsource.RegistryLogins

	// defaultCluster is the kubernetes block's cluster, of releases that
	// name none; clusters are the named ones, unknown all together while
	// clustersUnknown (the whole map is not known at plan).
	defaultCluster  *cluster
	clusters        map[string]*cluster
	clustersUnknown bool
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

	if tfvalue.FullyKnown(cfg.Kubernetes) {
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
		if !p.checkProxy(kc, path.Root("kubernetes"), &resp.Diagnostics) {
			return
		}
		kc.UserAgent = agent
		getenv := p.getenv
		data.defaultCluster = newCluster("", func() (*rest.Config, error) { return kc.RESTConfig(getenv) })
	} else {
		// Planning before the cluster exists: what needs no cluster still works.
		data.defaultCluster = unknownCluster("")
	}
	data.clusters, data.clustersUnknown = p.namedClusters(ctx, cfg.Clusters, agent, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.DataSourceData = data
	resp.ResourceData = data
	resp.ListResourceData = data
	resp.ActionData = data
}

// namedClusters are the clusters of the provider's clusters map; unknown
// is true when the map itself is not known yet. A named cluster is exactly
// what its attributes say: no KUBE_* or KUBECONFIG variable and no
// in-cluster account fills in for it, so that one cluster's environment
// never reaches another.
func (p *helmReleaseProvider) namedClusters(ctx context.Context, v types.Map, agent string, diags *diag.Diagnostics) (clusters map[string]*cluster, unknown bool) {
	if v.IsUnknown() {
		return nil, true
	}
	clusters = map[string]*cluster{}
	for name, el := range v.Elements() {
		at := path.Root("clusters").AtMapKey(name)
		obj, ok := el.(types.Object)
		if !ok || !tfvalue.FullyKnown(obj) {
			clusters[name] = unknownCluster(name)
			continue
		}
		var km kubernetesModel
		diags.Append(obj.As(ctx, &km, objectAsOptions)...)
		kc, d := km.kubeConfig(ctx)
		diags.Append(d...)
		if diags.HasError() {
			return nil, false
		}
		if !kc.Explicit() {
			attrError(diags, at, "Cluster without connection settings", fmt.Sprintf("clusters[%q] names no cluster: it sets none of config_path, config_paths, kubeconfig, host, token, client_certificate, exec or config_context, and a named cluster takes nothing from KUBE_* variables, KUBECONFIG or the in-cluster account.", name), "Set how to reach the cluster, e.g. host, cluster_ca_certificate and token from the module that creates it, or config_path and config_context.")
			continue
		}
		if !p.checkProxy(kc, at, diags) {
			continue
		}
		kc.UserAgent = agent
		clusters[name] = newCluster(name, func() (*rest.Config, error) {
			cfg, err := kc.RESTConfig(func(string) string { return "" })
			if err != nil {
				return nil, fmt.Errorf("cluster %q: %w", name, err)
			}
			return cfg, nil
		})
	}
	return clusters, false
}

// checkProxy reports whether kc's proxy URL is valid, with a diagnostic on
// the proxy_url of the block at when it is not.
func (p *helmReleaseProvider) checkProxy(kc kube.Config, at path.Path, diags *diag.Diagnostics) bool {
	if kc.ProxyURL == "" {
		return true
	}
	if err := kube.ValidateProxyURL(kc.ProxyURL); err != nil {
		invalidValue(diags, at.AtName("proxy_url"), "proxy URL", err, "Use a URL like http://proxy.example:3128 (schemes http, https or socks5).")
		return false
	}
	return true
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
