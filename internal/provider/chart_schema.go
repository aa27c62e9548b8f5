package provider

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
)

// chartAttribute is `chart`, shared by helmrelease_template and
// helmrelease_release (HelmRelease spec.chart.spec with its source).
func chartAttribute() schema.SingleNestedAttribute {
	optionalString := func(desc string, sensitive bool) schema.StringAttribute {
		return schema.StringAttribute{MarkdownDescription: desc, Optional: true, Sensitive: sensitive}
	}
	return schema.SingleNestedAttribute{
		MarkdownDescription: "The chart and where it comes from (HelmRelease `spec.chart.spec` and, for the source, Flux's HelmRepository, OCIRepository, GitRepository or Bucket): " +
			"a Helm repository (`repository = \"https://…\"`), an OCI registry (`repository = \"oci://host/path\"`), a Git repository (`git`), an S3-compatible bucket (`bucket`), or, without any, a local chart directory or `.tgz`. " +
			"Repository indexes are downloaded once per Terraform run and cached in the provider's `cache_dir`; archives are cached by digest.",
		Required: true,
		Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{
				MarkdownDescription: "Chart name in the repository (`chart`); with `git` or `bucket`, the chart's directory in the repository or bucket (`chart`, e.g. `charts/podinfo`); without any of them, the path of a local chart directory (holding `Chart.yaml`) or packaged `.tgz`, relative to Terraform's working directory (use `path.module` in modules).",
				Required:            true,
				Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
			},
			"repository": schema.StringAttribute{
				MarkdownDescription: "Helm repository URL (`https://…`, `http://…`) or OCI registry path (`oci://host/path`, the chart being `<path>/<name>`) (HelmRepository `url`). Conflicts with `git`. Credentials written into it (`https://user:pass@host/…`) are sent as the request's basic auth and kept out of errors, logs, caches and the recorded chart source, but Terraform shows the URL as written: prefer `username` and `password`, or pass the URL in a sensitive variable. A query string or fragment is refused. Default: none, `name` is a local chart.",
				Optional:            true,
				Validators: []validator.String{repositoryURL(), stringvalidator.ConflictsWith(
					path.MatchRelative().AtParent().AtName("git"), path.MatchRelative().AtParent().AtName("bucket"))},
			},
			"git":    gitAttribute(),
			"bucket": bucketAttribute(),
			"version": schema.StringAttribute{
				MarkdownDescription: "Semver constraint the chart version must satisfy (`version`), e.g. `1.2.3`, `6.5.*` or `>=4.0.0 <5.0.0`; the newest match is used, so a new matching version shows as an upgrade in the plan. Prereleases match only a constraint that names one (`>=1.0.0-0`). For an OCI registry, a version with its manifest digest, `1.2.3@sha256:<64 hex digits>` (Flux OCIRepository `ref.digest`), names one manifest whatever its tag names later: a tag can be pushed again, so only a digest lets the plan of a new release show its chart and objects (guide \"HCP Terraform and other remote runs\"). Not with `git`: a chart from Git has the version of its `Chart.yaml` at the reference checked out (HelmChart ignores `version` there). Default: `*`.",
				Optional:            true,
				Validators:          []validator.String{chartVersion()},
			},
			"values_files": schema.ListAttribute{
				MarkdownDescription: "Values files of the chart, relative to its root, merged in order as its default values, replacing `values.yaml` (list it first to keep it) (`valuesFiles`). " +
					"The list and the files' content are part of the chart's revision: changing either plans an upgrade. Default: `values.yaml` alone.",
				ElementType: types.StringType,
				Optional:    true,
				Validators:  []validator.List{listvalidator.SizeAtLeast(1), listvalidator.ValueStringsAre(stringvalidator.LengthAtLeast(1))},
			},
			"ignore_missing_values_files": schema.BoolAttribute{
				MarkdownDescription: "Skip the files of `values_files` the chart does not have instead of failing (`ignoreMissingValuesFiles`). Default: `false`.",
				Optional:            true,
			},
			"reconcile_strategy": schema.StringAttribute{
				MarkdownDescription: "What makes a new revision of the chart, which the next apply upgrades to (`reconcileStrategy`): " + reconcileStrategies.markdown() + ". " +
					"`ChartVersion`: a new chart version (an OCI tag pushed again and a Helm repository's version published again with another digest count too). " +
					"`Revision`: any change of the chart's files, its dependencies included; the chart version then carries the first 12 hex digits of their SHA-256 as build metadata (`0.3.0+5e1f0c9a2b7d`), which templates see as `.Chart.Version`. " +
					"With `git`, `Revision` makes every new commit of the reference a new revision, as HelmChart does: the chart version then carries the commit's first 12 hex digits (`0.3.0+1a2b3c4d5e6f`). " +
					"Default: `Revision` for a local chart, so that editing a chart beside the configuration deploys it without bumping its version (Flux defaults to `ChartVersion` for every source, as its sources are built from commits); `ChartVersion` for repositories and Git, where only a new version in `Chart.yaml` upgrades.",
				Optional:   true,
				Validators: []validator.String{reconcileStrategies.validator()},
			},
			"username":  optionalString("User name for the repository or registry (HelmRepository `secretRef` `username`), or for a Git repository over HTTP(S) (GitRepository `secretRef` `username`), or a bucket's access key (Bucket `secretRef` `accesskey`). Default: none, or the provider's `registries` login for the repository (an OCI registry's host, a Helm repository's URL prefix), with its password, `exec` token or Docker credentials.", false),
			"password":  optionalString("Password or token for the repository or registry (`secretRef` `password`), or for a Git repository over HTTP(S), or a bucket's secret key (Bucket `secretRef` `secretkey`). Never shown in plans or logs. Default: none.", true),
			"ca_file":   optionalString("PEM file of a CA to trust for the repository (`certSecretRef` `ca.crt`; GitRepository `secretRef` `ca.crt`). Default: the system's roots.", false),
			"cert_file": optionalString("PEM file of a client certificate for the repository (`certSecretRef` `tls.crt`; GitRepository `secretRef` `tls.crt`). Default: none.", false),
			"key_file":  optionalString("PEM file of the client certificate's key (`certSecretRef` `tls.key`; GitRepository `secretRef` `tls.key`). Default: none.", false),
			"insecure_skip_tls_verify": schema.BoolAttribute{
				MarkdownDescription: "Skip the verification of the repository's TLS certificate (HelmRepository `insecure`). Not with `git`: GitRepository always verifies, give `ca_file`. Default: `false`.",
				Optional:            true,
			},
			"plain_http": schema.BoolAttribute{
				MarkdownDescription: "Reach the OCI registry of `repository` (`oci://`) over plain HTTP instead of HTTPS, as `helm --plain-http` does: a registry on loopback or inside the network that serves no TLS (kind's local registry). With `engine = \"flux\"` it is the OCIRepository's `insecure`. A registry that answers plain HTTP without it fails the plan saying so. OCI registries only: a Helm repository's URL says `http://` itself. The provider's `registries` entry for the host can set it for every chart of the host. Default: `false`.",
				Optional:            true,
			},
			"pass_credentials": schema.BoolAttribute{
				MarkdownDescription: "Send the credentials to chart download URLs on other hosts than the repository's too (HelmRepository `passCredentials`). Default: `false`.",
				Optional:            true,
			},
			"verify": chartVerifyAttribute(),
			"dependency_update": schema.BoolAttribute{
				MarkdownDescription: "Make the chart's `charts/` match `Chart.yaml` at every plan, as `helm dependency update` does, for a chart read from a directory (a local chart directory, or a chart from `git` or `bucket`): each dependency is fetched from its repository (`https://`, `oci://` or `file://`) at the version `Chart.lock` pins when the lock is in step with `Chart.yaml`, else at the newest version its constraint allows, replacing the copy in `charts/` (which otherwise wins, as in Helm and Flux). " +
					"Repositories are reached with the provider's `registries` logins, never the chart's own credentials; archives are cached by digest in `cache_dir`. Nothing is written to the chart's directory. " +
					"The dependencies are part of a local chart's revision (`reconcile_strategy = \"Revision\"`): a new version fetched plans an upgrade, and `planned_dependencies` shows the versions. " +
					"Not with `repository` (a packaged chart carries its dependencies), nor with `engine = \"flux\"` (source-controller fetches only the dependencies `charts/` lacks). No HelmRelease field. Default: `false`.",
				Optional: true,
			},
		},
	}
}

type chartModel struct {
	Name                  types.String      `tfsdk:"name"`
	Repository            types.String      `tfsdk:"repository"`
	Git                   types.Object      `tfsdk:"git"`
	Bucket                types.Object      `tfsdk:"bucket"`
	Version               types.String      `tfsdk:"version"`
	ValuesFiles           types.List        `tfsdk:"values_files"`
	IgnoreMissing         types.Bool        `tfsdk:"ignore_missing_values_files"`
	ReconcileStrategy     types.String      `tfsdk:"reconcile_strategy"`
	Username              types.String      `tfsdk:"username"`
	Password              types.String      `tfsdk:"password"`
	CAFile                types.String      `tfsdk:"ca_file"`
	CertFile              types.String      `tfsdk:"cert_file"`
	KeyFile               types.String      `tfsdk:"key_file"`
	InsecureSkipTLSVerify types.Bool        `tfsdk:"insecure_skip_tls_verify"`
	PassCredentials       types.Bool        `tfsdk:"pass_credentials"`
	PlainHTTP             types.Bool        `tfsdk:"plain_http"`
	Verify                *chartVerifyModel `tfsdk:"verify"`
	DependencyUpdate      types.Bool        `tfsdk:"dependency_update"`
}

// source is the chart source the model names; without a user name, with
// the provider's registries login for its repository.
func (m *chartModel) source(ctx context.Context, data *providerData) (chartsource.Source, diag.Diagnostics) {
	src := chartsource.Source{
		Name:       m.Name.ValueString(),
		Repository: m.Repository.ValueString(),
		Version:    m.Version.ValueString(),
		// Validated against chartsource.ReconcileStrategies.
		ReconcileStrategy:        chartsource.ReconcileStrategy(m.ReconcileStrategy.ValueString()),
		IgnoreMissingValuesFiles: m.IgnoreMissing.ValueBool(),
		Auth: chartsource.Auth{
			Username: m.Username.ValueString(), Password: m.Password.ValueString(),
			CAFile: m.CAFile.ValueString(), CertFile: m.CertFile.ValueString(), KeyFile: m.KeyFile.ValueString(),
			InsecureSkipTLSVerify: m.InsecureSkipTLSVerify.ValueBool(), PassCredentials: m.PassCredentials.ValueBool(),
			PlainHTTP: m.PlainHTTP.ValueBool(),
		},
	}
	src.Git = gitSource(m.Git)
	src.Bucket = bucketSource(m.Bucket)
	if src.Repository == "" && src.Git == nil && src.Bucket == nil {
		src.Name = filepath.Clean(src.Name)
	}
	var diags diag.Diagnostics
	var err error
	if src.Repository, src.Auth, err = chartsource.SplitRepositoryURL(src.Repository, src.Auth); err != nil {
		repositoryURLError(&diags, path.Root("chart").AtName("repository"), err)
		return src, diags
	}
	if v := m.Verify; v != nil {
		if v.provider() == verifyPGP {
			src.Keyring = v.Keyring.ValueString()
		}
		src.Verify = v.verification(ctx, &diags)
		src.VerifyConfig = v.config(ctx)
	}
	diags.Append(m.ValuesFiles.ElementsAs(ctx, &src.ValuesFiles, false)...)
	src.Auth = data.withRegistryLogin(src.Repository, src.Auth)
	src.DependencyUpdate = m.DependencyUpdate.ValueBool()
	src.DependencyAuth = func(repository string) chartsource.Auth {
		return data.withRegistryLogin(repository, chartsource.Auth{})
	}
	return src, diags
}

// validatePlainHTTP refuses, at plan, plain_http where there is no OCI
// registry to reach, and TLS settings beside it.
func validatePlainHTTP(c *chartModel, chart path.Path, diags *diag.Diagnostics) {
	if !c.PlainHTTP.ValueBool() || c.Repository.IsUnknown() {
		return
	}
	switch {
	case !chartsource.IsOCI(c.Repository.ValueString()):
		attrError(diags, chart.AtName("plain_http"), "chart.plain_http without an OCI registry",
			"chart.plain_http reaches an OCI registry (repository = \"oci://…\") over plain HTTP; the chart's source is not one. A Helm repository says http:// in its URL, a Git repository too, and a bucket has bucket.insecure.",
			"Remove chart.plain_http, or set chart.repository to the oci:// registry.")
	case c.InsecureSkipTLSVerify.ValueBool() || !c.CAFile.IsNull() || !c.CertFile.IsNull() || !c.KeyFile.IsNull():
		attrError(diags, chart.AtName("plain_http"), "chart.plain_http with TLS settings",
			"chart.plain_http reaches the registry without TLS, so chart.insecure_skip_tls_verify, ca_file, cert_file and key_file would do nothing.",
			"Remove chart.plain_http to reach the registry over HTTPS with those settings, or remove them.")
	}
}

// validateDigestVersion refuses a version naming a manifest digest for a
// chart that is not from an OCI registry: only a registry serves a chart
// by its manifest's digest.
func validateDigestVersion(c *chartModel, chart path.Path, diags *diag.Diagnostics) {
	if c.Version.IsUnknown() || c.Repository.IsUnknown() {
		return
	}
	if _, _, ok := chartsource.OCIDigestVersion(c.Version.ValueString()); ok && !chartsource.IsOCI(c.Repository.ValueString()) {
		attrError(diags, chart.AtName("version"), "Manifest digest without an OCI registry",
			fmt.Sprintf("chart.version %q names an OCI manifest by its digest, but the chart's source is not an OCI registry (repository = \"oci://…\"): a Helm repository, Git and a bucket serve charts by version, not by manifest.", c.Version.ValueString()),
			"Remove the @sha256:… part of chart.version, or set chart.repository to the oci:// registry that holds the manifest.")
	}
}

// chartError reports a chart source failure on the attribute of chart (the
// root for helmrelease_chart) it concerns.
func chartError(diags *diag.Diagnostics, chart path.Path, err error) {
	at := func(name string) path.Path {
		if chart.Equal(path.Empty()) {
			return path.Root(name)
		}
		return chart.AtName(name)
	}
	// A dependency's errors wrap the others: first.
	switch {
	case errors.Is(err, chartsource.ErrChartPath):
		attrError(diags, at("name"), "Chart not found in the source", err.Error()+".", "Point chart.name at the chart's directory in the repository (the one holding Chart.yaml, e.g. charts/podinfo), at the reference chart.git.ref checks out.")
	case errors.Is(err, chartsource.ErrLocalChartChanged):
		attrError(diags, at("name"), "Local chart changed since the plan", err.Error()+".", "Run terraform plan again to review what the chart renders now, and apply that plan; nothing was deployed. Keep the chart's files unchanged between a plan and its apply (a step that generates or vendors them runs before the plan).")
	case errors.Is(err, chartsource.ErrChangedSincePlan) && errors.Is(err, chartsource.ErrBucket):
		attrError(diags, at("bucket"), "Bucket changed since the plan", err.Error()+".", "Run terraform plan again, and apply the new plan: a bucket keeps no history to read the planned objects from, and the provider reads each run's objects anew rather than trust what cache_dir holds.")
	case errors.Is(err, chartsource.ErrChangedSincePlan):
		attrError(diags, at("version"), "Chart changed since the plan", err.Error()+".", "Run terraform plan again to review the chart the source gives now, and apply that plan. The plan took the chart the refresh resolved, and the apply deploys that chart or none: the source can no longer give it.")
	case errors.Is(err, chartsource.ErrBucket):
		attrError(diags, at("bucket"), "Bucket not usable", err.Error()+".", "Check chart.bucket's endpoint, bucket_name and insecure, and the access key and secret key in chart.username and chart.password.")
	case errors.Is(err, chartsource.ErrGit):
		attrError(diags, at("git"), "Git repository not usable", err.Error()+".", "Check chart.git.url and chart.git.ref, and the credentials: chart.username and chart.password over HTTP(S), chart.git.private_key and known_hosts over SSH.")
	case errors.Is(err, chartsource.ErrDependency):
		attrError(diags, at("name"), "Chart dependency not resolvable", err.Error()+".", "Fix the dependency's repository and version in Chart.yaml (a repository needing a login needs it in the provider's registries), or vendor it in the chart's charts/ directory (helm dependency build).")
	case errors.Is(err, chartsource.ErrLogin):
		attrError(diags, at("repository"), "Repository login failed", err.Error()+".", "Run the exec command of the provider's registries login for this repository by hand: it must print the token alone and exit 0. With docker_config, check Docker's credentials for the host (docker login, or its credential helper).")
	case errors.Is(err, chartsource.ErrSignature):
		signatureError(diags, at("verify"), err)
	case errors.Is(err, chartsource.ErrProvenance):
		attrError(diags, at("verify"), "Chart provenance not verified", err.Error()+".", "Use a chart signed (helm package --sign) by a key of the keyring, with its .prov file published next to it, or point verify.keyring at the signer's public keys.")
	case errors.Is(err, chartsource.ErrValuesFile):
		attrError(diags, at("values_files"), "Chart values file not usable", err.Error()+".", "List files that exist in the chart, relative to its root, holding YAML mappings.")
	case errors.Is(err, chartsource.ErrLocalChart):
		attrError(diags, at("name"), "Chart not loadable", err.Error()+".", "Point chart.name at a chart directory (holding Chart.yaml) or a packaged .tgz; relative paths are relative to Terraform's working directory (use path.module in modules), or set chart.repository.")
	case errors.Is(err, chartsource.ErrNoMatchingVersion):
		attrError(diags, at("version"), "No matching chart version", err.Error()+".", "Change the version constraint to one a published version satisfies (prereleases need a constraint naming one, e.g. >=1.0.0-0), or check the chart name.")
	case errors.Is(err, chartsource.ErrChartNotFound):
		attrError(diags, at("name"), "Chart not found", err.Error()+".", "Check the chart name against the repository's index.")
	default:
		attrError(diags, at("repository"), "Chart repository failed", err.Error()+".", "Check the repository URL, its credentials and TLS settings, and that it is reachable.")
	}
}

// staleIndexWarning says that a repository failed and its index cached in
// cache_dir resolved the chart version.
func staleIndexWarning(diags *diag.Diagnostics, at path.Path, stale *chartsource.StaleIndex) {
	if stale == nil {
		return
	}
	age := time.Since(stale.CachedAt).Round(time.Second)
	diags.AddAttributeWarning(at, "Chart repository failed: cached index used",
		fmt.Sprintf("%s.\n\nThe chart version was resolved from the index cached in cache_dir on %s (%s ago): versions published since then are not seen until the repository answers again. Check that the repository is reachable if this persists.",
			stale.Err, stale.CachedAt.UTC().Format(time.RFC3339), age))
}

// cacheRepairSummary is the summary of cacheRepairWarning.
const cacheRepairSummary = "Chart cache entry replaced"

// cacheRepairWarning says which files of cache_dir did not match the
// digests naming them: fetched again and replaced, never deployed.
func cacheRepairWarning(diags *diag.Diagnostics, at path.Path, repaired []chartsource.CacheRepair) {
	if len(repaired) == 0 {
		return
	}
	lines := make([]string, len(repaired))
	for i, r := range repaired {
		lines[i] = "  - " + r.String()
	}
	diags.AddAttributeWarning(at, cacheRepairSummary,
		fmt.Sprintf("What cache_dir held did not match the digests that name it, so it was not used: the chart was fetched again and the cache repaired.\n\n%s\n\nSomething other than this provider wrote to cache_dir (another tool, or a cache restored from elsewhere). Check what can write to it; a cache_dir of the workspace's own keeps what other jobs write out.",
			strings.Join(lines, "\n")))
}

// validateDependencyUpdate refuses dependency_update on a chart that is
// not read from a directory: a packaged chart carries its dependencies.
func validateDependencyUpdate(c *chartModel, at path.Path, diags *diag.Diagnostics) {
	if !c.DependencyUpdate.ValueBool() {
		return
	}
	const remedy = "Remove dependency_update (the chart's own charts/ is used), or point chart.name at the chart's directory."
	switch {
	case !c.Repository.IsNull() && !c.Repository.IsUnknown():
		attrError(diags, at.AtName("dependency_update"), "Dependency update of a packaged chart",
			fmt.Sprintf("%s: a chart of a repository is an archive built with its dependencies in it; helm dependency update works on a chart's directory.", at.AtName("dependency_update")), remedy)
	case c.Git.IsNull() && c.Bucket.IsNull() && !c.Name.IsUnknown() && strings.HasSuffix(c.Name.ValueString(), ".tgz"):
		attrError(diags, at.AtName("dependency_update"), "Dependency update of a packaged chart",
			fmt.Sprintf("%s: %s is a packaged chart, built with its dependencies in it; helm dependency update works on a chart's directory.", at.AtName("dependency_update"), c.Name.ValueString()), remedy)
	}
}
