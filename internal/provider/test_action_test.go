package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	release "helm.sh/helm/v4/pkg/release/v1"
)

// testAccActionTest (TestAccNewerTerraform): helmrelease_test, from an action trigger, runs the
// release's tests now (the revision's test hooks record the run), honours
// filters, and fails naming the failed test pod.
func testAccActionTest(t *testing.T) {
	ns := testNamespace(t)
	config := func(failTest bool, trigger, filters string) string {
		return webConfig(t, ns, fmt.Sprintf(`values = { failTest = %t }`, failTest)) + fmt.Sprintf(`
action "helmrelease_test" "web" {
  config {
    namespace = helmrelease_release.r.namespace
    name      = helmrelease_release.r.release_name
    timeout   = "1m"
    %s
  }
}

resource "terraform_data" "trigger" {
  input = %q
  lifecycle {
    action_trigger {
      events  = [after_create, after_update]
      actions = [action.helmrelease_test.web]
    }
  }
}
`, filters, trigger)
	}
	testRun := func(want release.HookPhase) resource.TestCheckFunc {
		return func(*terraform.State) error {
			rel, err := helmCLI(t, ns).LastRelease("web")
			if err != nil {
				return err
			}
			for _, h := range rel.Hooks {
				if h.Name == "web-test" {
					if h.LastRun.Phase != want || h.LastRun.StartedAt.IsZero() {
						return fmt.Errorf("test web-test: %s, want a run that %s", h.LastRun.Phase, want)
					}
					return nil
				}
			}
			return fmt.Errorf("release web has no test hook web-test")
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{
				// The chart's test fails: the action fails, naming it.
				Config:      config(true, "1", ""),
				ExpectError: regexp.MustCompile(`(?s)Release tests failed.*web-test`),
			},
			{
				// Excluded, nothing fails; the earlier run stays recorded.
				Config: config(true, "2", `filters = [{ name = "web-test", exclude = true }]`),
				Check:  testRun(release.HookPhaseFailed),
			},
			{
				// A passing test: the action succeeds and the run is recorded.
				Config: config(false, "3", ""),
				Check:  testRun(release.HookPhaseSucceeded),
			},
		},
	})
}

// requestTrigger is an action trigger running helmrelease_<kind> once,
// when terraform_data.trigger is created.
func requestTrigger(kind string) string {
	return fmt.Sprintf(`
action "helmrelease_%[1]s" "web" {
  config {
    namespace = helmrelease_release.r.storage_namespace
    name      = helmrelease_release.r.release_name
  }
}

resource "terraform_data" "trigger" {
  lifecycle {
    action_trigger {
      events  = [after_create]
      actions = [action.helmrelease_%[1]s.web]
    }
  }
}
`, kind)
}

// testAccActionForce (TestAccNewerTerraform): helmrelease_force makes the next plan an upgrade of
// a release in sync, and the apply runs it once.
func testAccActionForce(t *testing.T) {
	ns := testNamespace(t)
	release := webConfig(t, ns, `values = { message = "forced" }`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{Config: release},
			{
				// The request is recorded after the release was planned: the
				// plan that follows is not empty.
				Config:             release + requestTrigger("force"),
				ExpectNonEmptyPlan: true,
			},
			{
				Config: release + requestTrigger("force"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(rel, tfjsonpath.New("status")),
				}},
				Check: func(*terraform.State) error {
					if rev := releaseRevision(t, ns); rev != 2 {
						return fmt.Errorf("release at revision %d after the forced upgrade, want 2", rev)
					}
					return nil
				},
			},
		},
	})
}

// testAccActionReset (TestAccNewerTerraform): a release whose retries are exhausted is not tried
// again until helmrelease_reset asks; then the next apply tries it again.
func testAccActionReset(t *testing.T) {
	ns := testNamespace(t)
	failing := webConfig(t, ns, `values = { failHook = true }`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{Config: webConfig(t, ns, `values = { failHook = false }`)},
			{Config: failing, ExpectError: errorText(`retries exhausted`)},
			{
				// Stalled: nothing is tried again.
				Config:           failing,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{Config: failing + requestTrigger("reset"), ExpectNonEmptyPlan: true},
			{
				// Reset: the upgrade is tried again (and fails again).
				Config: failing + requestTrigger("reset"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionUpdate),
				}},
				ExpectError: regexp.MustCompile(`(?s)pre-upgrade`),
			},
		},
	})
}
