package provider

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// chartRepository is a Helm repository on loopback with basic auth.
func chartRepository(t *testing.T) *httptest.Server {
	t.Helper()
	const index = `apiVersion: v1
entries:
  web:
  - {apiVersion: v2, name: web, version: 1.2.3, appVersion: "4.5", digest: "abc123", urls: [charts/web-1.2.3.tgz]}
  - {apiVersion: v2, name: web, version: 1.3.0-rc.1, urls: [charts/web-1.3.0-rc.1.tgz]}
  - {apiVersion: v2, name: web, version: 1.1.0, appVersion: "4.4", urls: [charts/web-1.1.0.tgz]}
`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user, pass, ok := r.BasicAuth(); !ok || user != "bot" || pass != "s3cret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if r.URL.Path != "/index.yaml" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(index))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestChartDataSource(t *testing.T) {
	t.Parallel() // a repository of its own, no cluster, no environment of its own
	srv := chartRepository(t)
	const addr = "data.helmrelease_chart.c"
	config := func(version, password string) string {
		return fmt.Sprintf(`
provider "helmrelease" {
  cache_dir = %q
}

data "helmrelease_chart" "c" {
  repository = %q
  name       = "web"
  version    = %q
  username   = "bot"
  password   = %q
}
`, t.TempDir(), srv.URL, version, password)
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config("1.x", "s3cret"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("chart_version"), knownvalue.StringExact("1.2.3")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("app_version"), knownvalue.StringExact("4.5")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("chart_digest"), knownvalue.StringExact("abc123")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("pinned_version"), knownvalue.StringExact("1.2.3")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("urls"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("charts/web-1.2.3.tgz")})),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("versions"), knownvalue.ListExact([]knownvalue.Check{
						knownvalue.StringExact("1.3.0-rc.1"), knownvalue.StringExact("1.2.3"), knownvalue.StringExact("1.1.0"),
					})),
				},
			},
			{
				Config: config(">=1.3.0-0", "s3cret"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("chart_version"), knownvalue.StringExact("1.3.0-rc.1")),
				},
			},
			{
				Config:      config(">=2", "s3cret"),
				ExpectError: errorText(`Error: No matching chart version … repository ` + srv.URL + `: chart "web" has no version matching ">=2" (newest: 1.3.0-rc.1). Change the version constraint`),
			},
			{
				Config:      config("*", "wrong"),
				ExpectError: errorText(`Error: Chart repository failed … repository ` + srv.URL + `: fetching the index answered 401 Unauthorized: check the repository credentials (chart.username, chart.password).`),
			},
			{
				Config:      config("not a constraint", "s3cret"),
				ExpectError: errorText(`Error: Invalid version constraint … Use a semver constraint`),
			},
			// Last, a valid configuration, which the test's destroy uses.
			{
				Config: config("1.1.0", "s3cret"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("chart_version"), knownvalue.StringExact("1.1.0")),
				},
			},
		},
	})
}

// TestChartDataSource_oci: tags resolved against the constraint, the
// manifest digest in the version, and a tag pushed again with other content
// seen as another version.
func TestChartDataSource_oci(t *testing.T) {
	t.Parallel() // a repository of its own, no cluster, no environment of its own
	registry := testrepo.NewOCI(t)
	registry.Push(t, testChart(t, "1.0.0"), nil)
	registry.Push(t, testChart(t, "1.1.0"), nil)
	const addr = "data.helmrelease_chart.c"
	config := fmt.Sprintf(`
provider "helmrelease" {
  cache_dir = %q
}

data "helmrelease_chart" "c" {
  repository = %q
  name       = "app"
  version    = "~1.1"
  username   = %q
  password   = %q
  ca_file    = %q
}
`, t.TempDir(), registry.URL, testrepo.Username, testrepo.Password, registry.CAFile)
	var first string
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("chart_version"), knownvalue.StringFunc(func(v string) error {
						first = v
						if !regexp.MustCompile(`^1\.1\.0\+[0-9a-f]{12}$`).MatchString(v) {
							return fmt.Errorf("version %s, want 1.1.0+<12 hex>", v)
						}
						return nil
					})),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("chart_digest"), knownvalue.StringRegexp(regexp.MustCompile(`^sha256:[0-9a-f]{64}$`))),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("pinned_version"), knownvalue.StringRegexp(regexp.MustCompile(`^1\.1\.0@sha256:[0-9a-f]{64}$`))),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("versions"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("1.1.0"), knownvalue.StringExact("1.0.0")})),
				},
			},
			{
				PreConfig: func() {
					c := testChart(t, "1.1.0")
					c.Metadata.Description = "pushed again"
					registry.Push(t, c, nil)
				},
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("chart_version"), knownvalue.StringFunc(func(v string) error {
						if !strings.HasPrefix(v, "1.1.0+") || v == first {
							return fmt.Errorf("version %s after the tag was pushed again (was %s)", v, first)
						}
						return nil
					})),
				},
			},
		},
	})
}
