package provider

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

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

// testKubeconfigEnv names an existing cluster for the acceptance tests.
const testKubeconfigEnv = "HELMRELEASE_TEST_KUBECONFIG"

// TestMain gives acceptance tests (TF_ACC=1) a cluster: the one whose
// kubeconfig HELMRELEASE_TEST_KUBECONFIG names (the local test cluster, kind,
// …), or else a local test cluster started for this run and stopped after
// it. KUBECONFIG is deliberately not used, so that the tests never touch the
// cluster a developer's shell points at.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if os.Getenv("TF_ACC") == "" {
		return m.Run()
	}
	testKubeconfig = os.Getenv(testKubeconfigEnv)
	if testKubeconfig == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		defer cancel()
		bin, err := testcluster.Build(ctx, testcluster.BuildOptions{Log: os.Stderr})
		if err != nil {
			fmt.Fprintln(os.Stderr, "building the test cluster:", err)
			return 1
		}
		dir, err := os.MkdirTemp("", "helmrelease-testcluster-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		c, err := testcluster.Start(ctx, testcluster.Options{BinDir: bin, Dir: dir, Log: os.Stderr})
		if err != nil {
			fmt.Fprintln(os.Stderr, "starting the test cluster:", err)
			return 1
		}
		defer func() {
			if err := c.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "stopping the test cluster:", err)
			}
		}()
		testKubeconfig = c.Kubeconfig
	}
	return m.Run()
}

// testClient is a client of the acceptance tests' cluster.
func testClient(t *testing.T) kubernetes.Interface {
	t.Helper()
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
