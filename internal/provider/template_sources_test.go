package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// testChart is the test chart at version, with a values-prod.yaml file.
func testChart(t *testing.T, version string) *chart.Chart {
	t.Helper()
	c := testrepo.LoadChart(t, testChartDir(t), version)
	c.Files = append(c.Files, &common.File{Name: "values-prod.yaml", Data: []byte("message: from values-prod\n")})
	return c
}

// TestTemplate_chartSources renders charts from a Helm repository and an OCI
// registry, with values files, provenance and the provider's registry
// logins. No cluster: Helm's default capabilities.
func TestTemplate_chartSources(t *testing.T) {
	t.Parallel()
	repo := testrepo.NewHTTP(t)
	signer := testrepo.NewSigner(t, "release-team")
	repo.Add(t, testChart(t, "1.0.0"), signer)
	repo.Add(t, testChart(t, "1.1.0"), signer)
	registry := testrepo.NewOCI(t)
	registry.Push(t, testChart(t, "2.0.0"), nil)
	cacheDir := t.TempDir()

	config := func(chart string) string {
		return fmt.Sprintf(`
provider "helmrelease" {
  cache_dir  = %q
  registries = [{ url = %q, username = %q, password = %q }]
}

data "helmrelease_template" "t" {
  name      = "web"
  namespace = "apps"
  chart     = %s
}
`, cacheDir, strings.TrimSuffix(registry.URL, "/charts"), testrepo.Username, testrepo.Password, chart)
	}
	httpChart := func(version, extra string) string {
		return fmt.Sprintf(`{
    repository = %q
    name       = "app"
    version    = %q
    username   = %q
    password   = %q
    %s
  }`, repo.URL, version, testrepo.Username, testrepo.Password, extra)
	}
	message := resourceAt("v1/ConfigMap/apps/web-config")

	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config(httpChart("1.x", `values_files = ["values.yaml", "values-prod.yaml"]
    verify       = { keyring = "`+signer.Keyring+`" }`)),
				ConfigStateChecks: []statecheck.StateCheck{
					// The values files in use are part of the revision.
					statecheck.ExpectKnownValue(tmpl, tfjsonpath.New("chart_version"), knownvalue.StringRegexp(regexp.MustCompile(`^1\.1\.0\+[0-9a-f]{12}$`))),
					statecheck.ExpectKnownValue(tmpl, message, objectField("from values-prod", "data", "message")),
					// values.yaml is still merged first: its image tag renders.
					statecheck.ExpectKnownValue(tmpl, resourceAt("apps/v1/Deployment/apps/web"), objectField("example.com/app:1.0", "spec", "template", "spec", "containers", "0", "image")),
				},
			},
			{
				// A version published since: the same constraint takes it.
				PreConfig: func() { repo.Add(t, testChart(t, "1.2.0"), nil) },
				Config:    config(httpChart("1.x", "")),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(tmpl, tfjsonpath.New("chart_version"), knownvalue.StringExact("1.2.0")),
					statecheck.ExpectKnownValue(tmpl, message, objectField("hello", "data", "message")),
				},
			},
			{
				Config:      config(httpChart("1.2.0", `verify = { keyring = "`+signer.Keyring+`" }`)),
				ExpectError: errorText(`Error: Chart provenance not verified … repository ` + repo.URL + `: chart provenance not verified: app-1.2.0.tgz has no provenance file (.prov) to verify. Use a chart signed`),
			},
			{
				Config:      config(httpChart("1.0.0", `values_files = ["values-absent.yaml"]`)),
				ExpectError: errorText(`Error: Chart values file not usable … chart app has no values file "values-absent.yaml".`),
			},
			{
				Config:      config(httpChart(">=3", "")),
				ExpectError: errorText(`Error: No matching chart version … chart "app" has no version matching ">=3" (newest: 1.2.0).`),
			},
			{
				// The registry login comes from the provider's registries.
				Config: config(fmt.Sprintf(`{ repository = %q, name = "app", version = "2.x", ca_file = %q }`, registry.URL, registry.CAFile)),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(tmpl, tfjsonpath.New("chart_version"), knownvalue.StringRegexp(regexp.MustCompile(`^2\.0\.0\+[0-9a-f]{12}$`))),
					statecheck.ExpectKnownValue(tmpl, message, objectField("hello", "data", "message")),
				},
			},
			{
				Config:      config(fmt.Sprintf(`{ repository = %q, name = "app", ca_file = %q, username = "bot", password = "wrong" }`, registry.URL, registry.CAFile)),
				ExpectError: errorText(`Error: Chart repository failed … check the registry credentials`),
			},
		},
	})
	// Every Terraform command runs a provider process of its own; the index
	// is downloaded when new (first step) or changed (second step) only,
	// and revalidated from the disk cache otherwise.
	if n := repo.IndexDownloads.Load(); n != 2 {
		t.Errorf("index downloaded %d times, want 2", n)
	}
}

// TestTemplate_registryLogins: the provider's registries give a login
// command whose token the registry rotates between two plans, and the
// password of a Helm repository by URL prefix; logins that are not one
// of the three kinds are refused at plan with their path.
func TestTemplate_registryLogins(t *testing.T) {
	t.Parallel()
	registry := testrepo.NewOCI(t)
	registry.Push(t, testChart(t, "2.0.0"), nil)
	repo := testrepo.NewHTTP(t)
	repo.Add(t, testChart(t, "1.0.0"), nil)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	setToken := func(token string) {
		if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	setToken(testrepo.Password)
	cacheDir := t.TempDir()
	config := func(logins, chart string) string {
		return fmt.Sprintf(`
provider "helmrelease" {
  cache_dir  = %q
  registries = %s
}

data "helmrelease_template" "t" {
  name      = "web"
  namespace = "apps"
  chart     = %s
}
`, cacheDir, logins, chart)
	}
	execLogin := fmt.Sprintf(`[{
    url      = %q
    username = %q
    exec     = { command = "sh", args = ["-c", "cat \"$TOKEN_FILE\""], env = { TOKEN_FILE = %q } }
  }]`, strings.TrimSuffix(registry.URL, "/charts"), testrepo.Username, tokenFile)
	ociChart := fmt.Sprintf(`{ repository = %q, name = "app", version = "2.x", ca_file = %q }`, registry.URL, registry.CAFile)
	version := statecheck.ExpectKnownValue(tmpl, tfjsonpath.New("chart_version"), knownvalue.StringRegexp(regexp.MustCompile(`^2\.0\.0\+[0-9a-f]{12}$`)))

	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config(execLogin, ociChart), ConfigStateChecks: []statecheck.StateCheck{version}},
			{
				// The token expires: the registry takes only a new one, which
				// the command now prints.
				PreConfig: func() {
					registry.Rotate(t, "rotated-Tk2")
					setToken("rotated-Tk2")
				},
				Config:            config(execLogin, ociChart),
				ConfigStateChecks: []statecheck.StateCheck{version},
			},
			{
				// A command that fails is named with what it said.
				PreConfig:   func() { setToken("") },
				Config:      config(execLogin, ociChart),
				ExpectError: errorText(`Error: Repository login failed … login command sh printed no token. Run the exec command`),
			},
			{
				Config:      config(fmt.Sprintf(`[{ url = %q, username = "bot" }]`, repo.URL), ociChart),
				ExpectError: errorText(`Registry login without credentials … sets no password, exec or docker_config.`),
			},
			{
				Config:      config(fmt.Sprintf(`[{ url = %q, docker_config = true }]`, repo.URL), ociChart),
				ExpectError: errorText(`Docker configuration for a Helm repository`),
			},
			{
				Config:      config(`[{ url = "oci://registry.example.com", password = "p4ssword" }]`, ociChart),
				ExpectError: errorText(`Registry login without a user name`),
			},
			{
				// A Helm repository's login, by URL prefix (last: the test's
				// destroy runs with a valid configuration).
				Config: config(fmt.Sprintf(`[{ url = %q, username = %q, password = %q }]`, repo.URL, testrepo.Username, testrepo.Password),
					fmt.Sprintf(`{ repository = %q, name = "app", version = "1.0.0" }`, repo.URL)),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(tmpl, tfjsonpath.New("chart_version"), knownvalue.StringExact("1.0.0")),
				},
			},
		},
	})
}

// TestTemplate_git renders a chart from a Git repository on loopback, over
// SSH with the data source's sensitive key. No cluster.
func TestTemplate_git(t *testing.T) {
	t.Parallel()
	files := testrepo.ChartFiles(t, testChartDir(t), "charts/web")
	git := testrepo.NewGit(t)
	commit := git.Commit(t, "charts", "main", files)
	config := func(chart string) string {
		return fmt.Sprintf(`
provider "helmrelease" {
  cache_dir = %q
}

data "helmrelease_template" "t" {
  name      = "web"
  namespace = "apps"
  chart     = %s
}
`, t.TempDir(), chart)
	}
	message := resourceAt("v1/ConfigMap/apps/web-config")
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config(fmt.Sprintf(`{
    name               = "charts/web"
    reconcile_strategy = "Revision"
    git = {
      url         = %q
      ref         = { branch = "main" }
      private_key = %q
      known_hosts = %q
    }
  }`, git.SSHURL("charts"), git.Identity, git.KnownHosts)),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(tmpl, tfjsonpath.New("chart_version"), knownvalue.StringExact("1.2.3+"+commit[:12])),
					statecheck.ExpectKnownValue(tmpl, message, objectField("hello", "data", "message")),
				},
			},
		},
	})
}

// TestTemplate_plainHTTP: a registry serving plain HTTP, as kind's local
// registry does, is refused with what to set; chart.plain_http, or the
// provider's registries entry for its host (with no login), reaches it;
// plain_http on a Helm repository's entry is refused at plan.
func TestTemplate_plainHTTP(t *testing.T) {
	t.Parallel()
	registry := testrepo.NewOCIPlainHTTP(t)
	registry.Push(t, testChart(t, "2.0.0"), nil)
	host := strings.TrimSuffix(registry.URL, "/charts")
	cacheDir := t.TempDir()
	config := func(logins, chart string) string {
		return fmt.Sprintf(`
provider "helmrelease" {
  cache_dir  = %q
  registries = %s
}

data "helmrelease_template" "t" {
  name      = "web"
  namespace = "apps"
  chart     = %s
}
`, cacheDir, logins, chart)
	}
	version := statecheck.ExpectKnownValue(tmpl, tfjsonpath.New("chart_version"), knownvalue.StringRegexp(regexp.MustCompile(`^2\.0\.0\+[0-9a-f]{12}$`)))
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      config(`[]`, fmt.Sprintf(`{ repository = %q, name = "app" }`, registry.URL)),
				ExpectError: errorText(`server gave HTTP response to HTTPS client (the registry serves plain HTTP: set chart.plain_http = true, or plain_http = true on the provider's registries entry for this host)`),
			},
			{
				Config:            config(`[]`, fmt.Sprintf(`{ repository = %q, name = "app", plain_http = true }`, registry.URL)),
				ConfigStateChecks: []statecheck.StateCheck{version},
			},
			{
				Config:      config(`[{ url = "https://charts.example.com", plain_http = true }]`, fmt.Sprintf(`{ repository = %q, name = "app", plain_http = true }`, registry.URL)),
				ExpectError: errorText(`Error: plain_http for a Helm repository`),
			},
			{
				Config:            config(fmt.Sprintf(`[{ url = %q, plain_http = true }]`, host), fmt.Sprintf(`{ repository = %q, name = "app" }`, registry.URL)),
				ConfigStateChecks: []statecheck.StateCheck{version},
			},
		},
	})
}
