//go:build unix

package e2e

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testcluster"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testenv"
)

// The matrix's world, set up once by TestMain; skipReason is why it was
// not.
var (
	skipReason string
	terraform  string // the terraform binary
	cliConfig  string // a CLI configuration overriding the provider with this build
	// raceCLIConfig overrides the provider with this build made with the
	// race detector, which stops the provider at the first data race.
	raceCLIConfig string
	cluster       *testcluster.Cluster
	restConfig    *rest.Config
	clientset     kubernetes.Interface
	// repoRoot is the repository's root, found from the package's
	// directory, where go test runs the tests: the paths runtime.Caller
	// gives are module paths in a build with -trimpath.
	repoRoot string
)

// testdataPath is the path of elem under the package's testdata.
func testdataPath(elem ...string) string {
	return filepath.Join(append([]string{repoRoot, "internal", "e2e", "testdata"}, elem...)...)
}

func TestMain(m *testing.M) {
	flag.Parse()
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	var err error
	if repoRoot, err = filepath.Abs(filepath.Join("..", "..")); err != nil {
		return 0, fmt.Errorf("finding the repository's root: %w", err)
	}
	switch {
	case testing.Short():
		skipReason = "the e2e tests run terraform against a cluster"
	case os.Getenv("TF_ACC") == "":
		skipReason = "set TF_ACC=1 to run the e2e tests (they run terraform against a local cluster)"
	}
	if skipReason != "" {
		return m.Run(), nil
	}
	terraform = os.Getenv("TF_ACC_TERRAFORM_PATH")
	if terraform == "" {
		terraform, _ = exec.LookPath("terraform")
	}
	if terraform == "" {
		// TF_ACC asks for these tests: without what they need they fail,
		// as the other packages' acceptance tests do.
		return 0, errors.New("TF_ACC is set and there is no terraform: put it on PATH or name it in TF_ACC_TERRAFORM_PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	work, err := os.MkdirTemp("", "helmrelease-e2e-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(work)

	// The two provider builds, Flux's controllers and the cluster's
	// start, side by side: the race build alone is minutes of a run's
	// critical path.
	var bin string
	var builds errgroup.Group
	builds.Go(func() (err error) {
		cliConfig, err = buildProvider(ctx, work, "bin")
		return err
	})
	if testenv.FullSuite() {
		// make test leaves the race build and Flux's controllers to
		// make test-all, whose tests alone use them.
		builds.Go(func() (err error) {
			raceCLIConfig, err = buildProvider(ctx, work, "race-bin", "-race")
			return err
		})
		builds.Go(func() error {
			// Flux's controllers, so that a first build does not spend a
			// Flux test's deadline; a test retries a failed build and says
			// why it cannot run.
			ctx, cancel := context.WithTimeout(context.Background(), testcluster.FluxBuildTimeout)
			defer cancel()
			if err := testcluster.BuildFluxForTests(ctx, os.Stderr); err != nil {
				fmt.Fprintln(os.Stderr, "e2e: building Flux's controllers before the tests:", err)
			}
			return nil
		})
	}
	builds.Go(func() error {
		// A cluster of the package's own, shared by its tests; those that
		// stop an API server start one more (newOutageCluster).
		var err error
		if bin, err = testcluster.Build(ctx, testcluster.BuildOptions{Log: os.Stderr}); err != nil {
			return fmt.Errorf("TF_ACC is set and the local test cluster does not build: %w", err)
		}
		if cluster, err = testcluster.Start(ctx, testcluster.Options{BinDir: bin, Dir: filepath.Join(work, "cluster"), Log: os.Stderr, AuditNamespaces: auditedNamespaces}); err != nil {
			return fmt.Errorf("starting the test cluster: %w", err)
		}
		return nil
	})
	err = builds.Wait()
	if cluster != nil {
		defer func() {
			if err := cluster.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "e2e: stopping the test cluster:", err)
			}
		}()
	}
	if err != nil {
		return 0, err
	}
	clusterBin, workDir = bin, work
	defer stopExtraClusters()
	if restConfig, err = clientcmd.BuildConfigFromFlags("", cluster.Kubeconfig); err != nil {
		return 0, err
	}
	if clientset, err = kubernetes.NewForConfig(restConfig); err != nil {
		return 0, err
	}
	return m.Run(), nil
}

// target is a cluster tests run against: its kubeconfig and clients.
type target struct {
	kubeconfig string
	rest       *rest.Config
	cs         kubernetes.Interface
}

// The clusters started beside the run's (the Flux tests', one per
// helm-controller version; the named clusters of the many-clusters
// tests), each when a test first asks for it (clusterFor) and stopped
// after the run.
var (
	clusterBin, workDir string
	extraClustersMu     sync.Mutex
	extraClusters       = map[string]*extraCluster{}
)

type extraCluster struct {
	once    sync.Once
	cluster *testcluster.Cluster
	target  *target
	err     error
}

// fluxClusterFor is the cluster of the Flux tests of helm-controller
// version: one of its own, so that the CRDs of each version are that
// version's while the versions run side by side.
func fluxClusterFor(ctx context.Context, version string) (*target, error) {
	k, _, err := clusterFor(ctx, "flux-"+version)
	return k, err
}

// clusterFor is the extra cluster named name, started on first use: an
// API server of its own, with its own data and credentials.
func clusterFor(ctx context.Context, name string) (*target, *testcluster.Cluster, error) {
	extraClustersMu.Lock()
	ec := extraClusters[name]
	if ec == nil {
		ec = &extraCluster{}
		extraClusters[name] = ec
	}
	extraClustersMu.Unlock()
	ec.once.Do(func() {
		c, err := testcluster.Start(ctx, testcluster.Options{BinDir: clusterBin, Dir: filepath.Join(workDir, name), Log: os.Stderr})
		if err != nil {
			ec.err = fmt.Errorf("starting cluster %s: %w", name, err)
			return
		}
		ec.cluster = c
		cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
		if err != nil {
			ec.err = err
			return
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			ec.err = err
			return
		}
		ec.target = &target{kubeconfig: c.Kubeconfig, rest: cfg, cs: cs}
	})
	return ec.target, ec.cluster, ec.err
}

func stopExtraClusters() {
	extraClustersMu.Lock()
	defer extraClustersMu.Unlock()
	for name, ec := range extraClusters {
		if ec.cluster != nil {
			if err := ec.cluster.Stop(); err != nil {
				fmt.Fprintf(os.Stderr, "e2e: stopping cluster %s: %v\n", name, err)
			}
		}
	}
}

// needMatrix skips the test when the matrix is not set up.
func needMatrix(t *testing.T) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}

// parallelMatrix is needMatrix for a test that runs beside the others:
// its own namespace, workspace, repository and Flux controllers.
func parallelMatrix(t *testing.T) {
	t.Helper()
	needMatrix(t)
	t.Parallel()
}

// buildProvider builds the provider into work/dir with the go build flags
// given and writes a CLI configuration that overrides the provider with
// it; it returns the configuration's path.
func buildProvider(ctx context.Context, work, dir string, flags ...string) (string, error) {
	provider := filepath.Join(work, dir, "terraform-provider-helmrelease")
	// -trimpath as make test builds the tests and GoReleaser the release:
	// the three share their compiled packages.
	args := append(append([]string{"build", "-trimpath"}, flags...), "-o", provider, "github.com/helmrelease/terraform-provider-helmrelease")
	cmd := exec.CommandContext(ctx, "go", args...)
	if slices.Contains(flags, "-race") {
		// The race detector needs cgo, whatever the tests are built with.
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the provider (%s): %w: %s", strings.Join(flags, " "), err, out)
	}
	rc := filepath.Join(work, dir+".terraformrc")
	config := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    \"helmrelease/helmrelease\" = %q\n  }\n  direct {}\n}\n", filepath.Dir(provider))
	if err := os.WriteFile(rc, []byte(config), 0o600); err != nil {
		return "", fmt.Errorf("writing the CLI configuration: %w", err)
	}
	return rc, nil
}
