package provider

import (
	"fmt"
	"os"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testcluster"
)

// testAccProtoV6ProviderFactories serve the provider in-process to Terraform.
var testAccProtoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"helmrelease": providerserver.NewProtocol6WithError(New("test")()),
}

// testKubeconfig is the kubeconfig of the acceptance tests' cluster.
var testKubeconfig string

// TestMain gives acceptance tests (TF_ACC=1) a cluster: the one
// HELMRELEASE_TEST_KUBECONFIG names, or else a local test cluster started
// for this run and stopped after it.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if os.Getenv("TF_ACC") == "" {
		return m.Run()
	}
	kubeconfig, stop, err := testcluster.ForTests(os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop()
	testKubeconfig = kubeconfig
	return m.Run()
}

// testClient is a client of the acceptance tests' cluster.
func testClient(t *testing.T) kubernetes.Interface {
	t.Helper()
	if testKubeconfig == "" {
		t.Skip("needs the test cluster: set TF_ACC=1")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", testKubeconfig)
	if err != nil {
		t.Fatalf("loading kubeconfig: %v", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("creating client: %v", err)
	}
	return cs
}

// providerConfig points the provider at the tests' cluster explicitly.
func providerConfig() string {
	return fmt.Sprintf(`
provider "helmrelease" {
  kubernetes = {
    config_path = %q
  }
}
`, testKubeconfig)
}
