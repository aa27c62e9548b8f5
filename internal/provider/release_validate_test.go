package provider

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// TestRelease_badInput: invalid configurations fail at plan with the
// attribute path and a remedy, before anything reaches a cluster. Every
// case is a resource of one configuration, held to the diagnostics that
// Terraform names its resource in: one plan for them all, then another for
// those the first found no error in (Terraform plans nothing while its
// validation finds errors). One plan per case cost 125 Terraform runs.
func TestRelease_badInput(t *testing.T) {
	t.Parallel() // no cluster, no environment of its own
	cases := []struct{ body, want string }{
		{`timeout = "5 minutes"`, `Error: Invalid duration … The duration at timeout is not valid: "5 minutes": time: unknown unit " minutes" in duration "5 minutes". Write a positive duration with a unit, e.g. ` + "`90s`"},
		{`upgrade = { timeout = "-1m" }`, `The duration at upgrade.timeout is not valid: "-1m" is not positive`},
		{`install = { crds = "Sometimes" }`, `Attribute install.crds value must be one of: ["Skip" "Create" "CreateReplace"], got: "Sometimes"`},
		{`upgrade = { remediation = { strategy = "retry" } }`, `Attribute upgrade.remediation.strategy value must be one of: ["rollback" "uninstall"], got: "retry"`},
		{`uninstall = { deletion_propagation = "now" }`, `Attribute uninstall.deletion_propagation value must be one of: ["background" "foreground" "orphan"]`},
		{`drift_detection = { mode = "on" }`, `Attribute drift_detection.mode value must be one of: ["enabled" "warn" "disabled"]`},
		{`drift_detection = { ignore = [{ paths = ["spec/replicas"] }] }`, `Error: Invalid JSON pointer … "spec/replicas" does not start with '/'. Write an RFC 6901 JSON pointer`},
		{`drift_detection = { ignore = [{ paths = ["/a~2b"] }] }`, `"/a~2b" has a '~' not followed by 0 or 1`},
		{`drift_detection = { ignore = [{ paths = ["/spec"], target = { name = "(" } }] }`, `Error: Invalid regular expression … Use Go regular expression syntax`},
		{`drift_detection = { ignore = [{ paths = ["/spec"], target = { label_selector = "a=b=c" } }] }`, `Error: Invalid label selector`},
		{`values_from = [{ kind = "ConfigMap", name = "v", target_path = "a[" }]`, `Error: Invalid target path`},
		{`values_from = [{ kind = "Pod", name = "v" }]`, `Attribute values_from[0].kind value must be one of: ["ConfigMap" "Secret"]`},
		{`post_renderers = [{ kustomize = { patches = [{ patch = "[{op: jump, path: /a}]" }] } }]`, `Error: Invalid patch … "jump" is not a JSON 6902 operation`},
		{`release_name = "a-release-name-that-is-far-too-long-for-helm-to-accept-it"`, `Attribute release_name string length must be between 1 and 53`},
		{`namespace = "Apps_1"`, `Attribute namespace must be lowercase letters, digits and '-'`},
		{`max_history = -1`, `Attribute max_history value must be at least 0, got: -1`},
		{`values = "a string"`, `Error: Invalid values … The values at values are not valid: values must be an object`},
		{`sensitive_values = "[1, 2]"`, `Error: Invalid sensitive values … a mapping is needed, not []interface {}`},
		{`service_account_name = "Deployer!"`, `Attribute service_account_name must be a Kubernetes object name`},
		{`chart = { name = "" }`, `Attribute chart.name string length must be at least 1, got: 0`},
		{`chart_ref = { kind = "OCIRepository", name = "podinfo" }`, `Error: Both chart and chart_ref … chart and chart_ref both name the release's chart`},
		{`chart = null
  chart_ref = { kind = "GitRepository", name = "podinfo" }`, `Attribute chart_ref.kind value must be one of: ["OCIRepository" "HelmChart"], got: "GitRepository"`},
		{`chart = null
  chart_ref = { kind = "HelmChart", name = "Pod_Info" }`, `Attribute chart_ref.name`},
		{`chart = null`, `Error: No chart … A release needs a chart`},
		{`chart = { name = "./chart", version = ">=x.y" }`, `Error: Invalid version constraint … The version constraint at chart.version is not valid: ">=x.y"`},
		{`chart = { name = "./chart", values_files = [] }`, `Attribute chart.values_files list must contain at least 1 elements, got: 0`},
		{`chart = { name = "./chart", values_files = [""] }`, `Attribute chart.values_files[0] string length must be at least 1, got: 0`},
		{`chart = { name = "./chart", reconcile_strategy = "Always" }`, `Attribute chart.reconcile_strategy value must be one of: ["ChartVersion" "Revision"], got: "Always"`},
		{`chart = { name = "./chart", verify = { keyring = "" } }`, `Attribute chart.verify.keyring string length must be at least 1, got: 0`},
		{`chart = { name = "./chart.tgz", verify = { provider = "pgp" } }`, `Error: No keyring for pgp verification`},
		{`chart = { name = "app", repository = "oci://registry.example.com/charts", verify = {} }`, `Error: Keyless cosign verification without an identity … a signature by anyone holding a Sigstore certificate would pass`},
		{`chart = { name = "app", repository = "https://charts.example.com", verify = { provider = "cosign", public_keys = ["k"] } }`, `Error: cosign verification of a chart that is not in an OCI registry … this chart comes from a Helm repository`},
		{`chart = { name = "./chart", verify = { provider = "notation", public_keys = ["c"] } }`, `this chart comes from a local path`},
		{`chart = { name = "app", repository = "oci://registry.example.com/charts", verify = { public_keys = ["not a key"] } }`, `Error: Invalid chart.verify … public key 0 is not a PEM public key`},
		{`chart = { name = "app", repository = "oci://registry.example.com/charts", verify = { provider = "notation" } }`, `Error: No certificates for notation verification`},
		{`chart = { name = "app", repository = "oci://registry.example.com/charts", verify = { provider = "notation", public_keys = ["not a certificate"] } }`, `Error: Invalid chart.verify … certificate 0 is neither PEM nor DER`},
		{`chart = { name = "app", repository = "oci://registry.example.com/charts", verify = { match_oidc_identity = [{ issuer = "(", subject = ".*" }] } }`, `OIDC identity 0: issuer "(" is not a regular expression`},
		{`chart = { name = "app", repository = "oci://registry.example.com/charts", verify = { match_oidc_identity = [{ issuer = ".*", subject = ".*" }], trusted_root = "{}" } }`, `the trusted root is not a Sigstore trusted_root.json`},
		{`chart = { name = "app", repository = "oci://registry.example.com/charts", verify = { provider = "notation", public_keys = ["c"], trusted_root = "{}" } }`, `Error: chart.verify.trusted_root with provider notation`},
		{`chart = { name = "app", repository = "oci://registry.example.com/charts", verify = { public_keys = ["k"], match_oidc_identity = [{ issuer = ".*", subject = ".*" }] } }`, `Error: chart.verify.match_oidc_identity with provider cosign`},
		{`chart = { name = "app", repository = "oci://registry.example.com/charts", verify = { provider = "cosign", keyring = "k" } }`, `Error: chart.verify.keyring with provider cosign`},
		{`chart = { name = "app", repository = "oci://registry.example.com/charts", verify = { provider = "cosign", public_keys = ["k"], trust_policy = "{}" } }`, `Error: chart.verify.trust_policy with provider cosign`},
		{`chart = { name = "app", repository = "oci://registry.example.com/charts", verify = { provider = "x509" } }`, `Attribute chart.verify.provider value must be one of: ["cosign" "notation" "pgp"], got: "x509"`},
		{`engine = "flux"
  chart = { name = "app", repository = "oci://registry.example.com/charts", verify = { keyring = "k" } }`, `Error: Provenance keyring with the Flux engine`},
		{`engine = "flux"
  namespace = "apps"
  chart = { name = "app", repository = "oci://registry.example.com/charts", verify = { secret_ref = { name = "signers", namespace = "flux-system" } } }`, `Error: Verification Secret in another namespace with the Flux engine`},
		{`engine = "flux"
  chart = { name = "app", repository = "oci://registry.example.com/charts", verify = { provider = "notation", secret_ref = { name = "signers" }, trust_policy = "{}" } }`, `Error: Trust policy beside a Secret with the Flux engine`},
		{`chart = { name = "app", repository = "oci://" }`, `Error: Invalid repository URL … The repository URL at chart.repository is not valid: not an https://, http:// or oci:// URL with a host`},
		{`chart = { name = "app", repository = "https://charts.example.com/?token=s3cret-in-query" }`, `The repository URL at chart.repository is not valid: a repository URL may not carry a query string or a fragment`},
		{`engine = "flux"
  chart = { name = "app", repository = "oci://registry.example.com/charts", values_files = ["values-prod.yaml"] }`, `Error: Values files of an OCI chart with the Flux engine`},
		{`chart = { name = "app", git = { url = "git@github.com:org/charts.git" } }`, `The Git URL at chart.git.url is not valid: not a URL with a host`},
		{`chart = { name = "app", git = { url = "ftp://example.com/charts.git" } }`, `The Git URL at chart.git.url is not valid: scheme "ftp": GitRepository takes https, http and ssh`},
		{`chart = { name = "app", git = { url = "https://bot:s3cret@example.com/charts.git" } }`, `The Git URL at chart.git.url is not valid: credentials in the URL are shown in plans and kept in the state`},
		{`chart = { name = "app", git = { url = "https://example.com/charts.git", ref = { branch = "main", tag = "v1" } } }`, `Attribute "chart.git.ref.branch" cannot be specified when "chart.git.ref.tag" is specified`},
		{`chart = { name = "app", git = { url = "https://example.com/charts.git", ref = { tag = "v1", commit = "0123456789abcdef0123456789abcdef01234567" } } }`, `Attribute "chart.git.ref.commit" cannot be specified when "chart.git.ref.tag" is specified`},
		{`chart = { name = "app", git = { url = "https://example.com/charts.git", ref = { commit = "abc123" } } }`, `Attribute chart.git.ref.commit must be a full commit hash`},
		{`chart = { name = "app", git = { url = "https://example.com/charts.git", ref = { semver = "not a range" } } }`, `The version constraint at chart.git.ref.semver is not valid`},
		{`chart = { name = "app", git = { url = "https://example.com/charts.git", ref = { name = "main" } } }`, `Attribute chart.git.ref.name must be a full reference name starting with refs/`},
		{`chart = { name = "app", repository = "https://charts.example.com", git = { url = "https://example.com/charts.git" } }`, `Attribute "chart.git" cannot be specified when "chart.repository" is specified`},
		{`chart = { name = "app", version = "1.0.0", git = { url = "https://example.com/charts.git" } }`, `Error: chart.version with chart.git … a chart from Git has the version of its Chart.yaml at the reference checked out`},
		{`chart = { name = "app", insecure_skip_tls_verify = true, git = { url = "https://example.com/charts.git" } }`, `GitRepository always verifies TLS: give the server's CA with chart.ca_file`},
		{`chart = { name = "app", git = { url = "ssh://git@example.com/charts.git", private_key = "k" } }`, `Error: known_hosts missing … Set chart.git.known_hosts to the output of ssh-keyscan`},
		{`chart = { name = "app", username = "bot", git = { url = "ssh://git@example.com/charts.git", known_hosts = "h" } }`, `Error: HTTP credentials with an SSH URL`},
		{`chart = { name = "app", git = { url = "https://example.com/charts.git", private_key = "k" } }`, `Error: SSH key with an HTTP URL`},
		{`chart = { name = "app", bucket = { endpoint = "https://s3.example.com", bucket_name = "charts" } }`, `Attribute chart.bucket.endpoint must be host or host:port, without a scheme or path`},
		{`chart = { name = "app", bucket = { endpoint = "s3.example.com", bucket_name = "charts", provider = "gcp" } }`, `Attribute chart.bucket.provider value must be one of: ["generic" "aws"], got: "gcp"`},
		{`chart = { name = "app", version = "1.0.0", bucket = { endpoint = "s3.example.com", bucket_name = "charts" } }`, `Error: chart.version with chart.bucket … a chart from a bucket has the version of its Chart.yaml`},
		{`chart = { name = "app", insecure_skip_tls_verify = true, bucket = { endpoint = "s3.example.com", bucket_name = "charts" } }`, `or set chart.bucket.insecure for plain HTTP`},
		{`chart = { name = "app", repository = "https://charts.example.com", bucket = { endpoint = "s3.example.com", bucket_name = "charts" } }`, `Attribute "chart.bucket" cannot be specified when "chart.repository" is specified`},
		{`chart = { name = "app", repository = "http://charts.example.com", plain_http = true }`, `Error: chart.plain_http without an OCI registry … A Helm repository says http:// in its URL`},
		{`chart = { name = "app", plain_http = true, git = { url = "http://example.com/charts.git" } }`, `Error: chart.plain_http without an OCI registry`},
		{`chart = { name = "app", repository = "https://charts.example.com", version = "1.2.3@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" }`, `Error: Manifest digest without an OCI registry … Remove the @sha256:… part of chart.version`},
		{`chart = { name = "app", repository = "oci://registry.example.com/charts", version = "1.2.3@sha256:0123" }`, `The version constraint at chart.version is not valid: "1.2.3@sha256:0123": a version naming a manifest digest is a semver version, then @sha256: and 64 lowercase hex digits`},
		{`chart = { name = "app", git = { url = "https://example.com/charts.git", ref = { semver = "1.2.3@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" } } }`, `The version constraint at chart.git.ref.semver is not valid`},
		{`chart = { name = "app", repository = "oci://registry.example.com/charts", plain_http = true, ca_file = "ca.pem" }`, `Error: chart.plain_http with TLS settings … Remove chart.plain_http to reach the registry over HTTPS`},
		{`chart = { name = "app", git = { url = "https://example.com/charts.git" }, bucket = { endpoint = "s3.example.com", bucket_name = "charts" } }`, `Error: Two chart sources … chart.git and chart.bucket both name where the chart comes from`},
		{`test = { filters = [{ name = "" }] }`, `Attribute test.filters[0].name string length must be at least 1, got: 0`},
		{`test = { timeout = "soon" }`, `The duration at test.timeout is not valid: "soon"`},
		{`rollback = { timeout = "0s" }`, `The duration at rollback.timeout is not valid: "0s" is not positive`},
		{`uninstall = { timeout = "1h1" }`, `The duration at uninstall.timeout is not valid: "1h1": time: missing unit`},
		{`install = { timeout = "1d" }`, `The duration at install.timeout is not valid: "1d": time: unknown unit "d"`},
		{`timeout = ""`, `The duration at timeout is not valid: "": time: invalid duration`},
		{`upgrade = { crds = "Always" }`, `Attribute upgrade.crds value must be one of: ["Skip" "Create" "CreateReplace"], got: "Always"`},
		{`target_namespace = "Bad_NS"`, `Attribute target_namespace must be lowercase letters, digits and '-'`},
		{`storage_namespace = "a-namespace-name-that-is-longer-than-sixty-three-characters-in-all"`, `Attribute storage_namespace string length must be between 1 and 63, got: 66`},
		{`name = "Web!"`, `Attribute name must be a Kubernetes object name`},
		{`drift_detection = { ignore = [{ paths = ["/spec"], target = { annotation_selector = "a in (" } }] }`, `Error: Invalid label selector … The label selector at drift_detection.ignore[0].target.annotation_selector is not valid`},
		{`drift_detection = { ignore = [{ paths = ["/spec"], target = { namespace = "(" } }] }`, `The regular expression at drift_detection.ignore[0].target.namespace is not valid`},
		{`drift_detection = { ignore = [{ paths = ["/spec"], target = { kind = "[" } }] }`, `The regular expression at drift_detection.ignore[0].target.kind is not valid`},
		{`values_from = [{ kind = "Secret", name = "" }]`, `Attribute values_from[0].name string length must be between 1 and 253, got: 0`},
		{`values_from = [{ kind = "Secret", name = "s", target_path = "a=b" }]`, `The target path at values_from[0].target_path is not valid: a target path must not contain '='`},
		{`values_from = [{ kind = "ConfigMap", name = "v", values_key = "" }]`, `Attribute values_from[0].values_key must be a ConfigMap/Secret data key`},
		{`post_renderers = [{ kustomize = { patches_json6902 = [{ target = { kind = "Deployment" }, patch = "{not json" }] } }]`, `The patch at post_renderers[0].kustomize.patches_json6902[0].patch is not valid`},
		{`post_renderers = [{ kustomize = { patches_strategic_merge = ["kind: [unclosed"] } }]`, `The patch at post_renderers[0].kustomize.patches_strategic_merge[0] is not valid`},
		{`post_renderers = [{ kustomize = { images = [{ name = "" }] } }]`, `Attribute post_renderers[0].kustomize.images[0].name string length must be at least 1`},
		{`post_renderers = [{ exec = { command = "helmrelease-no-such-post-renderer" } }]`, `Error: Post-renderer command not found … post_renderers[0].exec.command: command "helmrelease-no-such-post-renderer": executable file not found in $PATH. It runs on the machine running Terraform. Install the command there`},
		{`post_renderers = [{ kustomize = { images = [{ name = "app", new_tag = "2" }] } }, { exec = { command = "./no-such-dir/label" } }]`, `post_renderers[1].exec.command: command "./no-such-dir/label": stat ./no-such-dir/label: no such file or directory`},
		{`post_renderers = [{ exec = { command = "sed", env = { "A=B" = "c" } } }]`, `Error: Invalid environment variable name … post_renderers[0].exec.env: "A=B" cannot name an environment variable`},
		{`post_renderers = [{ exec = { command = "sed", timeout = "soon" } }]`, `The duration at post_renderers[0].exec.timeout is not valid`},
		{`post_renderers = [{}]`, `Error: Invalid post-renderer … post_renderers[0] sets neither of kustomize and exec. Set exactly one`},
		{`post_renderers = [{ exec = { command = "sed" }, kustomize = { images = [] } }]`, `Error: Invalid post-renderer … post_renderers[0] sets both of kustomize and exec. Set exactly one`},
		{`engine = "flux"
  chart = { name = "app", repository = "https://charts.example.com" }
  post_renderers = [{ exec = { command = "sed" } }]`, `Error: Post-renderer command with the Flux engine … helm-controller runs no commands`},
		{`chart = { name = "app", repository = "https://charts.example.com", dependency_update = true }`, `Error: Dependency update of a packaged chart … chart.dependency_update: a chart of a repository is an archive built with its dependencies in it`},
		{`chart = { name = "./app-1.0.0.tgz", dependency_update = true }`, `chart.dependency_update: ./app-1.0.0.tgz is a packaged chart`},
		{`engine = "flux"
  chart = { name = "charts/app", git = { url = "https://git.example.com/app.git", ref = { branch = "main" } }, dependency_update = true }`, `Error: Dependency update with the Flux engine … source-controller builds a chart's dependencies that its charts/ lacks`},
		{`post_renderers = [{ kustomize = { patches = [{ patch = "[]", target = { label_selector = "a=b=c" } }] } }]`, `The label selector at post_renderers[0].kustomize.patches[0].target.label_selector is not valid`},
		{`common_metadata = { labels = { "bad key!" = "x" } }`, `Error: Invalid label key … "bad key!": name part must consist of alphanumeric characters`},
		{`common_metadata = { labels = { team = "not a value!" } }`, `Error: Invalid label value … "not a value!": a valid label must be an empty string or consist of alphanumeric characters`},
		{`common_metadata = { annotations = { "a/b/c" = "x" } }`, `Error: Invalid annotation key`},
		{`sensitive_values_wo = "[1, 2]"`, `The sensitive values at sensitive_values_wo are not valid: a mapping is needed`},
		{`kube_config = { secret_ref = { name = "", key = "value" } }`, `Attribute kube_config.secret_ref.name string length must be between 1 and`},
		{`engine = "argo"`, `Attribute engine value must be one of: ["helm" "flux"], got: "argo"`},
		{`flux = { interval = "1h" }`, `Error: Flux settings without the Flux engine … Set engine = "flux" to hand the release to Flux's helm-controller, or remove the flux block`},
		{`engine = "flux"`, `Error: Local chart with the Flux engine … Publish the chart to a Helm repository, an OCI registry, Git or a bucket and set chart.repository, chart.git or chart.bucket`},
		{"engine = \"flux\"\nchart = { name = \"app\", repository = \"https://charts.example.com\", verify = { keyring = \"k.gpg\" } }", `Error: Provenance keyring with the Flux engine`},
		{"engine = \"flux\"\nchart = { name = \"app\", repository = \"https://charts.example.com\", insecure_skip_tls_verify = true }", `Error: TLS verification off with the Flux engine … Give the repository's CA with chart.ca_file`},
		{`upgrade = { strategy = { name = "RetryForever" } }`, `Attribute upgrade.strategy.name value must be one of: ["RemediateOnFailure" "RetryOnFailure"], got: "RetryForever"`},
		{`install = { strategy = { name = "RemediateOnFailure", retry_interval = "1m" } }`, `Error: Retry interval without RetryOnFailure … retry_interval is the wait between the retries of the strategy RetryOnFailure, and install.strategy.name is "RemediateOnFailure". Remove retry_interval, or set name = "RetryOnFailure"`},
		{`upgrade = { strategy = { name = "RetryOnFailure", retry_interval = "5 min" } }`, `The duration at upgrade.strategy.retry_interval is not valid: "5 min"`},
		{`upgrade = { strategy = { retry_interval = "5m" } }`, `Inappropriate value for attribute "upgrade": attribute "strategy": attribute "name" is required`},
		{`wait_strategy = { name = "watcher" }`, `Attribute wait_strategy.name value must be one of: ["poller" "legacy"], got: "watcher"`},
		{`health_check_exprs = [{ api_version = "example.com/v1", kind = "Db", current = "status.phase ==" }]`, `Error: Invalid health check expression … The CEL expression at health_check_exprs[0].current does not parse`},
		{`health_check_exprs = [{ api_version = "example.com/v1", kind = "Db", current = "true", failed = "status.(" }]`, `The CEL expression at health_check_exprs[0].failed does not parse`},
		{"wait_strategy = { name = \"legacy\" }\nhealth_check_exprs = [{ api_version = \"example.com/v1\", kind = \"Db\", current = \"true\" }]", `Error: Health checks with the legacy wait … Remove wait_strategy (poller is then the default)`},
		{`health_check_exprs = [{ api_version = "example.com/v1", kind = "Db", current = "true" }, { api_version = "example.com/v2", kind = "Db", current = "false" }]`, `Error: Two health checks of one kind … health_check_exprs[0] and [1] are both for Db.example.com`},
		{`post_render_strategy = "always"`, `Attribute post_render_strategy value must be one of: ["nohooks" "combined" "separate"], got: "always"`},
		{`rollback = { server_side_apply = "on" }`, `Attribute rollback.server_side_apply value must be one of: ["enabled" "disabled" "auto"], got: "on"`},
		{`upgrade = { chart_name_change_strategy = "Upgrade" }`, `Attribute upgrade.chart_name_change_strategy value must be one of: ["Reinstall" "InPlaceUpdate"], got: "Upgrade"`},
		{`values_from = [{ kind = "ConfigMap", name = "v", literal = true }]`, `Attribute "values_from[0].target_path" must be specified when "values_from[0].literal" is specified`},
		{"engine = \"flux\"\nflux = { depends_on = [{ name = \"web\" }] }\nchart = { name = \"app\", repository = \"https://charts.example.com\" }", `Error: Release depends on itself … flux.depends_on[0] names this release's own HelmRelease default/web`},
		{"engine = \"flux\"\nflux = { depends_on = [{ name = \"db\", ready_expr = \"dep.status.(\" }] }\nchart = { name = \"app\", repository = \"https://charts.example.com\" }", `Error: Invalid readiness expression … The CEL expression at flux.depends_on[0].ready_expr does not compile`},
		{"engine = \"flux\"\nflux = { depends_on = [{ name = \"db\", ready_expr = \"dep.metadata.name\" }] }\nchart = { name = \"app\", repository = \"https://charts.example.com\" }", `The CEL expression at flux.depends_on[0].ready_expr does not compile to a boolean`},
		{"engine = \"flux\"\nflux = { interval = \"often\" }\nchart = { name = \"app\", repository = \"https://charts.example.com\" }", `The duration at flux.interval is not valid: "often"`},
		{`chart = { name = "app", repository = "ftp://charts.example.com" }`, `The repository URL at chart.repository is not valid: not an https://, http:// or oci:// URL with a host`},
	}
	block := func(i int) string {
		body := cases[i].body
		// Defaults for what the case does not set itself.
		defaults := ""
		if !strings.Contains(body, "chart =") {
			defaults += "chart = { name = \"./chart\" }\n"
		}
		if !strings.HasPrefix(body, "name =") {
			defaults += "name = \"web\"\n"
		}
		return fmt.Sprintf("resource \"helmrelease_release\" \"case_%d\" {\n  %s\n  %s\n}\n", i, defaults, body)
	}
	remaining := make([]int, len(cases))
	for i := range cases {
		remaining[i] = i
	}
	for len(remaining) > 0 {
		config := "provider \"helmrelease\" {}\n"
		for _, i := range remaining {
			config += block(i)
		}
		var output string
		resource.UnitTest(t, resource.TestCase{
			ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
			Steps:                    []resource.TestStep{{Config: config, PlanOnly: true}},
			// The plan's error holds every diagnostic: kept to be
			// read per resource below.
			ErrorCheck: func(err error) error {
				output = err.Error()
				return nil
			},
		})
		if output == "" {
			t.Fatalf("a plan of %d invalid configurations succeeded", len(remaining))
		}
		diagnostics := diagnosticsByResource(output)
		var next []int
		for _, i := range remaining {
			d := diagnostics["case_"+strconv.Itoa(i)]
			switch {
			case errorText(cases[i].want).MatchString(d):
			case !errorStartRe.MatchString(d):
				next = append(next, i) // no error yet: the next plan's
			default:
				t.Errorf("case %d (%s): no diagnostic like %q; its diagnostics:\n%s", i, cases[i].body, cases[i].want, d)
			}
		}
		if len(next) == len(remaining) {
			for _, i := range next {
				t.Errorf("case %d (%s): no error; want one like %q", i, cases[i].body, cases[i].want)
			}
			return
		}
		remaining = next
	}
}

// diagnosticRe finds the resource a Terraform diagnostic is about: "with
// helmrelease_release.NAME," or, in a configuration Terraform decodes
// itself, "in resource "helmrelease_release" "NAME"".
var diagnosticRe = regexp.MustCompile(`(?:with helmrelease_release\.|in resource "helmrelease_release" ")([a-z0-9_]+)`)

// diagnosticStartRe and errorStartRe: where Terraform's plain output starts
// a diagnostic, and an error.
var (
	diagnosticStartRe = regexp.MustCompile(`(?m)^(?:Error|Warning): `)
	errorStartRe      = regexp.MustCompile(`(?m)^Error: `)
)

// diagnosticsByResource splits Terraform's output into its diagnostics and
// joins them by the resource each names.
func diagnosticsByResource(output string) map[string]string {
	byResource := map[string]string{}
	starts := diagnosticStartRe.FindAllStringIndex(output, -1)
	for i, start := range starts {
		end := len(output)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		d := output[start[0]:end]
		if m := diagnosticRe.FindStringSubmatch(d); m != nil {
			byResource[m[1]] += d
		}
	}
	return byResource
}
