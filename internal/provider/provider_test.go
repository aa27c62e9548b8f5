package provider

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	goversion "github.com/hashicorp/go-version"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testcluster"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testenv"
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
	// The cache_dir integrity key is kept under the user's configuration
	// directory: the tests' own, not the user's.
	config, err := os.MkdirTemp("", "helmrelease-provider-config-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(config) }()
	if err := os.Setenv("XDG_CONFIG_HOME", config); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// No test reads the user's kubeconfig: each names its cluster, and
	// those of the provider without one see none. Unset here, once, so
	// that those tests run in parallel (t.Setenv forbids it).
	if err := os.Unsetenv("KUBECONFIG"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
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

// terraformAtLeast runs the rest of the test with a Terraform of at least
// version: the one under test (TF_ACC_TERRAFORM_PATH), or the newer one
// HELMRELEASE_TEST_TERRAFORM_NEWER names for the suites that need it; it
// skips the test, naming the version, when neither is.
func terraformAtLeast(t *testing.T, version string) {
	t.Helper()
	want := goversion.Must(goversion.NewVersion(version))
	var seen []string
	for _, bin := range []string{os.Getenv("TF_ACC_TERRAFORM_PATH"), os.Getenv("HELMRELEASE_TEST_TERRAFORM_NEWER")} {
		if bin == "" {
			continue
		}
		out, err := exec.Command(bin, "version", "-json").Output()
		if err != nil {
			seen = append(seen, bin+": "+err.Error())
			continue
		}
		var v struct {
			Version string `json:"terraform_version"`
		}
		if err := json.Unmarshal(out, &v); err != nil {
			seen = append(seen, bin+": "+err.Error())
			continue
		}
		got, err := goversion.NewVersion(v.Version)
		if err == nil && got.GreaterThanOrEqual(want) {
			t.Setenv("TF_ACC_TERRAFORM_PATH", bin)
			return
		}
		seen = append(seen, bin+" is "+v.Version)
	}
	testenv.SkipUnlessRequired(t, fmt.Sprintf("needs Terraform >= %s (set HELMRELEASE_TEST_TERRAFORM_NEWER to one): %s", version, strings.Join(seen, "; ")))
}

// useOpenTofu runs the rest of the test on the OpenTofu that
// HELMRELEASE_TEST_OPENTOFU names (make test-all builds one from
// tools/tofu); it skips the test without one, and in make test.
func useOpenTofu(t *testing.T) {
	t.Helper()
	testenv.FullSuiteOnly(t, "OpenTofu, built from tools/tofu")
	bin := os.Getenv("HELMRELEASE_TEST_OPENTOFU")
	if bin == "" {
		testenv.SkipUnlessRequired(t, "needs OpenTofu: set HELMRELEASE_TEST_OPENTOFU to a tofu binary (make test-all builds one from tools/tofu)")
	}
	t.Setenv("TF_ACC_TERRAFORM_PATH", bin)
	// The provider under test is served at OpenTofu's registry address,
	// where OpenTofu looks for it.
	t.Setenv("TF_ACC_PROVIDER_HOST", "registry.opentofu.org")
	// A CLI configuration of its own: OpenTofu prints warnings about a
	// missing one on standard output, where its version is read.
	rc := filepath.Join(t.TempDir(), "tofurc")
	if err := os.WriteFile(rc, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TF_CLI_CONFIG_FILE", rc)
}
