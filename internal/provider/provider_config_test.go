package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

// TestProvider_unknownKubernetesSettings plans with cluster settings that
// are known only after apply, as when the cluster is created in the same
// configuration: what needs no cluster still works, what needs one says so.
func TestProvider_unknownKubernetesSettings(t *testing.T) {
	t.Parallel() // no cluster; KUBECONFIG is unset for the package (TestMain)
	chart := testChartDir(t)
	// Each step changes the input, so that the output is unknown at its plan.
	base := func(host string) string {
		return fmt.Sprintf(`
resource "terraform_data" "cluster" {
  input = %q
}

provider "helmrelease" {
  kubernetes = {
    host  = terraform_data.cluster.output
    token = "unused"
  }
}
`, host)
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: base("https://127.0.0.1:1") + fmt.Sprintf(`
data "helmrelease_template" "t" {
  name  = "web"
  chart = { name = %q }
}
`, chart),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(tmpl, resourceAt("apps/v1/Deployment/default/web"), objectField(1, "spec", "replicas")),
				},
			},
			{
				Config: base("https://127.0.0.1:2") + fmt.Sprintf(`
data "helmrelease_template" "t" {
  name        = "web"
  chart       = { name = %q }
  values_from = [{ kind = "ConfigMap", name = "base" }]
}
`, chart),
				ExpectError: errorText(`Error: Kubernetes cluster unavailable … This attribute needs the Kubernetes cluster, which cannot be used: the provider's settings of the cluster are not known until apply.`),
			},
		},
	})
}

func TestProvider_invalidSettings(t *testing.T) {
	t.Parallel()
	chart := testChartDir(t)
	config := func(kubernetes string) string {
		return fmt.Sprintf(`
provider "helmrelease" {
  kubernetes = %s
}

data "helmrelease_template" "t" {
  name  = "web"
  chart = { name = %q }
}
`, kubernetes, chart)
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      config(`{ host = "https://127.0.0.1:1", proxy_url = "ftp://proxy" }`),
				ExpectError: errorText(`Error: Invalid proxy URL … The proxy URL at kubernetes.proxy_url is not valid: scheme "ftp" is not one of http, https, socks5. Use a URL like http://proxy.example:3128 (schemes http, https or socks5).`),
			},
			{
				Config:      config(`{ config_path = "/a", kubeconfig = "apiVersion: v1" }`),
				ExpectError: errorText(`Attribute "kubernetes.kubeconfig" cannot be specified when "kubernetes.config_path" is specified`),
			},
			{
				Config:      config(`{ client_certificate = "pem" }`),
				ExpectError: errorText(`Attribute "kubernetes.client_key" must be specified when "kubernetes.client_certificate" is specified`),
			},
			{
				Config:      config(`{ exec = { api_version = "v1", command = "aws" } }`),
				ExpectError: errorText(`Attribute kubernetes.exec.api_version value must be one of:`),
			},
		},
	})
}

// TestProvider_kubeInsecureFromEnvironment checks a KUBE_* variable is read
// and validated.
func TestProvider_kubeInsecureFromEnvironment(t *testing.T) {
	t.Setenv("KUBE_INSECURE", "maybe")
	chart := testChartDir(t)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
data "helmrelease_template" "t" {
  name  = "web"
  chart = { name = %q }
}
`, chart),
			ExpectError: errorText(`Error: Invalid KUBE_INSECURE … KUBE_INSECURE="maybe" is not a boolean. Set KUBE_INSECURE to true or false, or unset it.`),
		}},
	})
}
