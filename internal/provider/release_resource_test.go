package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/postrender"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// TestAccRelease_lifecycle: create, no-op plan, a values change planned as
// the one object it changes, a chart version change, a post-renderer
// change, destroy.
func TestAccRelease_lifecycle(t *testing.T) {
	ns := testNamespace(t)
	repo := testrepo.NewHTTP(t)
	repo.Add(t, testrepo.LoadChart(t, webChartDir(t), "1.0.0"), nil)
	repo.Add(t, testrepo.LoadChart(t, webChartDir(t), "1.1.0"), nil)
	config := func(version, message, postRenderers string) string {
		return providerConfig() + fmt.Sprintf(`
resource "helmrelease_release" "r" {
  name      = "web"
  namespace = %q
  chart = {
    repository = %q
    name       = "web"
    version    = %q
    username   = %q
    password   = %q
  }
  values  = { message = %q, replicas = 2 }
  install = { create_namespace = true }
  %s
}
`, ns, repo.URL, version, testrepo.Username, testrepo.Password, message, postRenderers)
	}
	configMap := ns + "/web-config"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns, "web"),
		Steps: []resource.TestStep{
			{
				Config: config("1.0.x", "one", ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionCreate),
					plancheck.ExpectKnownValue(rel, tfjsonpath.New("chart_version"), knownvalue.StringExact("1.0.0")),
					plancheck.ExpectKnownValue(rel, tfjsonpath.New("resources").AtMapKey("v1/ConfigMap/"+configMap), objectField("one", "data", "message")),
					plancheck.ExpectKnownValue(rel, tfjsonpath.New("resources").AtMapKey("apps/v1/Deployment/"+ns+"/web"), objectField(2, "spec", "replicas")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("id"), knownvalue.StringExact(ns+"/web")),
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("release_name"), knownvalue.StringExact("web")),
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("app_version"), knownvalue.StringExact("2.0.0")),
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("ready"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("reason"), knownvalue.StringExact("InstallSucceeded")),
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("history"), knownvalue.ListSizeExact(1)),
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("resources"), knownvalue.MapSizeExact(3)),
				},
				Check: func(*terraform.State) error {
					if got := configMapData(t, ns, "web-config", "message"); got != "one" {
						return fmt.Errorf("message in the cluster %q", got)
					}
					return nil
				},
			},
			{
				Config: config("1.0.x", "one", ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
			},
			{
				Config: config("1.0.x", "two", ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionUpdate),
					expectChangedObjects(rel, "v1/ConfigMap/"+configMap),
					plancheck.ExpectKnownValue(rel, tfjsonpath.New("resources").AtMapKey("v1/ConfigMap/"+configMap), objectField("two", "data", "message")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("reason"), knownvalue.StringExact("UpgradeSucceeded")),
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("history"), knownvalue.ListSizeExact(2)),
				},
				Check: func(*terraform.State) error {
					if got := configMapData(t, ns, "web-config", "message"); got != "two" {
						return fmt.Errorf("message in the cluster %q", got)
					}
					return nil
				},
			},
			{
				Config: config("1.1.x", "two", ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(rel, tfjsonpath.New("chart_version"), knownvalue.StringExact("1.1.0")),
					expectChangedObjects(rel),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("last_applied_revision"), knownvalue.StringExact("1.1.0")),
				},
			},
			{
				Config: config("1.1.x", "two", `post_renderers = [{ kustomize = { patches = [{
    target = { kind = "ConfigMap" }
    patch  = jsonencode([{ op = "add", path = "/metadata/labels", value = { tier = "web" } }])
  }] } }]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectChangedObjects(rel, "v1/ConfigMap/"+configMap),
					plancheck.ExpectKnownValue(rel, tfjsonpath.New("resources").AtMapKey("v1/ConfigMap/"+configMap), all(
						objectField("web", "metadata", "labels", "tier"),
						objectField("web", "metadata", "labels", postrender.OriginNameLabel),
					)),
				}},
			},
		},
	})
}
