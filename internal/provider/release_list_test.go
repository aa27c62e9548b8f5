package provider

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/querycheck"
	"github.com/hashicorp/terraform-plugin-testing/querycheck/queryfilter"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// testAccReleaseQuery (TestAccNewerTerraform): `terraform query` lists the releases of a
// namespace with their identity and a display name, those of other tools
// included unless asked otherwise, filtered by label selector; with the
// resource, the release as an import would adopt it, its secret-looking
// values apart in sensitive_values.
func testAccReleaseQuery(t *testing.T) {
	ns := testNamespace(t)
	query := func(config string) string {
		// The provider block is the configuration's (step 1).
		return fmt.Sprintf(`
list "helmrelease_release" "found" {
  provider         = helmrelease
  include_resource = true
  config {
    namespace = %q
    %s
  }
}
`, ns, config)
	}
	byName := func(name string) queryfilter.QueryFilter {
		return queryfilter.ByResourceIdentity(map[string]knownvalue.Check{"cluster": knownvalue.Null(), "namespace": knownvalue.StringExact(ns), "name": knownvalue.StringExact(name)})
	}
	const found = "helmrelease_release.found"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{
				// A release of this provider's, and one the Helm CLI made.
				PreConfig: func() {
					t.Cleanup(func() { _, _ = helmCLI(t, ns).Uninstall("cli", helm.UninstallOptions{Timeout: time.Minute}) })
					helmInstall(t, ns, "cli", map[string]any{"message": "from the CLI", "password": "list-s3cret", "env": []any{map[string]any{"name": "DB_PASSWORD", "value": "env-s3cret"}}})
				},
				// The test cluster is named "same" too, for the last step.
				Config: namedClusterConfig(t, ns, `values = { message = "from terraform" }`),
			},
			{
				Query:  true,
				Config: query(""),
				QueryResultChecks: []querycheck.QueryResultCheck{
					querycheck.ExpectLength(found, 2),
					querycheck.ExpectIdentity(found, map[string]knownvalue.Check{"cluster": knownvalue.Null(), "namespace": knownvalue.StringExact(ns), "name": knownvalue.StringExact("cli")}),
					querycheck.ExpectIdentity(found, map[string]knownvalue.Check{"cluster": knownvalue.Null(), "namespace": knownvalue.StringExact(ns), "name": knownvalue.StringExact("web")}),
					querycheck.ExpectResourceDisplayName(found, byName("cli"), knownvalue.StringRegexp(regexp.MustCompile(`^`+ns+`/cli \(web-1\.0\.0, deployed\)$`))),
					querycheck.ExpectResourceKnownValues(found, byName("cli"), []querycheck.KnownValueCheck{
						{Path: tfjsonpath.New("name"), KnownValue: knownvalue.StringExact("cli")},
						// password and the env list naming DB_PASSWORD went to
						// sensitive_values.
						{Path: tfjsonpath.New("values"), KnownValue: knownvalue.MapExact(map[string]knownvalue.Check{"message": knownvalue.StringExact("from the CLI")})},
						{Path: tfjsonpath.New("status").AtMapKey("reason"), KnownValue: knownvalue.StringExact(reconcile.ReasonAdopted)},
					}),
					querycheck.ExpectResourceKnownValues(found, byName("web"), []querycheck.KnownValueCheck{
						// Named after the helmrelease_release that made it.
						{Path: tfjsonpath.New("name"), KnownValue: knownvalue.StringExact("web")},
						{Path: tfjsonpath.New("values").AtMapKey("message"), KnownValue: knownvalue.StringExact("from terraform")},
					}),
				},
			},
			{
				Query:             true,
				Config:            query(`include_other_tools = false`),
				QueryResultChecks: []querycheck.QueryResultCheck{querycheck.ExpectLength(found, 1), querycheck.ExpectIdentity(found, map[string]knownvalue.Check{"cluster": knownvalue.Null(), "namespace": knownvalue.StringExact(ns), "name": knownvalue.StringExact("web")})},
			},
			{
				Query:             true,
				Config:            query(`label_selector = "name=cli"`),
				QueryResultChecks: []querycheck.QueryResultCheck{querycheck.ExpectLength(found, 1), querycheck.ExpectIdentity(found, map[string]knownvalue.Check{"cluster": knownvalue.Null(), "namespace": knownvalue.StringExact(ns), "name": knownvalue.StringExact("cli")})},
			},
			{
				// The same cluster by its name: the results carry it.
				Query:  true,
				Config: query(`label_selector = "name=cli"` + "\n    cluster = \"same\""),
				QueryResultChecks: []querycheck.QueryResultCheck{
					querycheck.ExpectLength(found, 1),
					querycheck.ExpectIdentity(found, map[string]knownvalue.Check{"cluster": knownvalue.StringExact("same"), "namespace": knownvalue.StringExact(ns), "name": knownvalue.StringExact("cli")}),
					querycheck.ExpectResourceDisplayName(found, queryfilter.ByResourceIdentity(map[string]knownvalue.Check{"cluster": knownvalue.StringExact("same"), "namespace": knownvalue.StringExact(ns), "name": knownvalue.StringExact("cli")}),
						knownvalue.StringRegexp(regexp.MustCompile(`^same:`+ns+`/cli \(web-1\.0\.0, deployed\)$`))),
					querycheck.ExpectResourceKnownValues(found, queryfilter.ByResourceIdentity(map[string]knownvalue.Check{"cluster": knownvalue.StringExact("same"), "namespace": knownvalue.StringExact(ns), "name": knownvalue.StringExact("cli")}), []querycheck.KnownValueCheck{
						{Path: tfjsonpath.New("cluster"), KnownValue: knownvalue.StringExact("same")},
						{Path: tfjsonpath.New("id"), KnownValue: knownvalue.StringExact("same:" + ns + "/cli")},
					}),
				},
			},
		},
	})
}
