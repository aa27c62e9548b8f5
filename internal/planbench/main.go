// Command planbench measures the provider's speed and memory, on the
// local test cluster (or the one HELMRELEASE_TEST_KUBECONFIG names), with
// drift detection on.
//
// With -n: N releases of one chart from Helm repositories with a ≈20 MB
// index each. For each N it times `terraform apply`, a `terraform plan`
// with no change, one with a value changed, one with an empty cache_dir
// (cold start), and `terraform destroy`, and reports CPU time, the
// provider's peak RSS, the index downloads and the API requests per
// release; beside it, the floor (the same plan of N `terraform_data`
// resources: what Terraform itself costs) and the Helm SDK installing the
// same releases as `helm upgrade --install --repo … --wait` does (each
// loading the whole index), -parallelism at once.
//
// With -clusters K: the N releases spread over K clusters, each an API
// server of its own (the test cluster and K-1 more started for the run),
// named in the provider's clusters; the API requests are all the
// clusters' together.
//
// With -objects: one release of a chart of that many objects (1 MB of
// CRDs among them): apply, a plan with no change, a plan after one object
// was changed out of band (it fails unless the plan shows that object and
// no other), destroy, and the state's size beside the manifest's.
//
// With -compare: HashiCorp's helm provider (../shared/bin, or the binary
// HELMRELEASE_BENCH_HELM_PROVIDER names) beside this provider, in the same
// run on the same cluster: install, plan with no change, plan and apply
// with every object changed, destroy; each step's wall time, their ratio,
// the API requests of each by verb and resource. On the chart of -objects
// objects, and on the local chart -chart names (its every object changed
// by -chart-values, an HCL expression of var.message). First, the API
// server's floor for the same objects (apifloor.go): the chart rendered
// and sent straight to the cluster, one request per object, 1, 16, 32 and
// 64 in flight; the tables give each provider's writes as a multiple of
// the fastest.
//
// With -engine flux: the same with engine = "flux", on Flux's controllers
// built from the sources HELMRELEASE_TEST_FLUX_SOURCES names (the newest
// helm-controller there), and after the apply the controller's reconcile
// time (from the HelmRelease written to Ready, the slowest release) beside
// the apply's wall time.
//
//	go run ./internal/planbench -n 1,10,30 [-parallelism 10] [-repositories 1] [-clusters 1] [-profile DIR] [-skip-helm] [-engine flux [-flux-wait=false]]
//	go run ./internal/planbench -objects 1000 [-profile DIR]
//	go run ./internal/planbench -compare -objects 1000 [-chart ../shared/charts/argo-cd]
//
// -profile writes the provider's CPU and allocation profiles and its
// garbage collector's figures of the installs and plans (see profile.go's
// HELMRELEASE_PROFILE_DIR). Run it from the repository root; it needs
// terraform on PATH.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testcluster"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// chartDir is the chart every release installs.
const chartDir = "internal/provider/testdata/charts/web"

func main() {
	counts := flag.String("n", "1,10,30", "numbers of releases, comma-separated")
	parallelism := flag.Int("parallelism", 10, "terraform's -parallelism (its default is 10)")
	profile := flag.String("profile", "", "write the provider's CPU and heap profiles of each install and no-change plan to this directory (n<N>-c<clusters>/[install/]cpu-<pid>.pprof, heap-<pid>.pprof, heap-peak-<pid>.pprof)")
	helmChild := flag.Int("helm-child", 0, "internal: install this many releases with the Helm SDK and print the peak RSS")
	skipHelm := flag.Bool("skip-helm", false, "leave out the Helm SDK installs")
	floorFlag := flag.Bool("floor", true, "with -n and -objects: after the no-change plan, the same plan of the same states with the floor provider (the provider built with -tags floor: its schemas, no work in plan or read)")
	objects := flag.Int("objects", 0, "instead of -n: one release of a chart of this many objects (1 MB of CRDs among them)")
	repositories := flag.Int("repositories", 1, "spread the releases over this many repositories, each serving its own ≈20 MB index")
	clusters := flag.Int("clusters", 1, "with -n: spread the releases over this many clusters, named in the provider's clusters")
	compareFlag := flag.Bool("compare", false, "HashiCorp's helm provider beside this provider, on the chart of -objects objects and the chart -chart names")
	chartFlag := flag.String("chart", "", "with -compare: a local chart directory to compare on too")
	chartValues := flag.String("chart-values", "{ commonLabels = { bench = var.message } }", "with -chart: the values, an HCL expression of var.message that changes every object with it")
	engine := flag.String("engine", "helm", "with -n: the releases' engine, helm or flux")
	fluxWait := flag.Bool("flux-wait", true, "with -engine flux: the releases' flux.wait (false: each apply returns once helm-controller has taken its HelmRelease up)")
	fluxArgs := flag.String("flux-args", "", "with -engine flux: flags added to the controllers', as controller=flags;controller=flags, e.g. \"source-controller=--helm-cache-max-size=10 --helm-cache-ttl=60m;helm-controller=--concurrent=10\"")
	repoURL := flag.String("repo", "", "internal: repository of -helm-child")
	kubeconfig := flag.String("kubeconfig", "", "internal: cluster of -helm-child")
	namespace := flag.String("namespace", "", "internal: namespace of -helm-child")
	flag.Parse()
	var err error
	if *helmChild > 0 {
		err = helmInstalls(*helmChild, *parallelism, *repoURL, *kubeconfig, *namespace)
	} else {
		var cmp *comparison
		if *compareFlag {
			cmp = &comparison{chart: *chartFlag, values: *chartValues}
		}
		err = run(*counts, *objects, *repositories, max(*clusters, 1), *parallelism, *profile, *skipHelm || *engine == "flux", *floorFlag, releaseEngine{name: *engine, fluxWait: *fluxWait}, parseFluxArgs(*fluxArgs), cmp)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "planbench:", err)
		os.Exit(1)
	}
}

// comparison is what -compare asks for.
type comparison struct {
	chart, values string
}

// parseFluxArgs reads -flux-args: controller=flags;controller=flags.
func parseFluxArgs(s string) map[string][]string {
	out := map[string][]string{}
	for part := range strings.SplitSeq(s, ";") {
		if name, flags, ok := strings.Cut(strings.TrimSpace(part), "="); ok {
			out[name] = append(out[name], strings.Fields(flags)...)
		}
	}
	return out
}

// releaseEngine is the releases' engine, and with Flux's, whether each
// apply waits for the controller's outcome (flux.wait).
type releaseEngine struct {
	name     string
	fluxWait bool
}

// settings are the resource's settings of e.
func (e releaseEngine) settings() string {
	s := fmt.Sprintf("engine          = %q", e.name)
	if e.name == "flux" && !e.fluxWait {
		s += "\n  flux            = { wait = false }"
	}
	return s
}

func run(counts string, objects, repositories, clusters, parallelism int, profile string, skipHelm, floorFlag bool, engine releaseEngine, fluxArgs map[string][]string, cmp *comparison) error {
	if _, err := os.Stat("go.mod"); err != nil {
		return errors.New("run from the repository root")
	}
	work, err := os.MkdirTemp("", "planbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	provider := filepath.Join(work, "bin", "terraform-provider-helmrelease")
	fmt.Fprintln(os.Stderr, "building the provider")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Hour)
	defer cancel()
	if err := buildProvider(ctx, provider); err != nil {
		return err
	}
	var floor *floorBuild
	if floorFlag && cmp == nil {
		if floor, err = buildFloor(ctx, work); err != nil {
			return err
		}
	}
	overrides := fmt.Sprintf("    \"helmrelease/helmrelease\" = %q\n", filepath.Dir(provider))
	helmProvider := ""
	if cmp != nil {
		if helmProvider = os.Getenv("HELMRELEASE_BENCH_HELM_PROVIDER"); helmProvider == "" {
			helmProvider = helmProviderDefault
		}
		if helmProvider, err = filepath.Abs(helmProvider); err != nil {
			return err
		}
		if _, err := os.Stat(helmProvider); err != nil {
			return fmt.Errorf("-compare needs HashiCorp's helm provider: %w", err)
		}
		if filepath.Base(helmProvider) != "terraform-provider-helm" {
			return fmt.Errorf("-compare: %s must be named terraform-provider-helm", helmProvider)
		}
		overrides += fmt.Sprintf("    \"hashicorp/helm\" = %q\n", filepath.Dir(helmProvider))
	}
	rc := filepath.Join(work, "terraformrc")
	if err := os.WriteFile(rc, fmt.Appendf(nil, "provider_installation {\n  dev_overrides {\n%s  }\n  direct {}\n}\n", overrides), 0o600); err != nil {
		return err
	}
	kc, stop, err := testcluster.ForTests(os.Stderr)
	if err != nil {
		return err
	}
	defer stop()
	kubeconfigs := []string{kc}
	if clusters > 1 {
		bin, err := testcluster.Build(ctx, testcluster.BuildOptions{Log: os.Stderr})
		if err != nil {
			return fmt.Errorf("building the test cluster: %w", err)
		}
		for i := 1; i < clusters; i++ {
			c, err := testcluster.Start(ctx, testcluster.Options{BinDir: bin, Dir: filepath.Join(work, fmt.Sprintf("cluster-%d", i)), Log: os.Stderr})
			if err != nil {
				return fmt.Errorf("starting cluster %d: %w", i, err)
			}
			defer func() { _ = c.Stop() }()
			kubeconfigs = append(kubeconfigs, c.Kubeconfig)
		}
	}
	api, err := newAPICounter(kubeconfigs...)
	if err != nil {
		return err
	}
	var handed *fluxReleases
	if engine.name == "flux" {
		if handed, err = startFlux(ctx, kc, work, fluxArgs); err != nil {
			return err
		}
		defer handed.stop()
	}
	if cmp != nil {
		tf := terraform{ctx: ctx, rc: rc, provider: provider, api: api}
		if objects > 0 {
			srv, err := bigChartServer(objects, 4)
			if err != nil {
				return err
			}
			defer srv.Close()
			tf.dir = filepath.Join(work, "compare-big")
			if err := compare(tf, helmProvider, kc, comparedChart{
				name: fmt.Sprintf("a chart of %d objects (4 CRDs of 1 MB together, ConfigMaps)", objects), url: srv.URL, chart: "big", version: "1.0.0",
				namespace: "planbench-compare-big", values: "{ message = var.message }", loaded: testrepo.BigChart(objects, 4, 1<<20),
			}); err != nil {
				return err
			}
		}
		if cmp.chart != "" {
			dir, err := filepath.Abs(cmp.chart)
			if err != nil {
				return err
			}
			loaded, err := helm.LoadChart(dir)
			if err != nil {
				return err
			}
			tf.dir = filepath.Join(work, "compare-chart")
			return compare(tf, helmProvider, kc, comparedChart{
				name: "chart " + filepath.Base(dir), chart: dir, namespace: "planbench-compare-" + filepath.Base(dir), values: cmp.values, loaded: loaded,
			})
		}
		return nil
	}
	if objects > 0 {
		return bigRelease(ctx, terraform{ctx: ctx, dir: filepath.Join(work, "big"), rc: rc, provider: provider, api: api}, objects, kc, profile, floor)
	}
	repos, err := newRepositories(max(repositories, 1))
	if err != nil {
		return err
	}
	defer func() {
		for _, r := range repos {
			r.Close()
		}
	}()
	var servers []*testrepo.IndexServer
	var urls []string
	for _, r := range repos {
		servers = append(servers, r.IndexServer)
		urls = append(urls, r.URL)
	}

	fmt.Printf("clusters: %d; repositories: %d, each with a %.1f MB index; %d CPUs; wall clock, CPU time of terraform and the provider together, the provider's peak RSS (VmHWM) and its anonymous part (RssAnon), API requests per release net of the clusters' idle rate\n\n", len(kubeconfigs), len(repos), float64(repos[0].indexSize)/(1<<20), runtime.NumCPU())
	fmt.Printf("%-5s %-22s %10s %10s %10s %10s %10s %12s\n", "N", "run", "wall", "CPU", "RSS MB", "anon MB", "indexes", "API req/rel")
	// With several clusters, the same releases on the first alone follow,
	// the others running idle: the same machine's baseline.
	layouts := [][]string{kubeconfigs}
	if len(kubeconfigs) > 1 {
		layouts = append(layouts, kubeconfigs[:1])
	}
	for _, layout := range layouts {
		if len(kubeconfigs) > 1 {
			fmt.Printf("-- on %d of the %d clusters\n", len(layout), len(kubeconfigs))
		}
		if err := runCounts(ctx, counts, work, layout, urls, servers, rc, provider, api, parallelism, profile, skipHelm, engine, handed, floor); err != nil {
			return err
		}
	}
	return nil
}

// runCounts measures each count of releases of -n on the clusters of
// kubeconfigs (see run).
func runCounts(ctx context.Context, counts, work string, kubeconfigs, urls []string, servers []*testrepo.IndexServer, rc, provider string, api *apiCounter, parallelism int, profile string, skipHelm bool, engine releaseEngine, handed *fluxReleases, schemaFloor *floorBuild) error {
	kc := kubeconfigs[0]
	for _, f := range strings.Split(counts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("-n: %q is not a positive number", f)
		}
		dir := filepath.Join(work, fmt.Sprintf("n%d-c%d", n, len(kubeconfigs)))
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return err
		}
		ns := fmt.Sprintf("planbench-%d", n)
		if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(configuration(n, ns, kubeconfigs, urls, dir, engine)), 0o600); err != nil {
			return err
		}
		tf := terraform{ctx: ctx, dir: dir, rc: rc, provider: provider, srvs: servers, api: api}
		var profileDir, installProfileDir string
		if profile != "" {
			if profileDir, err = filepath.Abs(filepath.Join(profile, fmt.Sprintf("n%d-c%d", n, len(kubeconfigs)))); err != nil {
				return err
			}
			installProfileDir = filepath.Join(profileDir, "install")
			if err := os.MkdirAll(installProfileDir, 0o750); err != nil {
				return err
			}
		}
		par := fmt.Sprintf("-parallelism=%d", parallelism)
		// The floor: what Terraform itself costs to plan N resources.
		floorDir := filepath.Join(work, fmt.Sprintf("floor%d-c%d", n, len(kubeconfigs)))
		if err := os.MkdirAll(floorDir, 0o750); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(floorDir, "main.tf"), fmt.Appendf(nil, "resource \"terraform_data\" \"r\" {\n  count = %d\n  input = \"web-${count.index}\"\n}\n", n), 0o600); err != nil {
			return err
		}
		floor := terraform{ctx: ctx, dir: floorDir, rc: rc, provider: provider, srvs: servers, api: api}
		if _, err := floor.run([]string{"apply", "-auto-approve", "-input=false", par}, 0); err != nil {
			return fmt.Errorf("terraform_data floor: %w", err)
		}
		m, err := floor.run([]string{"plan", "-input=false", "-detailed-exitcode", par}, 0)
		if err != nil {
			return fmt.Errorf("terraform_data floor: %w", err)
		}
		m.row(n, "plan, terraform_data")
		emptyCache := func() error { return os.RemoveAll(filepath.Join(dir, "cache")) }
		for _, step := range []struct {
			name    string
			args    []string
			exit    int
			profile string
			before  func() error
		}{
			{"apply (install)", []string{"apply", "-auto-approve", "-input=false", par}, 0, installProfileDir, nil},
			{"plan, no change", []string{"plan", "-input=false", "-detailed-exitcode", par}, 0, profileDir, nil},
			{"plan, one value", []string{"plan", "-input=false", "-detailed-exitcode", "-var", "message=changed", par}, 2, "", nil},
			{"plan, empty cache_dir", []string{"plan", "-input=false", "-detailed-exitcode", par}, 0, "", emptyCache},
		} {
			if step.before != nil {
				if err := step.before(); err != nil {
					return err
				}
			}
			t := tf
			t.profileDir = step.profile
			started := time.Now()
			m, err := t.run(step.args, step.exit)
			if err != nil {
				return fmt.Errorf("%s with %d releases: %w", step.name, n, err)
			}
			m.row(n, step.name)
			if schemaFloor != nil && step.name == "plan, no change" {
				// The same plan of the same states with the floor provider.
				t := tf
				t.rc, t.provider = schemaFloor.rc, schemaFloor.binary
				m, err := t.run(step.args, 0)
				if err != nil {
					return fmt.Errorf("the floor provider's plan of %d releases: %w", n, err)
				}
				m.row(n, "plan, schema floor")
				if m, err = leanFloor(tf, schemaFloor, filepath.Join(work, fmt.Sprintf("lean%d-c%d", n, len(kubeconfigs))), configuration(n, ns, kubeconfigs, urls, dir, engine), step.args); err != nil {
					return fmt.Errorf("the lean floor's plan of %d releases: %w", n, err)
				}
				m.row(n, "plan, lean floor")
			}
			if handed != nil && step.name == "apply (install)" {
				slowest, err := handed.reconcileTime(ctx, ns, started, n)
				if err != nil {
					return err
				}
				if m.wall >= slowest {
					fmt.Printf("%-5d %-22s %10s %10s (the apply's own: %s)\n", n, "controller reconcile", slowest.Round(10*time.Millisecond), "", (m.wall - slowest).Round(10*time.Millisecond))
				} else {
					fmt.Printf("%-5d %-22s %10s %10s (all Ready %s after the apply returned)\n", n, "controller reconcile", slowest.Round(10*time.Millisecond), "", (slowest - m.wall).Round(10*time.Millisecond))
				}
			}
		}
		if !skipHelm {
			h, err := helmBaseline(ctx, n, parallelism, urls[0], kc)
			if err != nil {
				return fmt.Errorf("helm SDK installs of %d releases: %w", n, err)
			}
			h.row(n, "Helm SDK installs")
		}
		d, err := tf.run([]string{"destroy", "-auto-approve", "-input=false", par}, 0)
		if err != nil {
			return fmt.Errorf("destroying %d releases: %w", n, err)
		}
		d.row(n, "destroy")
	}
	return nil
}

// configuration is N releases of the chart, drift detection on; with
// more than one kubeconfig, spread over clusters of those names c0, c1, ….
func configuration(n int, namespace string, kubeconfigs, repoURLs []string, dir string, engine releaseEngine) string {
	repos, _ := json.Marshal(repoURLs) // strings, as an HCL list
	connection, cluster := fmt.Sprintf("kubernetes = { config_path = %q }", kubeconfigs[0]), "null"
	if len(kubeconfigs) > 1 {
		var b strings.Builder
		b.WriteString("clusters = {\n")
		for i, kc := range kubeconfigs {
			fmt.Fprintf(&b, "    c%d = { config_path = %q }\n", i, kc)
		}
		b.WriteString("  }")
		connection = b.String()
		cluster = fmt.Sprintf(`"c${count.index %% %d}"`, len(kubeconfigs))
	}
	return fmt.Sprintf(`terraform {
  required_providers {
    helmrelease = { source = "helmrelease/helmrelease" }
  }
}

variable "message" {
  default = "hello"
}

locals {
  repositories = %s
}

provider "helmrelease" {
  %s
  cache_dir  = %q
}

resource "helmrelease_release" "r" {
  count           = %d
  cluster         = %s
  name            = "web-${count.index}"
  namespace       = %q
  chart           = { repository = local.repositories[count.index %% length(local.repositories)], name = "web", version = "1.x" }
  values          = { message = var.message }
  install         = { create_namespace = true }
  drift_detection = { mode = "enabled" }
  %s
}
`, repos, connection, filepath.Join(dir, "cache"), n, cluster, namespace, engine.settings())
}

type measure struct {
	wall      time.Duration
	cpu       time.Duration // terraform's and the provider's, user and system
	rss       int64
	anon      int64 // the provider's peak RssAnon
	downloads int64
	requests  float64
}

// row prints m as a row of the table; what was not measured is blank.
func (m measure) row(n int, name string) {
	mb := func(b int64) string {
		if b == 0 {
			return ""
		}
		return fmt.Sprintf("%.1f", float64(b)/(1<<20))
	}
	requests := ""
	if m.requests > 0 {
		requests = fmt.Sprintf("%.1f", m.requests/float64(n))
	}
	fmt.Printf("%-5d %-22s %10s %10s %10s %10s %10d %12s\n", n, name, m.wall.Round(10*time.Millisecond), m.cpu.Round(10*time.Millisecond),
		mb(m.rss), mb(m.anon), m.downloads, requests)
}

type terraform struct {
	ctx               context.Context
	dir, rc, provider string
	srvs              []*testrepo.IndexServer // whose index downloads count
	api               *apiCounter
	profileDir        string   // where the provider writes its profiles, if set
	env               []string // added to terraform's environment
}

// run runs terraform, polling the provider processes' peak RSS.
func (t terraform) run(args []string, wantExit int) (measure, error) {
	cmd := exec.CommandContext(t.ctx, "terraform", args...)
	cmd.Dir = t.dir
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+t.rc, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
	cmd.Env = append(cmd.Env, t.env...)
	if t.profileDir != "" {
		cmd.Env = append(cmd.Env, "HELMRELEASE_PROFILE_DIR="+t.profileDir)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	downloads := t.indexDownloads()
	requests, err := t.api.total()
	if err != nil {
		return measure{}, err
	}
	poll := newRSSPoller(t.provider)
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	rss, anon := poll.stop()
	var cpu time.Duration
	if cmd.ProcessState != nil {
		// wait4's usage of terraform includes the providers it waited for.
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		return measure{}, err
	}
	if code != wantExit {
		return measure{}, fmt.Errorf("terraform %s exited %d, want %d:\n%s", args[0], code, wantExit, out.String())
	}
	after, err := t.api.total()
	if err != nil {
		return measure{}, err
	}
	return measure{
		wall:      wall,
		cpu:       cpu,
		rss:       rss,
		anon:      anon,
		downloads: t.indexDownloads() - downloads,
		requests:  max(0, after-requests-t.api.idleRate*wall.Seconds()),
	}, nil
}

func (t terraform) indexDownloads() int64 {
	var n int64
	for _, s := range t.srvs {
		n += s.IndexDownloads.Load()
	}
	return n
}

// rssPoller follows the peak RSS of the processes running a binary: the
// whole (VmHWM) and its anonymous part (RssAnon, polled: the heap, stacks
// and runtime, without the executable's pages mapped from its file).
type rssPoller struct {
	done       chan struct{}
	peak, anon atomic.Int64
	wg         sync.WaitGroup
}

func newRSSPoller(binary string) *rssPoller {
	p := &rssPoller{done: make(chan struct{})}
	p.wg.Go(func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			peak, anon := rssOf(binary)
			p.peak.Store(max(p.peak.Load(), peak))
			p.anon.Store(max(p.anon.Load(), anon))
			select {
			case <-p.done:
				return
			case <-tick.C:
			}
		}
	})
	return p
}

func (p *rssPoller) stop() (peak, anon int64) {
	close(p.done)
	p.wg.Wait()
	return p.peak.Load(), p.anon.Load()
}

// rssOf is the largest VmHWM and RssAnon of the processes running binary.
func rssOf(binary string) (peak, anon int64) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err != nil || exe != binary {
			continue
		}
		status := filepath.Join("/proc", e.Name(), "status")
		peak = max(peak, testrepo.PeakRSS(status))
		anon = max(anon, testrepo.StatusBytes(status, "RssAnon"))
	}
	return peak, anon
}

// repository serves the synthetic index with the web chart.
type repository struct {
	*testrepo.IndexServer
	indexSize int
}

// newRepositories starts n repositories serving the web chart, each with
// its own copy of the index.
func newRepositories(n int) ([]*repository, error) {
	c, err := helm.LoadChart(chartDir)
	if err != nil {
		return nil, err
	}
	archive, digest, err := testrepo.Archive(c)
	if err != nil {
		return nil, err
	}
	index := testrepo.WithChart(testrepo.SyntheticIndex(1250, 18), "web", c.Metadata.Version, "charts/web.tgz", digest)
	var repos []*repository
	for range n {
		repos = append(repos, &repository{IndexServer: testrepo.NewIndexServer(index, "charts/web.tgz", archive), indexSize: len(index)})
	}
	return repos, nil
}

// apiCounter reads the API servers' request counters, summed.
type apiCounter struct {
	clients  []kubernetes.Interface
	idleRate float64 // requests per second with nothing running
}

func newAPICounter(kubeconfigs ...string) (*apiCounter, error) {
	c := &apiCounter{}
	for _, kc := range kubeconfigs {
		cfg, err := clientcmd.BuildConfigFromFlags("", kc)
		if err != nil {
			return nil, err
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		c.clients = append(c.clients, cs)
	}
	before, err := c.total()
	if err != nil {
		return nil, err
	}
	const idle = 5 * time.Second
	time.Sleep(idle)
	after, err := c.total()
	if err != nil {
		return nil, err
	}
	// Each scrape is one request too.
	c.idleRate = (after - before - float64(len(c.clients))) / idle.Seconds()
	return c, nil
}

// total is the sum of apiserver_request_total.
func (c *apiCounter) total() (float64, error) {
	by, err := c.byRequest()
	var sum float64
	for _, v := range by {
		sum += v
	}
	return sum, err
}

// byRequest is apiserver_request_total by verb, resource and dry run
// ("PATCH configmaps dryRun"), of all the clusters.
func (c *apiCounter) byRequest() (map[string]float64, error) {
	out := map[string]float64{}
	for _, client := range c.clients {
		if err := requestsOf(client, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// requestsOf adds the apiserver_request_total of client's cluster to out.
func requestsOf(client kubernetes.Interface, out map[string]float64) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	raw, err := client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("reading the API server's metrics: %w", err)
	}
	label := func(line, name string) string {
		_, rest, ok := strings.Cut(line, name+`="`)
		if !ok {
			return ""
		}
		v, _, _ := strings.Cut(rest, `"`)
		return v
	}
	for line := range strings.Lines(string(raw)) {
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			continue
		}
		key := label(line, "verb") + " " + label(line, "resource")
		if label(line, "dry_run") != "" {
			key += " dryRun"
		}
		out[key] += v
	}
	return nil
}

// helmBaseline runs the Helm SDK installs in a child process of this
// command, so that its peak RSS is theirs alone.
func helmBaseline(ctx context.Context, n, parallelism int, repoURL, kubeconfig string) (measure, error) {
	ns := fmt.Sprintf("planbench-helm-%d", n)
	self, err := os.Executable()
	if err != nil {
		return measure{}, err
	}
	start := time.Now()
	child := exec.CommandContext(ctx, self, "-helm-child", strconv.Itoa(n), "-parallelism", strconv.Itoa(parallelism), "-repo", repoURL, "-kubeconfig", kubeconfig, "-namespace", ns)
	out, err := child.CombinedOutput()
	wall := time.Since(start)
	if err != nil {
		return measure{}, fmt.Errorf("%w: %s", err, out)
	}
	m := measure{wall: wall, cpu: child.ProcessState.UserTime() + child.ProcessState.SystemTime()}
	for line := range strings.Lines(string(out)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "peak-rss "); ok {
			m.rss, _ = strconv.ParseInt(v, 10, 64)
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "downloads "); ok {
			m.downloads, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	// Leave the cluster as it was.
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return m, err
	}
	c, err := helm.NewClient(helm.ClientOptions{Getter: kube.NewGetter(cfg, ns, ""), StorageNamespace: ns})
	if err != nil {
		return m, err
	}
	for i := range n {
		if _, err := c.Uninstall(fmt.Sprintf("web-%d", i), helm.UninstallOptions{Timeout: time.Minute, Wait: true}); err != nil {
			return m, err
		}
	}
	return m, nil
}

// helmInstalls is `helm upgrade --install web-<i> web --repo <url> --wait`
// n times, parallelism at once as Terraform runs resources: each downloads
// the index, loads it whole, fetches the chart and installs it.
func helmInstalls(n, parallelism int, repoURL, kubeconfig, namespace string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "planbench-helm-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	if err := createNamespace(ctx, cfg, namespace); err != nil {
		return err
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(parallelism)
	for i := range n {
		g.Go(func() error {
			c, err := helm.NewClient(helm.ClientOptions{Getter: kube.NewGetter(cfg, namespace, ""), StorageNamespace: namespace})
			if err != nil {
				return err
			}
			indexFile := filepath.Join(dir, fmt.Sprintf("index-%d.yaml", i))
			if err := fetch(ctx, repoURL+"/index.yaml", indexFile); err != nil {
				return err
			}
			url, err := testrepo.IndexChartURL(indexFile, "web", "1.x")
			if err != nil {
				return err
			}
			archive := filepath.Join(dir, fmt.Sprintf("web-%d.tgz", i))
			if err := fetch(ctx, repoURL+"/"+url, archive); err != nil {
				return err
			}
			ch, err := helm.LoadChart(archive)
			if err != nil {
				return err
			}
			_, err = c.Install(ctx, ch, map[string]any{"message": "hello"}, helm.InstallOptions{
				ReleaseName: fmt.Sprintf("web-%d", i), Namespace: namespace, Timeout: 5 * time.Minute, Wait: true,
			})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	fmt.Printf("downloads %d\npeak-rss %d\n", n, testrepo.PeakRSS("/proc/self/status"))
	return nil
}

// createNamespace creates the namespace of the Helm installs once, as
// `kubectl create namespace` before them would: concurrent installs with
// --create-namespace race to create it.
func createNamespace(ctx context.Context, cfg *rest.Config, name string) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

func fetch(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		return errors.Join(err, f.Close())
	}
	return f.Close()
}
