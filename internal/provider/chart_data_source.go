package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
)

var (
	_ datasource.DataSource              = (*chartDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*chartDataSource)(nil)
)

// NewChartDataSource returns the helmrelease_chart data source.
func NewChartDataSource() datasource.DataSource { return &chartDataSource{} }

type chartDataSource struct {
	data *providerData
}

type chartDataModel struct {
	ID                    types.String `tfsdk:"id"`
	Repository            types.String `tfsdk:"repository"`
	Name                  types.String `tfsdk:"name"`
	Version               types.String `tfsdk:"version"`
	Username              types.String `tfsdk:"username"`
	Password              types.String `tfsdk:"password"`
	CAFile                types.String `tfsdk:"ca_file"`
	CertFile              types.String `tfsdk:"cert_file"`
	KeyFile               types.String `tfsdk:"key_file"`
	InsecureSkipTLSVerify types.Bool   `tfsdk:"insecure_skip_tls_verify"`
	PassCredentials       types.Bool   `tfsdk:"pass_credentials"`
	PlainHTTP             types.Bool   `tfsdk:"plain_http"`
	ChartVersion          types.String `tfsdk:"chart_version"`
	AppVersion            types.String `tfsdk:"app_version"`
	ChartDigest           types.String `tfsdk:"chart_digest"`
	PinnedVersion         types.String `tfsdk:"pinned_version"`
	URLs                  types.List   `tfsdk:"urls"`
	Versions              types.List   `tfsdk:"versions"`
}

func (d *chartDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_chart"
}

func (d *chartDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = chartDataSchema()
}

func chartDataSchema() schema.Schema {
	optionalString := func(desc string, sensitive bool) schema.StringAttribute {
		return schema.StringAttribute{MarkdownDescription: desc, Optional: true, Sensitive: sensitive}
	}
	return schema.Schema{
		MarkdownDescription: "Resolves a chart version constraint in a Helm repository or an OCI registry, as `helmrelease_release` resolves its `chart`: the version chosen, its app version and digest, and the versions available. Repository indexes are downloaded once per run and cached on disk (`cache_dir`).",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{MarkdownDescription: "`<repository>/<name>@<chart_version>`.", Computed: true},
			"repository": schema.StringAttribute{
				MarkdownDescription: "Helm repository (`https://…`, `http://…`) or OCI registry path (`oci://host/path`) (HelmRepository `url`). Credentials written into it (`https://user:pass@host/…`) are sent as basic auth and kept out of `id`, errors, logs and caches; a query string or fragment is refused.",
				Required:            true,
				Validators:          []validator.String{repositoryURL()},
			},
			"name": schema.StringAttribute{
				MarkdownDescription: "Chart name (`chart`).",
				Required:            true,
				Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
			},
			"version": schema.StringAttribute{
				MarkdownDescription: "Semver constraint (`version`), e.g. `6.5.*` or `>=4.0.0 <5.0.0`; prereleases match only a constraint that names one (`>=1.0.0-0`). For an OCI registry, `1.2.3@sha256:<64 hex digits>` names one manifest by its digest. Default: `*`.",
				Optional:            true,
				Validators:          []validator.String{chartVersion()},
			},
			"username":                 optionalString("User name for the repository (`secretRef` username). Default: none, or the provider's `registries` login for the repository (an OCI registry's host, a Helm repository's URL prefix), with its password, `exec` token or Docker credentials.", false),
			"password":                 optionalString("Password for the repository (`secretRef` password). Default: none.", true),
			"ca_file":                  optionalString("PEM file of a CA to trust (`certSecretRef` ca.crt). Default: the system roots.", false),
			"cert_file":                optionalString("PEM file of a client certificate (`certSecretRef` tls.crt). Default: none.", false),
			"key_file":                 optionalString("PEM file of the client certificate's key (`certSecretRef` tls.key). Default: none.", false),
			"insecure_skip_tls_verify": schema.BoolAttribute{MarkdownDescription: "Skip TLS verification (`insecure`). Default: `false`.", Optional: true},
			"pass_credentials":         schema.BoolAttribute{MarkdownDescription: "Send the credentials to chart URLs on other hosts too (`passCredentials`). Default: `false`.", Optional: true},
			"plain_http":               schema.BoolAttribute{MarkdownDescription: "Reach the OCI registry (`oci://`) over plain HTTP instead of HTTPS (`helm --plain-http`; OCI source `insecure`), as the resource's `chart.plain_http`. Default: `false`, or the provider's `registries` entry for the host.", Optional: true},
			"chart_version": schema.StringAttribute{
				MarkdownDescription: "Version chosen; for OCI with `+<12 hex>` of the manifest digest, as in Flux.",
				Computed:            true,
			},
			"app_version":  schema.StringAttribute{MarkdownDescription: "App version of the chosen version.", Computed: true},
			"chart_digest": schema.StringAttribute{MarkdownDescription: "SHA-256 of the chart archive (Helm repositories), or the OCI manifest digest; the resource's `chart_digest` for this version.", Computed: true},
			"pinned_version": schema.StringAttribute{
				MarkdownDescription: "The `chart.version` of a `helmrelease_release` that names the chosen chart alone: the version for a Helm repository, the version with its manifest digest for an OCI registry (`1.2.3@sha256:…`; a tag can be pushed again). A data source is read at plan and a saved plan keeps what it read, so a release created with `version = data.helmrelease_chart.<name>.pinned_version` shows its chart and objects in the plan and deploys them (guide \"HCP Terraform and other remote runs\").",
				Computed:            true,
			},
			"urls":     schema.ListAttribute{MarkdownDescription: "Download URLs of the chosen version (Helm repositories).", ElementType: types.StringType, Computed: true},
			"versions": schema.ListAttribute{MarkdownDescription: "Versions available, newest first.", ElementType: types.StringType, Computed: true},
		},
	}
}

func (d *chartDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	data, err := configureData(req.ProviderData)
	if err != nil {
		resp.Diagnostics.AddError("Provider not configured", err.Error())
		return
	}
	d.data = data
}

func (d *chartDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m chartDataModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || d.data == nil {
		return
	}
	repo := m.Repository.ValueString()
	auth := chartsource.Auth{
		Username: m.Username.ValueString(), Password: m.Password.ValueString(),
		CAFile: m.CAFile.ValueString(), CertFile: m.CertFile.ValueString(), KeyFile: m.KeyFile.ValueString(),
		InsecureSkipTLSVerify: m.InsecureSkipTLSVerify.ValueBool(), PassCredentials: m.PassCredentials.ValueBool(),
		PlainHTTP: m.PlainHTTP.ValueBool(),
	}
	repo, auth, err := chartsource.SplitRepositoryURL(repo, auth)
	if err != nil {
		repositoryURLError(&resp.Diagnostics, path.Root("repository"), err)
		return
	}
	auth = d.data.withRegistryLogin(repo, auth)
	var version, appVersion, digest string
	var urls, versions []string
	if chartsource.IsOCI(repo) {
		oci, err := d.data.charts.OCI(ctx, chartsource.Source{Repository: repo, Name: m.Name.ValueString(), Version: m.Version.ValueString(), Auth: auth})
		if err != nil {
			chartError(&resp.Diagnostics, path.Empty(), err)
			return
		}
		version, appVersion, digest, versions = oci.Version, oci.Chart.Metadata.AppVersion, oci.Digest, oci.Versions
		// The tag's version: without the "+<12 hex>" the digest adds.
		tag := version
		if i := strings.LastIndex(version, "+"); i > 0 {
			tag = version[:i]
		}
		m.PinnedVersion = types.StringValue(tag + "@" + digest)
	} else {
		idx, err := d.data.charts.Index(ctx, repo, auth)
		if err != nil {
			chartError(&resp.Diagnostics, path.Empty(), err)
			return
		}
		staleIndexWarning(&resp.Diagnostics, path.Root("repository"), idx.Stale)
		v, err := idx.Resolve(m.Name.ValueString(), m.Version.ValueString())
		if err != nil {
			chartError(&resp.Diagnostics, path.Empty(), fmt.Errorf("repository %s: %w", repo, err))
			return
		}
		all, _ := idx.Versions(m.Name.ValueString())
		for _, cv := range all {
			versions = append(versions, cv.Version)
		}
		version, appVersion, digest, urls = v.Version, v.AppVersion, v.Digest, v.URLs
		m.PinnedVersion = types.StringValue(version)
	}
	m.ChartVersion = types.StringValue(version)
	m.AppVersion = types.StringValue(appVersion)
	m.ChartDigest = types.StringValue(digest)
	m.ID = types.StringValue(fmt.Sprintf("%s/%s@%s", repo, m.Name.ValueString(), version))
	urlList, diags := types.ListValueFrom(ctx, types.StringType, nonNil(urls))
	resp.Diagnostics.Append(diags...)
	versionList, diags := types.ListValueFrom(ctx, types.StringType, nonNil(versions))
	resp.Diagnostics.Append(diags...)
	m.URLs, m.Versions = urlList, versionList
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
