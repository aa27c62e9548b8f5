package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// TestAccRelease_healthChecks: a custom resource no controller reconciles
// is ready at once for the legacy waiter; with a health check the install
// waits for its expression, fails naming it when it never holds (the
// resource tainted), and succeeds once the object satisfies it.
func TestAccRelease_healthChecks(t *testing.T) {
	t.Parallel()
	installsAppChart(t)
	ns := testNamespace(t)
	config := func(message, phase, wait string) string {
		return providerConfig() + fmt.Sprintf(`
resource "helmrelease_release" "r" {
  name      = "app"
  namespace = %[1]q
  chart     = { name = %[2]q }
  install   = { create_namespace = true, timeout = "2m" }
  # A failed upgrade is rolled back before the next one: not waited for,
  # the rolled-back Widget is not Ready either.
  rollback  = { disable_wait = true }
  values    = { message = %[5]q, widget = { enabled = true, phase = %[3]q } }
  %[4]s
}
`, ns, testChartDir(t), phase, wait, message)
	}
	check := `health_check_exprs = [{
    api_version = "example.com/v1"
    kind        = "Widget"
    current     = "status.phase == 'Ready'"
    failed      = "status.phase == 'Broken'"
  }]`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGoneNamed(t, ns, "app"),
		// Each step changes the values: a new health check alone runs no
		// Helm action (as in helm-controller: not part of the release).
		Steps: []resource.TestStep{
			{
				// The legacy waiter: a Widget is ready once it exists.
				Config: config("one", "Pending", `wait_strategy = { name = "legacy" }`),
			},
			{
				// The health check never holds: the upgrade fails naming it.
				Config:      config("two", "Pending", check+"\n  upgrade = { timeout = \"10s\" }"),
				ExpectError: errorText("Widget " + ns + "/app: in progress: health check current `status.phase == 'Ready'` does not hold … A health check of health_check_exprs does not hold (the expression is named above)"),
			},
			{
				Config:      config("three", "Broken", check+"\n  upgrade = { timeout = \"5m\" }"),
				ExpectError: errorText("Widget " + ns + "/app: failed: health check failed `status.phase == 'Broken'` holds"),
			},
			{
				Config: config("four", "Ready", check),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("ready"), knownvalue.Bool(true)),
				},
			},
		},
	})
}
