package provider

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	release "helm.sh/helm/v4/pkg/release/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// remediationConfig is the web chart in namespace ns with extra attributes.
func remediationConfig(t *testing.T, ns, values, extra string) string {
	return providerConfig() + fmt.Sprintf(`
resource "helmrelease_release" "r" {
  name      = "web"
  namespace = %q
  chart     = { name = %q }
  values    = %s
  timeout   = "30s"
  install   = { create_namespace = true, remediation = { retries = 1 } }
  %s
}
`, ns, webChartDir(t), values, extra)
}

// TestAccRelease_installRemediation: a failing install is retried after
// uninstalling it, the error names the hook, the failure counters are saved
// with the tainted resource, and fixed values install it afresh.
func TestAccRelease_installRemediation(t *testing.T) {
	t.Parallel() // namespaced objects of its own namespace only; no environment of its own
	ns := testNamespace(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{
				Config: remediationConfig(t, ns, `{ failHook = true }`, ""),
				// The hook, its Job and why it failed.
				ExpectError: regexp.MustCompile(`(?s)Error: Release hook did not complete.*retries exhausted.*web-hook.*- Job ` + ns + `/web-hook: failed: BackoffLimitExceeded`),
			},
			{
				Config: remediationConfig(t, ns, `{ failHook = false }`, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					// Tainted by the failed create: installed anew.
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionDestroyBeforeCreate),
					expectPriorState(knownvalue.Int64Exact(2), "status", "install_failures"),
					expectPriorState(knownvalue.Bool(false), "status", "ready"),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("ready"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("install_failures"), knownvalue.Int64Exact(0)),
				},
			},
		},
	})
}

// TestAccRelease_upgradeRemediation: a failing upgrade is rolled back and
// retried; with retries exhausted the plan is empty with a warning until
// reset_at changes; fixed values upgrade it.
func TestAccRelease_upgradeRemediation(t *testing.T) {
	t.Parallel() // namespaced objects of its own namespace only; no environment of its own
	ns := testNamespace(t)
	upgrade := `upgrade = { remediation = { retries = 1 } }`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{Config: remediationConfig(t, ns, `{ message = "v1" }`, upgrade)},
			{
				Config:      remediationConfig(t, ns, `{ message = "v2", failHook = true }`, upgrade),
				ExpectError: regexp.MustCompile(`Error: Release hook did not complete`),
			},
			{
				// Retries exhausted, nothing changed: no action.
				Config: remediationConfig(t, ns, `{ message = "v2", failHook = true }`, upgrade),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
					expectPriorState(knownvalue.Int64Exact(2), "status", "upgrade_failures"),
					expectPriorState(knownvalue.StringExact("RollbackSucceeded"), "status", "reason"),
				}},
				Check: func(*terraform.State) error {
					// Rolled back: the cluster has v1.
					if got := configMapMessage(t, ns); got != "v1" {
						return fmt.Errorf("message %q after the rollback", got)
					}
					return nil
				},
			},
			{
				// reset_at: tried again, and fails again.
				Config: remediationConfig(t, ns, `{ message = "v2", failHook = true }`, upgrade+"\n  reset_at = \"1\""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionUpdate),
				}},
				ExpectError: regexp.MustCompile(`Error: Release hook did not complete`),
			},
			{
				Config: remediationConfig(t, ns, `{ message = "v3" }`, upgrade+"\n  reset_at = \"1\""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("ready"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("reason"), knownvalue.StringExact("UpgradeSucceeded")),
				},
			},
		},
	})
}

// TestAccRelease_testRemediation: a failing test is remediated (rolled
// back), and ignored when test.ignore_failures is set.
func TestAccRelease_testRemediation(t *testing.T) {
	t.Parallel() // namespaced objects of its own namespace only; no environment of its own
	ns := testNamespace(t)
	tests := func(ignore bool) string {
		return fmt.Sprintf(`test = { enable = true, ignore_failures = %t }
  upgrade = { remediation = { remediate_last_failure = true } }`, ignore)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{
				Config: remediationConfig(t, ns, `{ message = "v1" }`, tests(false)),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("history").AtSliceIndex(0).AtMapKey("test_hooks").AtMapKey("web-test").AtMapKey("phase"), knownvalue.StringExact("Succeeded")),
				},
			},
			{
				Config:      remediationConfig(t, ns, `{ message = "v2", failTest = true }`, tests(false)),
				ExpectError: regexp.MustCompile(`(?s)Error: Release failed.*test`),
			},
			{
				Config: remediationConfig(t, ns, `{ message = "v3", failTest = true }`, tests(true)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectPriorState(knownvalue.StringExact("RollbackSucceeded"), "status", "reason"),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("ready"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("history").AtSliceIndex(0).AtMapKey("test_hooks").AtMapKey("web-test").AtMapKey("phase"), knownvalue.StringExact("Failed")),
				},
			},
		},
	})
}

// TestAccRelease_retryOnFailure: under upgrade.strategy RetryOnFailure a
// failed upgrade is neither rolled back nor stalled: each next apply (same
// configuration) upgrades again, and the one after the cause is fixed
// succeeds. The hook fails until a ConfigMap "go" exists.
func TestAccRelease_retryOnFailure(t *testing.T) {
	t.Parallel() // namespaced objects of its own namespace only; no environment of its own
	ns := testNamespace(t)
	strategy := `upgrade = { strategy = { name = "RetryOnFailure" } }`
	failing := remediationConfig(t, ns, `{ message = "v2", failHookUntil = "go" }`, strategy)
	removeGo := func() {
		err := testClient(t).CoreV1().ConfigMaps(ns).Delete(context.Background(), "go", metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	removeGo() // left by an earlier run: the namespace stays
	t.Cleanup(removeGo)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{Config: remediationConfig(t, ns, `{ message = "v1" }`, strategy)},
			{
				Config:      failing,
				ExpectError: errorText(`Error: Release hook did not complete … not remediated: the strategy RetryOnFailure retries at the next run … The failed release is left as it is (strategy RetryOnFailure: no remediation); the next apply upgrades it again`),
			},
			{
				// The same configuration: planned again, not stalled.
				Config: failing,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionUpdate),
					expectPriorState(knownvalue.Int64Exact(1), "status", "upgrade_failures"),
					expectPriorState(knownvalue.StringExact("UpgradeFailed"), "status", "reason"),
				}},
				ExpectError: errorText(`Error: Release hook did not complete`),
			},
			{
				PreConfig: func() {
					createValuesObjects(t, ns, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "go"}})
				},
				Config: failing,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionUpdate),
					expectPriorState(knownvalue.Int64Exact(2), "status", "upgrade_failures"),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("ready"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("upgrade_failures"), knownvalue.Int64Exact(0)),
				},
				Check: func(*terraform.State) error {
					if got := configMapMessage(t, ns); got != "v2" {
						return fmt.Errorf("message %q after the successful retry", got)
					}
					// v1 deployed, v2 and v3 failed (no rollback between
					// them), v4 the successful retry.
					history, err := helmCLI(t, ns).History("web")
					if err != nil {
						return err
					}
					slices.SortFunc(history, func(a, b *release.Release) int { return a.Version - b.Version })
					var got []string
					for _, r := range history {
						got = append(got, fmt.Sprintf("v%d %s", r.Version, r.Info.Status))
					}
					if want := "[v1 superseded v2 failed v3 failed v4 deployed]"; fmt.Sprint(got) != want {
						return fmt.Errorf("history %v, want %s", got, want)
					}
					return nil
				},
			},
		},
	})
}
