package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

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
	ownProcessGC = []string{"GOGC=" + os.Getenv("GOGC"), "GOMEMLIMIT=" + os.Getenv("GOMEMLIMIT")}
	// The terraform processes the tests start (about 1,500 in a run, most
	// of the package's CPU; the provider they call runs in this process)
	// collect no garbage below 1 GiB of heap: each lives for a command,
	// and 10% of its CPU went to the collector at GOGC=400. Set after the
	// local cluster above started, whose processes keep the run's GOGC.
	for k, v := range map[string]string{"GOGC": "off", "GOMEMLIMIT": "1GiB"} {
		if err := os.Setenv(k, v); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
}

// ownProcessVariable names, in the environment of a test process that
// inOwnProcess started, the one test it runs.
const ownProcessVariable = "HELMRELEASE_TEST_OWN_PROCESS"

// ownProcessGC is the garbage collector's settings of this process, which
// TestMain changes in the environment for the terraform processes alone.
var ownProcessGC []string

// inOwnProcess runs the calling test in a test process of its own (this
// test binary started again for it alone, on the same cluster), with env
// added to that process's environment, beside the package's other tests:
// plugin-testing reads TF_ACC_TERRAFORM_PATH, TF_LOG, TF_ACC_LOG_PATH and
// the TF_VAR_ variables from the environment, so a test that sets them
// may not share its process with parallel tests (t.Setenv forbids
// t.Parallel), and run alone such tests held every parallel test of the
// package back until they ended. It returns true here, where the test
// must return once this reports the other process's outcome, and false in
// that process, where the test goes on, alone, free to set its
// environment.
func inOwnProcess(t *testing.T, env ...string) bool {
	t.Helper()
	if os.Getenv(ownProcessVariable) == t.Name() {
		return false
	}
	t.Parallel()
	var run []string
	for part := range strings.SplitSeq(t.Name(), "/") {
		run = append(run, "^"+regexp.QuoteMeta(part)+"$")
	}
	args := []string{"-test.run=" + strings.Join(run, "/"), "-test.count=1", "-test.v"}
	if deadline, ok := t.Deadline(); ok {
		args = append(args, "-test.timeout="+time.Until(deadline).Round(time.Second).String())
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], args...)
	cmd.Env = append(os.Environ(), ownProcessVariable+"="+t.Name(), "HELMRELEASE_TEST_KUBECONFIG="+testKubeconfig)
	cmd.Env = append(append(cmd.Env, ownProcessGC...), env...)
	out, err := cmd.CombinedOutput()
	switch {
	case err != nil:
		t.Fatalf("the test's own process: %v\n%s", err, out)
	case bytes.Contains(out, []byte("--- SKIP: "+t.Name()+" ")):
		// Its log without the test framework's lines: the reason.
		var reason []string
		for line := range strings.Lines(string(out)) {
			if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "=== ") && !strings.HasPrefix(l, "--- ") && l != "PASS" {
				reason = append(reason, l)
			}
		}
		t.Skip(strings.Join(reason, "\n"))
	case !bytes.Contains(out, []byte("--- PASS: "+t.Name()+" ")):
		t.Fatalf("the test's own process ran no %s:\n%s", t.Name(), out)
	}
	return true
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

// terraformVersions: the Terraform under test (TF_ACC_TERRAFORM_PATH) and
// the newer one HELMRELEASE_TEST_TERRAFORM_NEWER names, in that order, each
// with its version, or with why it has none in seen.
func terraformVersions(t *testing.T) (bins []string, versions []*goversion.Version, seen []string) {
	t.Helper()
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
		if err != nil {
			seen = append(seen, bin+": "+err.Error())
			continue
		}
		bins, versions = append(bins, bin), append(versions, got)
		seen = append(seen, bin+" is "+v.Version)
	}
	return bins, versions, seen
}

// terraformAtLeast runs the rest of the test with a Terraform of at least
// version: the one under test where it is new enough, or else the newer
// one, set for this test (plugin-testing reads TF_ACC_TERRAFORM_PATH from
// the environment); it skips the test, naming the version, when neither
// is. The tests that need a Terraform newer than the one under test on the
// project's machines share one run: TestAccNewerTerraform.
func terraformAtLeast(t *testing.T, version string) {
	t.Helper()
	want := goversion.Must(goversion.NewVersion(version))
	bins, versions, seen := terraformVersions(t)
	for i, bin := range bins {
		if versions[i].LessThan(want) {
			continue
		}
		if bin != os.Getenv("TF_ACC_TERRAFORM_PATH") {
			t.Setenv("TF_ACC_TERRAFORM_PATH", bin)
		}
		return
	}
	testenv.SkipUnlessRequired(t, fmt.Sprintf("needs Terraform >= %s (set HELMRELEASE_TEST_TERRAFORM_NEWER to one): %s", version, strings.Join(seen, "; ")))
}

// newerTerraformTests need a Terraform newer than the one under test (1.11
// on the project's machines): identity and import blocks (1.12), `terraform
// query` and actions (1.14). TestAccNewerTerraform runs them.
var newerTerraformTests = []struct {
	name, version string
	test          func(*testing.T)
}{
	{"identity", "1.12.0", testAccReleaseIdentity},
	{"cluster_identity", "1.12.0", testAccReleaseClusterIdentity},
	{"query", "1.14.0", testAccReleaseQuery},
	{"action_test", "1.14.0", testAccActionTest},
	{"action_force", "1.14.0", testAccActionForce},
	{"action_force_on_named_cluster", "1.14.0", testAccActionForceOnNamedCluster},
	{"action_reset", "1.14.0", testAccActionReset},
}

// TestAccNewerTerraform runs newerTerraformTests in parallel with each
// other and the package's other tests on the newest Terraform of the two
// terraformVersions finds, each in a test process of its own
// (inOwnProcess) given it as TF_ACC_TERRAFORM_PATH, which plugin-testing
// reads from the environment. Each skips, naming the version it needs,
// where that Terraform is older.
func TestAccNewerTerraform(t *testing.T) {
	t.Parallel()
	bins, versions, seen := terraformVersions(t)
	newest := -1
	for i := range bins {
		if newest < 0 || versions[i].GreaterThan(versions[newest]) {
			newest = i
		}
	}
	for _, tc := range newerTerraformTests {
		t.Run(tc.name, func(t *testing.T) {
			if want := goversion.Must(goversion.NewVersion(tc.version)); newest < 0 || versions[newest].LessThan(want) {
				testenv.SkipUnlessRequired(t, fmt.Sprintf("needs Terraform >= %s (set HELMRELEASE_TEST_TERRAFORM_NEWER to one): %s", tc.version, strings.Join(seen, "; ")))
			}
			if inOwnProcess(t, "TF_ACC_TERRAFORM_PATH="+bins[newest]) {
				return
			}
			tc.test(t)
		})
	}
}

// onOpenTofu runs the calling test on the OpenTofu that
// HELMRELEASE_TEST_OPENTOFU names (make test-all builds one from
// tools/tofu) in a test process of its own (inOwnProcess), and reports
// whether the caller must return; it skips the test without one, and in
// make test.
func onOpenTofu(t *testing.T) bool {
	t.Helper()
	if os.Getenv(ownProcessVariable) == t.Name() {
		return false
	}
	testenv.FullSuiteOnly(t, "OpenTofu, built from tools/tofu")
	bin := os.Getenv("HELMRELEASE_TEST_OPENTOFU")
	if bin == "" {
		testenv.SkipUnlessRequired(t, "needs OpenTofu: set HELMRELEASE_TEST_OPENTOFU to a tofu binary (make test-all builds one from tools/tofu)")
	}
	// A CLI configuration of its own: OpenTofu prints warnings about a
	// missing one on standard output, where its version is read.
	rc := filepath.Join(t.TempDir(), "tofurc")
	if err := os.WriteFile(rc, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// The provider under test is served at OpenTofu's registry address,
	// where OpenTofu looks for it.
	return inOwnProcess(t, "TF_ACC_TERRAFORM_PATH="+bin, "TF_ACC_PROVIDER_HOST=registry.opentofu.org", "TF_CLI_CONFIG_FILE="+rc)
}
