package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// TestAccRelease_plannedHooksAndCRDs: a plan that runs a Helm action shows
// the hooks it runs and the CRDs its CRD policy writes, beside resources;
// a refresh clears them, so the plan after the apply is empty.
func TestAccRelease_plannedHooksAndCRDs(t *testing.T) {
	ns := testNamespace(t)
	const web, app = "helmrelease_release.web", "helmrelease_release.app"
	config := func(message, appCRDs string) string {
		return providerConfig() + fmt.Sprintf(`
resource "helmrelease_release" "web" {
  name      = "web"
  namespace = %[1]q
  chart     = { name = %[2]q }
  install   = { create_namespace = true }
  values    = { message = %[4]q }
}

resource "helmrelease_release" "app" {
  name      = "app"
  namespace = %[1]q
  chart     = { name = %[3]q }
  install   = { crds = "CreateReplace" }
  upgrade   = { crds = %[5]q }
  values    = { message = %[4]q }
  depends_on = [helmrelease_release.web]
}
`, ns, webChartDir(t), testChartDir(t), message, appCRDs)
	}
	hook := func(kind, name, when string) knownvalue.Check {
		return knownvalue.StringRegexp(regexp.MustCompile(`(?s)kind: ` + kind + `\n.*helm.sh/hook: ` + regexp.QuoteMeta(when) + `\n.*name: ` + name + `\n`))
	}
	webHooks := func(when string) knownvalue.Check {
		return knownvalue.MapExact(map[string]knownvalue.Check{
			"batch/v1/Job/" + ns + "/web-hook": hook("Job", "web-hook", when),
			"v1/Pod/" + ns + "/web-test":       hook("Pod", "web-test", "test"),
		})
	}
	crd := knownvalue.MapExact(map[string]knownvalue.Check{
		"apiextensions.k8s.io/v1/CustomResourceDefinition/widgets.example.com": knownvalue.StringRegexp(regexp.MustCompile(`(?s)kind: CustomResourceDefinition\n.*helmrelease.terraform.io/name: app\n`)),
	})
	none := knownvalue.MapExact(map[string]knownvalue.Check{})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config("one", "Skip"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(web, tfjsonpath.New("planned_hooks"), webHooks("pre-install,pre-upgrade")),
					plancheck.ExpectKnownValue(web, tfjsonpath.New("planned_crds"), none),
					plancheck.ExpectKnownValue(app, tfjsonpath.New("planned_hooks"), none),
					plancheck.ExpectKnownValue(app, tfjsonpath.New("planned_crds"), crd),
				}},
				// As planned until a refresh.
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(app, tfjsonpath.New("planned_crds"), crd),
				},
			},
			{
				// An upgrade: upgrade.crds Skip writes none.
				Config: config("two", "Skip"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					priorState{addr: app, path: []string{"planned_crds"}, check: knownvalue.Null()},
					plancheck.ExpectKnownValue(web, tfjsonpath.New("planned_hooks"), webHooks("pre-install,pre-upgrade")),
					plancheck.ExpectKnownValue(app, tfjsonpath.New("planned_crds"), none),
				}},
			},
			{
				Config: config("three", "CreateReplace"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(app, tfjsonpath.New("planned_crds"), crd),
				}},
			},
		},
	})
}
