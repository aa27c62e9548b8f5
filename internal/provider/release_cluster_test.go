package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// webConfig is a release of the web chart in namespace ns.
func webConfig(t *testing.T, ns, body string) string {
	return providerConfig() + resourceBlock(t, ns, body)
}

// resourceBlock is the resource of webConfig alone.
func resourceBlock(t *testing.T, ns string, body ...string) string {
	return resourceBlockWithChart(ns, fmt.Sprintf("{ name = %q }", webChartDir(t)), body...)
}

// resourceBlockWithChart is the resource of webConfig with another chart.
func resourceBlockWithChart(ns, chart string, body ...string) string {
	return fmt.Sprintf(`
resource "helmrelease_release" "r" {
  name      = "web"
  namespace = %q
  chart     = %s
  install   = { create_namespace = true }
  %s
}
`, ns, chart, strings.Join(body, "\n"))
}

// TestAccRelease_outOfBand: a manual helm upgrade is detected by digest,
// shown in the plan as the objects it changed, and upgraded back.
func TestAccRelease_outOfBand(t *testing.T) {
	t.Parallel() // namespaced objects of its own namespace only; no environment of its own
	ns := testNamespace(t)
	configMap := "v1/ConfigMap/" + ns + "/web-config"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{Config: webConfig(t, ns, `values = { message = "terraform" }`)},
			{
				PreConfig: func() { helmUpgrade(t, ns, "web", map[string]any{"message": "manual"}) },
				Config:    webConfig(t, ns, `values = { message = "terraform" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionUpdate),
					expectPriorState(knownvalue.StringExact("Unmanaged"), "status", "reason"),
					// The manual upgrade lost the origin labels too.
					expectChangedObjects(configMap, "apps/v1/Deployment/"+ns+"/web", "v1/Secret/"+ns+"/web-secret"),
					plancheck.ExpectKnownValue(rel, tfjsonpath.New("resources").AtMapKey(configMap), objectField("terraform", "data", "message")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("ready"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("history").AtSliceIndex(0).AtMapKey("version"), knownvalue.Int64Exact(3)),
				},
				Check: func(*terraform.State) error {
					if got := configMapMessage(t, ns); got != "terraform" {
						return fmt.Errorf("message %q after the upgrade back", got)
					}
					return nil
				},
			},
		},
	})
}

// TestAccRelease_import: a release installed with Helm is imported with its
// chart, version and values, those under a key that names a secret in
// sensitive_values; the next plan changes no object; a values change then
// upgrades it. ImportStateVerify checks that an import of a release this
// resource made recovers the same state.
func TestAccRelease_import(t *testing.T) {
	t.Parallel() // namespaced objects of its own namespace only; no environment of its own
	ns := testNamespace(t)
	configMap := "v1/ConfigMap/" + ns + "/web-config"
	// The release was made from the chart's version alone: adopting it
	// without an upgrade takes the ChartVersion strategy (the default for
	// a local chart, Revision, records the content digest with an upgrade).
	config := func(body string) string {
		return providerConfig() + resourceBlockWithChart(ns, fmt.Sprintf(`{ name = %q, reconcile_strategy = "ChartVersion" }`, webChartDir(t)), body)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					helmInstall(t, ns, "web", map[string]any{"message": "helm", "auth": map[string]any{"password": "hunter22", "user": "web"}})
				},
				Config:             config(`values = { message = "helm" }`),
				ResourceName:       rel,
				ImportState:        true,
				ImportStateId:      ns + "/web",
				ImportStatePersist: true,
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					if len(states) != 1 {
						return fmt.Errorf("%d states imported", len(states))
					}
					a := states[0].Attributes
					for k, want := range map[string]string{
						"name": "web", "namespace": ns, "release_name": "web", "target_namespace": ns,
						"chart.name": "web", "chart.version": "1.0.0", "chart_version": "1.0.0", "values.message": "helm",
						"status.ready": "true", "status.reason": reconcile.ReasonAdopted,
						"sensitive_values": "auth:\n  password: hunter22\n  user: web\n",
					} {
						if a[k] != want {
							return fmt.Errorf("imported %s = %q, want %q", k, a[k], want)
						}
					}
					for k, v := range a {
						if strings.HasPrefix(k, "values.") && k != "values.message" && k != "values.%" {
							return fmt.Errorf("imported %s = %q: values under a secret's key left in values", k, v)
						}
					}
					return nil
				},
			},
			{
				Config: config(`values = { message = "helm" }
  sensitive_values = yamlencode({ auth = { password = "hunter22", user = "web" } })`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					// chart.name is a path in the configuration: an update of
					// the attributes, without a Helm action.
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionUpdate),
					expectChangedObjects(),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("history"), knownvalue.ListSizeExact(1)),
				},
			},
			{
				Config: config(`values = { message = "terraform" }
  sensitive_values = yamlencode({ auth = { password = "hunter22", user = "web" } })`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectChangedObjects(configMap, "apps/v1/Deployment/"+ns+"/web", "v1/Secret/"+ns+"/web-secret"),
				}},
			},
			{
				// The default strategy: the revision carries the content
				// digest, an upgrade that changes no object.
				Config: webConfig(t, ns, `values = { message = "terraform" }
  sensitive_values = yamlencode({ auth = { password = "hunter22", user = "web" } })`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(rel, tfjsonpath.New("status")),
					expectChangedObjects(),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("chart_version"), knownvalue.StringRegexp(localRevision("1.0.0"))),
				},
			},
			{
				ResourceName:      rel,
				ImportState:       true,
				ImportStateVerify: true,
				// An imported resource hashes Secret values with a key of
				// its own.
				// sensitive_values: the same values, written by yamlencode.
				ImportStateVerifyIgnore: []string{"chart", "chart_digest", "install", "status", "planned_action", "planned_hooks", "planned_crds", "sensitive_values", "resources.v1/Secret/" + ns + "/web-secret"},
			},
		},
	})
}

// TestAccRelease_conflicts: a second resource claiming a release name in
// use is refused at plan; the target namespace changing replaces the
// release; a long name is shortened as Helm requires.
func TestAccRelease_conflicts(t *testing.T) {
	t.Parallel() // namespaced objects of its own namespace only; no environment of its own
	ns := testNamespace(t)
	second := func(releaseName string) string {
		return fmt.Sprintf(`
resource "helmrelease_release" "other" {
  name         = "other"
  namespace    = %q
  release_name = %q
  chart        = { name = %q }
}
`, ns, releaseName, webChartDir(t))
	}
	long := "a-very-long-release-object-name-that-does-not-fit-in-helm"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{Config: webConfig(t, ns, "")},
			{
				// Planned with a warning (a replacement is planned alike), refused at apply.
				Config:      webConfig(t, ns, "") + second("web"),
				ExpectError: errorText(`Error: Release failed with helmrelease_release.other … release ` + ns + `/web.v1 is managed by helmrelease_release ` + ns + `/web; give this resource another release_name, or remove the other resource first Two helmrelease_release resources cannot share a release`),
			},
			{
				// The refused resource is not in the state: nothing to destroy,
				// and the first release is untouched.
				Config:           webConfig(t, ns, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				Config: webConfig(t, ns, `target_namespace = "`+ns+`-moved"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectKnownValue(rel, tfjsonpath.New("release_name"), knownvalue.StringExact(ns+"-moved-web")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("resources").AtMapKey("apps/v1/Deployment/"+ns+"-moved/"+ns+"-moved-web"), objectField(ns+"-moved", "metadata", "namespace")),
				},
				// The old release was uninstalled first.
				Check: releaseGone(t, ns),
			},
			{
				// A name too long for Helm: 40 characters, '-', 12 hex digits.
				Config: providerConfig() + fmt.Sprintf(`
resource "helmrelease_release" "r" {
  name             = %q
  namespace        = %q
  target_namespace = "%s-moved"
  chart            = { name = %q }
}
`, long, ns, ns, webChartDir(t)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectKnownValue(rel, tfjsonpath.New("release_name"), knownvalue.StringExact(reconcile.ReleaseName("", ns+"-moved", long))),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("release_name"), knownvalue.StringRegexp(regexp.MustCompile(`^rel-conflicts-moved-a-very-long-release--[0-9a-f]{12}$`))),
				},
			},
		},
	})
}

// TestAccRelease_renamed: a new name with the same release name replaces
// the resource; the release it made is its own to replace, not a conflict.
func TestAccRelease_renamed(t *testing.T) {
	t.Parallel() // namespaced objects of its own namespace only; no environment of its own
	ns := testNamespace(t)
	config := func(name string) string {
		return providerConfig() + fmt.Sprintf(`
resource "helmrelease_release" "r" {
  name         = %q
  namespace    = %q
  release_name = "web"
  chart        = { name = %q }
  install      = { create_namespace = true }
}
`, name, ns, webChartDir(t))
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{Config: config("web")},
			{
				Config: config("site"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("resources").AtMapKey("v1/ConfigMap/"+ns+"/web-config"), objectField("site", "metadata", "labels", "helmrelease.terraform.io/name")),
				},
			},
		},
	})
}

// TestAccRelease_neverOwned: a resource refused on another's release (here
// created suspended, then resumed) keeps no revision; destroying it leaves
// the other's release installed.
func TestAccRelease_neverOwned(t *testing.T) {
	t.Parallel() // namespaced objects of its own namespace only; no environment of its own
	ns := testNamespace(t)
	other := func(suspend bool) string {
		return fmt.Sprintf(`
resource "helmrelease_release" "other" {
  name         = "other"
  namespace    = %q
  release_name = "web"
  chart        = { name = %q }
  suspend      = %t
}
`, ns, webChartDir(t), suspend)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{Config: webConfig(t, ns, `values = { message = "mine" }`)},
			{Config: webConfig(t, ns, `values = { message = "mine" }`) + other(true)},
			{
				Config:      webConfig(t, ns, `values = { message = "mine" }`) + other(false),
				ExpectError: errorText(`Error: Release failed with helmrelease_release.other … is managed by helmrelease_release ` + ns + `/web`),
			},
			{
				// other is destroyed: the release of r stays.
				Config:           webConfig(t, ns, `values = { message = "mine" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("helmrelease_release.other", plancheck.ResourceActionDestroy)}},
				Check: func(*terraform.State) error {
					if got := configMapMessage(t, ns); got != "mine" {
						return fmt.Errorf("message %q after destroying the other resource", got)
					}
					return nil
				},
			},
			{
				Config:           webConfig(t, ns, `values = { message = "mine" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}
