package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// testAccReleaseIdentity (TestAccNewerTerraform): the resource's identity is the release it
// manages, { namespace = storage namespace, name = release name }; import
// blocks by identity and by ID adopt the release with the same identity
// and no Helm action (the configuration's chart path and install options,
// which a release does not record, are the update the plan shows).
func testAccReleaseIdentity(t *testing.T) {
	ns := testNamespace(t)
	testIdentityImports(t, ns, webConfig(t, ns, `values = { message = "identity" }`),
		map[string]knownvalue.Check{"cluster": knownvalue.Null(), "namespace": knownvalue.StringExact(ns), "name": knownvalue.StringExact("web")}, ns+"/web")
}

// testIdentityImports applies config, expects the release's identity, then
// imports it by import blocks with that identity and with its ID, each
// adopting the release under ID id with no Helm action.
func testIdentityImports(t *testing.T, ns, config string, identity map[string]knownvalue.Check, id string) {
	steps := []resource.TestStep{{
		Config:            config,
		ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectIdentity(rel, identity)},
	}}
	for _, kind := range []resource.ImportStateKind{resource.ImportBlockWithResourceIdentity, resource.ImportBlockWithID} {
		steps = append(steps, resource.TestStep{
			Config:             config,
			ResourceName:       rel,
			ImportState:        true,
			ImportStateKind:    kind,
			ExpectNonEmptyPlan: true,
			ImportPlanChecks: resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(rel, plancheck.ResourceActionUpdate),
				plancheck.ExpectKnownValue(rel, tfjsonpath.New("id"), knownvalue.StringExact(id)),
				expectChangedObjects(),
			}},
		})
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps:                    steps,
	})
}
