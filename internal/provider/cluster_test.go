package provider

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

func TestParseReleaseID(t *testing.T) {
	for _, tc := range []struct {
		id                       string
		cluster, namespace, name string
		ok                       bool
	}{
		{id: "apps/web", namespace: "apps", name: "web", ok: true},
		{id: "east:apps/web", cluster: "east", namespace: "apps", name: "web", ok: true},
		{id: "prod-eu_1.a:apps/web", cluster: "prod-eu_1.a", namespace: "apps", name: "web", ok: true},
		{id: "apps"},
		{id: "apps/"},
		{id: "/web"},
		{id: "apps/web/x"},
		{id: ":apps/web"},
		{id: "-east:apps/web"},
		{id: "east:apps"},
		{id: "a:b:apps/web"},
	} {
		cluster, namespace, name, ok := parseReleaseID(tc.id)
		if ok != tc.ok || cluster != tc.cluster || namespace != tc.namespace || name != tc.name {
			t.Errorf("parseReleaseID(%q) = %q, %q, %q, %v; want %q, %q, %q, %v", tc.id, cluster, namespace, name, ok, tc.cluster, tc.namespace, tc.name, tc.ok)
		}
		if tc.ok {
			if back := releaseID(cluster, namespace, name); back != tc.id {
				t.Errorf("releaseID(%q, %q, %q) = %q, want %q", cluster, namespace, name, back, tc.id)
			}
		}
	}
}

// TestProvider_namedClusters: what is wrong with named clusters is said at
// plan, on the attribute: a name that cannot start an ID, a cluster without
// any connection setting, conflicting settings, a name the provider does
// not configure; a named cluster whose settings are unknown until apply
// fails only what needs it.
func TestProvider_namedClusters(t *testing.T) {
	t.Parallel() // no cluster; KUBECONFIG is unset for the package (TestMain)
	chart := testChartDir(t)
	// Each config changes the input, so that the output is unknown at its plan.
	port := 0
	config := func(clusters, data string) string {
		port++
		return fmt.Sprintf(`
resource "terraform_data" "cluster" {
  input = "https://127.0.0.1:%d"
}
`, port) + fmt.Sprintf(`
provider "helmrelease" {
  clusters = %s
}

data "helmrelease_template" "t" {
  name  = "web"
  chart = { name = %q }
  %s
}
`, clusters, chart, data)
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      config(`{ "prod:eu" = { host = "https://127.0.0.1:1" } }`, ""),
				ExpectError: errorText(`must start with a letter or digit and hold only letters, digits, '-', '_' and '.', e.g. prod-eu`),
			},
			{
				Config:      config(`{ east = { insecure = true } }`, ""),
				ExpectError: errorText(`Error: Cluster without connection settings … clusters["east"] names no cluster`),
			},
			{
				Config:      config(`{ east = { config_path = "/a", kubeconfig = "apiVersion: v1" } }`, ""),
				ExpectError: errorText(`Attribute "clusters[\"east\"].kubeconfig" cannot be specified when "clusters[\"east\"].config_path" is specified`),
			},
			{
				Config:      config(`{ east = { host = "https://127.0.0.1:1", proxy_url = "ftp://proxy" } }`, ""),
				ExpectError: errorText(`The proxy URL at clusters["east"].proxy_url is not valid`),
			},
			{
				Config:      config(`{ east = { host = "https://127.0.0.1:1" } }`, `cluster = "west"`),
				ExpectError: errorText(`Error: Cluster not configured … helmrelease_template west:default/web cannot be used: the provider's clusters have no "west" (they are east).`),
			},
			{
				// Unknown until apply: rendering needs no cluster.
				Config: config(`{ east = { host = terraform_data.cluster.output, token = "unused" } }`, `cluster = "east"`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(tmpl, tfjsonpath.New("id"), knownvalue.StringExact("east:default/web")),
				},
			},
			{
				// values_from needs the cluster.
				Config:      config(`{ east = { host = terraform_data.cluster.output, token = "unused" } }`, `cluster = "east"`+"\n  values_from = [{ kind = \"ConfigMap\", name = \"base\" }]"),
				ExpectError: errorText(`This attribute needs the Kubernetes cluster, which cannot be used: cluster "east": the provider's settings of the cluster are not known until apply.`),
			},
		},
	})
}

// TestAccRelease_cluster: a release moved onto a named cluster (here the
// same API server under a name) is replaced, uninstalled before it is
// installed again; its ID carries the cluster, it imports by that ID, and
// a cluster the provider does not configure is refused at plan.
func TestAccRelease_cluster(t *testing.T) {
	t.Parallel() // namespaced objects of its own namespace only; no environment of its own
	ns := testNamespace(t)
	named := func(cluster string) string { return namedClusterConfig(t, ns, cluster) }
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{
				Config: named(""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("id"), knownvalue.StringExact(ns+"/web")),
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("cluster"), knownvalue.Null()),
				},
			},
			{
				Config: named(`cluster = "same"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectKnownValue(rel, tfjsonpath.New("id"), knownvalue.StringExact("same:"+ns+"/web")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("id"), knownvalue.StringExact("same:"+ns+"/web")),
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("history").AtSliceIndex(0).AtMapKey("version"), knownvalue.Int64Exact(1)),
				},
			},
			{
				Config:           named(`cluster = "same"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				ResourceName:      rel,
				ImportState:       true,
				ImportStateId:     "same:" + ns + "/web",
				ImportStateVerify: true,
				// An imported resource hashes Secret values with a key of its own.
				ImportStateVerifyIgnore: []string{"chart", "chart_digest", "install", "status", "planned_action", "planned_hooks", "planned_crds", "resources.v1/Secret/" + ns + "/web-secret"},
			},
			{
				Config:      named(`cluster = "other"`),
				ExpectError: errorText(`Error: Cluster not configured … helmrelease_release other:` + ns + `/web cannot be used: the provider's clusters have no "other" (they are same).`),
			},
		},
	})
}

// namedClusterConfig is the web release in ns with body, and a provider
// that names the test cluster "same" too.
func namedClusterConfig(t *testing.T, ns, body string) string {
	return fmt.Sprintf(`
provider "helmrelease" {
  kubernetes = { config_path = %[1]q }
  clusters   = { same = { config_path = %[1]q } }
}
`, testKubeconfig) + resourceBlock(t, ns, body)
}

// onlyNamedClusterConfig is namedClusterConfig with the default cluster
// unreachable: whatever works, worked on the named one.
func onlyNamedClusterConfig(t *testing.T, ns, body string) string {
	return fmt.Sprintf(`
provider "helmrelease" {
  kubernetes = { host = "https://127.0.0.1:1", token = "unused" }
  clusters   = { same = { config_path = %q } }
}
`, testKubeconfig) + resourceBlock(t, ns, body)
}

// testAccReleaseClusterIdentity (TestAccNewerTerraform): the identity of a release on a named
// cluster carries the cluster, and import blocks by that identity and by
// its ID adopt the release on that cluster.
func testAccReleaseClusterIdentity(t *testing.T) {
	ns := testNamespace(t)
	testIdentityImports(t, ns, onlyNamedClusterConfig(t, ns, `cluster = "same"`),
		map[string]knownvalue.Check{"cluster": knownvalue.StringExact("same"), "namespace": knownvalue.StringExact(ns), "name": knownvalue.StringExact("web")}, "same:"+ns+"/web")
}

// testAccActionForceOnNamedCluster (TestAccNewerTerraform): helmrelease_force names the release's
// cluster as the release does, and its request is seen by the release's
// next plan there.
func testAccActionForceOnNamedCluster(t *testing.T) {
	ns := testNamespace(t)
	release := onlyNamedClusterConfig(t, ns, `cluster = "same"`)
	trigger := strings.Replace(requestTrigger("force"), "  config {\n", "  config {\n    cluster   = helmrelease_release.r.cluster\n", 1)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{Config: release},
			{Config: release + trigger, ExpectNonEmptyPlan: true},
			{
				Config: release + trigger,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("history").AtSliceIndex(0).AtMapKey("version"), knownvalue.Int64Exact(2)),
				},
			},
		},
	})
}
