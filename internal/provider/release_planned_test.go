package provider

import (
	"fmt"
	"os"
	"path/filepath"
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
	t.Parallel()
	installsAppChart(t)
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

// TestAccRelease_sharedCRDsInOneApply: two releases of a chart that
// carries a CRD, planned together before it exists, both list it; the
// first apply creates it, and the second release's apply, whose plan
// Terraform makes again once the CRD exists, plans the same (it was
// "Provider produced inconsistent final plan": the CRD had vanished from
// planned_crds).
func TestAccRelease_sharedCRDsInOneApply(t *testing.T) {
	t.Parallel()
	ns := testNamespace(t)
	group := ns + ".example.com" // a CRD no other test makes
	chart := t.TempDir()
	for name, content := range map[string]string{
		"Chart.yaml":        "apiVersion: v2\nname: gadgets\nversion: 1.0.0\n",
		"crds/gadgets.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: gadgets." + group + "\nspec:\n  group: " + group + "\n  names: {kind: Gadget, plural: gadgets}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
	} {
		if err := os.MkdirAll(filepath.Join(chart, filepath.Dir(name)), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(chart, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	crd := "apiextensions.k8s.io/v1/CustomResourceDefinition/gadgets." + group
	listed := knownvalue.MapExact(map[string]knownvalue.Check{crd: knownvalue.StringRegexp(regexp.MustCompile(`kind: CustomResourceDefinition`))})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: providerConfig() + fmt.Sprintf(`
resource "helmrelease_release" "first" {
  name      = "first"
  namespace = %[1]q
  chart     = { name = %[2]q }
  install   = { create_namespace = true }
}

resource "helmrelease_release" "second" {
  name       = "second"
  namespace  = %[1]q
  chart      = { name = %[2]q }
  depends_on = [helmrelease_release.first]
}
`, ns, chart),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectKnownValue("helmrelease_release.first", tfjsonpath.New("planned_crds"), listed),
				plancheck.ExpectKnownValue("helmrelease_release.second", tfjsonpath.New("planned_crds"), listed),
			}},
		}},
	})
}
