package provider

import (
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	releasecommon "helm.sh/helm/v4/pkg/release/common"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
)

// TestAccRelease_refresh: a cluster that cannot be reached fails the
// refresh and keeps the state; a release uninstalled outside Terraform
// leaves the state and is planned to be created again.
func TestAccRelease_refresh(t *testing.T) {
	t.Parallel() // namespaced objects of its own namespace only; no environment of its own
	ns := testNamespace(t)
	unreachable := `
provider "helmrelease" {
  kubernetes = { host = "https://127.0.0.1:1", token = "none", insecure = true }
}
` + resourceBlock(t, ns)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{Config: webConfig(t, ns, "")},
			{
				Config:      unreachable,
				ExpectError: errorText(`Error: Kubernetes cluster unreachable … The state is kept as it is`),
			},
			{
				Config:           webConfig(t, ns, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				PreConfig: func() {
					if _, err := helmCLI(t, ns).Uninstall("web", helm.UninstallOptions{Timeout: time.Minute}); err != nil {
						t.Fatal(err)
					}
				},
				Config: webConfig(t, ns, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionCreate),
				}},
			},
		},
	})
}

// TestAccRelease_pendingLock: an apply killed in the middle of an upgrade
// leaves the release pending-upgrade; the next plan plans to unlock it and
// apply recovers it (rollback remediation, then the upgrade again).
func TestAccRelease_pendingLock(t *testing.T) {
	t.Parallel() // namespaced objects of its own namespace only; no environment of its own
	ns := testNamespace(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{Config: webConfig(t, ns, `values = { message = "one" }`)},
			{
				PreConfig: func() {
					c := helmCLI(t, ns)
					latest, err := c.LastRelease("web")
					if err != nil {
						t.Fatal(err)
					}
					pending := *latest
					info := *latest.Info
					pending.Info = &info
					pending.Version = latest.Version + 1
					pending.Info.Status = releasecommon.StatusPendingUpgrade
					pending.Info.LastDeployed = time.Now().Add(-time.Hour)
					if err := c.CreateRelease(&pending); err != nil {
						t.Fatal(err)
					}
				},
				Config: webConfig(t, ns, `values = { message = "one" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionUpdate),
					expectPriorState(knownvalue.StringExact(reasonLocked), "status", "reason"),
					plancheck.ExpectUnknownValue(rel, tfjsonpath.New("resources")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("ready"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("history").AtSliceIndex(0).AtMapKey("status"), knownvalue.StringExact("deployed")),
				},
			},
		},
	})
}
