package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// TestRelease_badInput: invalid configurations fail at plan with the
// attribute path and a remedy, before anything reaches a cluster.
func TestRelease_badInput(t *testing.T) {
	config := func(body string) string {
		return fmt.Sprintf(`
provider "helmrelease" {}

resource "helmrelease_release" "r" {
  name  = "web"
  chart = { name = "./chart" }
  %s
}
`, body)
	}
	var steps []resource.TestStep
	for _, tc := range []struct{ body, want string }{
		{`timeout = "5 minutes"`, `Error: Invalid duration … The duration at timeout is not valid: "5 minutes": time: unknown unit " minutes" in duration "5 minutes". Write a positive duration with a unit, e.g. ` + "`90s`"},
		{`upgrade = { timeout = "-1m" }`, `The duration at upgrade.timeout is not valid: "-1m" is not positive`},
		{`install = { crds = "Sometimes" }`, `Attribute install.crds value must be one of: ["Skip" "Create" "CreateReplace"], got: "Sometimes"`},
		{`upgrade = { remediation = { strategy = "retry" } }`, `Attribute upgrade.remediation.strategy value must be one of: ["rollback" "uninstall"], got: "retry"`},
		{`uninstall = { deletion_propagation = "now" }`, `Attribute uninstall.deletion_propagation value must be one of: ["background" "foreground" "orphan"]`},
		{`drift_detection = { mode = "on" }`, `Attribute drift_detection.mode value must be one of: ["enabled" "warn" "disabled"]`},
		{`drift_detection = { ignore = [{ paths = ["spec/replicas"] }] }`, `Error: Invalid JSON pointer … "spec/replicas" does not start with '/'. Write an RFC 6901 JSON pointer`},
		{`drift_detection = { ignore = [{ paths = ["/a~2b"] }] }`, `"/a~2b" has a '~' not followed by 0 or 1`},
		{`drift_detection = { ignore = [{ paths = ["/spec"], target = { name = "(" } }] }`, `Error: Invalid regular expression … Use Go regular expression syntax`},
		{`drift_detection = { ignore = [{ paths = ["/spec"], target = { label_selector = "a=b=c" } }] }`, `Error: Invalid label selector`},
		{`values_from = [{ kind = "ConfigMap", name = "v", target_path = "a[" }]`, `Error: Invalid target path`},
		{`values_from = [{ kind = "Pod", name = "v" }]`, `Attribute values_from[0].kind value must be one of: ["ConfigMap" "Secret"]`},
		{`post_renderers = [{ kustomize = { patches = [{ patch = "[{op: jump, path: /a}]" }] } }]`, `Error: Invalid patch … "jump" is not a JSON 6902 operation`},
		{`release_name = "a-release-name-that-is-far-too-long-for-helm-to-accept-it"`, `Attribute release_name string length must be between 1 and 53`},
		{`namespace = "Apps_1"`, `Attribute namespace must be lowercase letters, digits and '-'`},
		{`max_history = -1`, `Attribute max_history value must be at least 0, got: -1`},
		{`values = "a string"`, `Error: Invalid values … The values at values are not valid: values must be an object`},
		{`sensitive_values = "[1, 2]"`, `Error: Invalid sensitive values … a mapping is needed, not []interface {}`},
		{`service_account_name = "Deployer!"`, `Attribute service_account_name must be a Kubernetes object name`},
	} {
		steps = append(steps, resource.TestStep{Config: config(tc.body), PlanOnly: true, ExpectError: errorText(tc.want)})
	}
	steps = append(steps, resource.TestStep{
		Config:      `provider "helmrelease" {}` + "\n" + `resource "helmrelease_release" "r" {` + "\n" + `name = "web"` + "\n" + `chart = { name = "app", repository = "ftp://charts.example.com" }` + "\n}\n",
		PlanOnly:    true,
		ExpectError: errorText(`Attribute chart.repository must start with https://, http:// or oci:// and a host`),
	})
	resource.UnitTest(t, resource.TestCase{ProtoV6ProviderFactories: testAccProtoV6ProviderFactories, Steps: steps})
}
