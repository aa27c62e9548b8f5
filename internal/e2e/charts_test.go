//go:build unix

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testenv"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// publicChart is a public chart of the shared charts directory and what
// the suite does with it.
type publicChart struct {
	// dir is the chart's directory under the shared charts, or under
	// testdata/charts when local.
	dir   string
	local bool
	// release is the release name; objects are named after it.
	release string
	// values and upgraded are the values of the install and of the
	// upgrade, HCL.
	values, upgraded string
	// upgradeChanges are the objects the upgrade changes: the keys of
	// resources, with NS for the namespace.
	upgradeChanges []string
	// scale is the workload drift scales by hand: "<kind>/<name>",
	// kind deployments or statefulsets; none when empty.
	scale string
	// objects must be among the release's objects after the install, and
	// absent must not (keys of resources, NS for the namespace).
	objects, absent []string
	// plannedKnown must be known in the plan of the install, and
	// plannedUnknown known after apply only (keys of resources, NS for
	// the namespace); not checked when both are empty.
	plannedKnown, plannedUnknown []string
	// leftBehind are the objects the destroy's warning names, NS for the
	// namespace.
	leftBehind []string
}

var publicCharts = []publicChart{{
	dir:            "podinfo",
	release:        "podinfo",
	values:         `{ replicaCount = 2 }`,
	upgraded:       `{ replicaCount = 2, ui = { message = "upgraded" } }`,
	upgradeChanges: []string{"apps/v1/Deployment/NS/podinfo"},
	scale:          "deployments/podinfo",
}, {
	dir:            "postgresql",
	release:        "pg",
	values:         `{}`,
	upgraded:       `{ primary = { podAnnotations = { "example.com/revision" = "2" } } }`,
	upgradeChanges: []string{"apps/v1/StatefulSet/NS/pg-postgresql"},
	scale:          "statefulsets/pg-postgresql",
	leftBehind:     []string{"PersistentVolumeClaim NS/data-pg-postgresql-0"},
}, {
	dir:      "argo-cd",
	release:  "argo",
	values:   `{}`,
	upgraded: `{ server = { replicaCount = 2 } }`,
	// argocd-secret holds a bcrypt hash (random salt) and the time of
	// the render: every render of the chart changes it, so every upgrade
	// does, and the plan says so (as known after apply).
	upgradeChanges: []string{"apps/v1/Deployment/NS/argo-argo-cd-server", "v1/Secret/NS/argocd-secret"},
	scale:          "deployments/argo-argo-cd-repo-server",
	leftBehind: []string{
		"CustomResourceDefinition applicationsets.argoproj.io",
		"CustomResourceDefinition applications.argoproj.io",
		"CustomResourceDefinition appprojects.argoproj.io",
		"PersistentVolumeClaim NS/redis-data-argo-redis-master-0",
	},
}, {
	// The patterns of public charts in one chart of the project's (see its
	// README): it must plan and install on a cluster without its CRD, with
	// the kind in .Capabilities, and plan no perpetual diff of its lookup.
	dir:            "patterns",
	local:          true,
	release:        "p",
	values:         `{ greeting = "hi {{ .Release.Namespace }}" }`,
	upgraded:       `{ greeting = "hey {{ .Release.Namespace }}" }`,
	upgradeChanges: []string{"v1/ConfigMap/NS/p-main"},
	objects:        []string{"patterns.example.com/v1/Widget/NS/p", "v1/ConfigMap/NS/p-widgets-served", "v1/ConfigMap/NS/p-sub", "v1/Secret/NS/p-token"},
	// The CRD is in the subchart's crds/ and the cluster does not have it:
	// the plan still shows every object a render reproduces; only the
	// token (random until the lookup finds it) is known after apply.
	plannedKnown:   []string{"patterns.example.com/v1/Widget/NS/p", "v1/ConfigMap/NS/p-widgets-served", "v1/ConfigMap/NS/p-sub", "v1/ConfigMap/NS/p-main"},
	plannedUnknown: []string{"v1/Secret/NS/p-token"},
	absent:         []string{"v1/ConfigMap/NS/p-disabled"},
	leftBehind:     []string{"CustomResourceDefinition widgets.patterns.example.com"},
}}

// sharedCharts is the directory of the public charts:
// $HELMRELEASE_TEST_CHARTS, or shared/charts beside the repository. A test
// that needs them and does not find them skips (testenv.SkipUnlessRequired).
func sharedCharts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("HELMRELEASE_TEST_CHARTS")
	if dir == "" {
		dir = filepath.Join(repoRoot, "..", "shared", "charts")
	}
	if _, err := os.Stat(filepath.Join(dir, "podinfo", "Chart.yaml")); err != nil {
		testenv.SkipUnlessRequired(t, fmt.Sprintf("no public charts at %s (set HELMRELEASE_TEST_CHARTS): %v", dir, err))
	}
	return dir
}

// TestPublicCharts runs public charts the project did not write through
// the whole lifecycle, with the real terraform: install; two plans with
// no change (no perpetual diff from generated passwords, lookups, CRDs
// or hooks); a workload scaled by hand planned back and corrected; an
// upgrade of one value that plans only the objects it changes; a plan
// with no change; destroy, which names what Helm leaves behind by design.
// It logs the wall time of each step and the provider's peak memory.
func TestPublicCharts(t *testing.T) {
	testenv.FullSuiteOnly(t, "the lifecycle of every public and in-repository chart, past make test's time budget")
	parallelMatrix(t)
	local := testdataPath("charts")
	for _, pc := range publicCharts {
		t.Run(pc.dir, func(t *testing.T) {
			// The in-repository charts run wherever the tests do.
			chart := filepath.Join(local, pc.dir)
			if !pc.local {
				chart = filepath.Join(sharedCharts(t), pc.dir)
			}
			ns := newNamespace(t)
			w := newWorkspace(t, pc.dir)
			var steps []string
			var peak int64
			step := func(name string, code int, args ...string) result {
				t.Helper()
				start := time.Now()
				res, rss := w.measure(args...)
				if res.code != code {
					t.Fatalf("%s: want exit code %d: %s", name, code, res)
				}
				peak = max(peak, rss)
				steps = append(steps, fmt.Sprintf("%s %.1fs", name, time.Since(start).Seconds()))
				return res
			}
			defer func() {
				t.Logf("%s: %s; provider peak RSS %d MB", pc.dir, strings.Join(steps, ", "), peak>>20)
			}()
			keys := func(list []string) []string {
				out := make([]string, len(list))
				for i, k := range list {
					out[i] = strings.ReplaceAll(k, "NS", ns)
				}
				return out
			}

			w.write(publicChartConfig(ns, chart, pc.release, pc.values))
			if len(pc.plannedKnown)+len(pc.plannedUnknown) > 0 {
				step("plan install", 2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=install.plan")
				planned := w.plannedRelease("install.plan")
				known, unknown := planned.Known(), planned.Unknown
				for _, k := range keys(pc.plannedKnown) {
					if !slices.Contains(known, k) {
						t.Errorf("the plan of the install does not show %s; it shows %v, and %v known after apply", k, known, unknown)
					}
				}
				for _, k := range keys(pc.plannedUnknown) {
					if !slices.Contains(unknown, k) {
						t.Errorf("the plan of the install does not plan %s as known after apply; unknown: %v", k, unknown)
					}
				}
			}
			step("install", 0, "apply", "-auto-approve", "-input=false", "-no-color")
			objects := w.stateObjects()
			for _, k := range keys(pc.objects) {
				if !slices.Contains(objects, k) {
					t.Errorf("the release has no %s; it has %v", k, objects)
				}
			}
			for _, k := range keys(pc.absent) {
				if slices.Contains(objects, k) {
					t.Errorf("the release has %s, which its values disable", k)
				}
			}
			step("plan", 0, "plan", "-input=false", "-no-color", "-detailed-exitcode")
			step("plan again", 0, "plan", "-input=false", "-no-color", "-detailed-exitcode")

			if pc.scale != "" {
				kind, name, _ := strings.Cut(pc.scale, "/")
				scaleBy(t, ns, kind, name, 3)
				step("plan drift", 2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=drift.plan")
				if got := w.plannedRelease("drift.plan").Changed(); len(got) != 1 || !strings.HasSuffix(got[0], "/"+ns+"/"+name) {
					t.Errorf("the drift plan changes %v, want only the %s scaled by hand", got, pc.scale)
				}
				step("correct drift", 0, "apply", "-auto-approve", "-input=false", "-no-color", "drift.plan")
				if got := replicas(t, ns, kind, name); got == 3 {
					t.Errorf("%s still has 3 replicas after the drift was corrected", pc.scale)
				}
				step("plan after correction", 0, "plan", "-input=false", "-no-color", "-detailed-exitcode")
			}

			w.write(publicChartConfig(ns, chart, pc.release, pc.upgraded))
			step("plan upgrade", 2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=upgrade.plan")
			if got, want := w.plannedRelease("upgrade.plan").Changed(), keys(pc.upgradeChanges); !slices.Equal(got, want) {
				t.Errorf("the upgrade plans changes of %v, want exactly %v", got, want)
			}
			step("upgrade", 0, "apply", "-auto-approve", "-input=false", "-no-color", "upgrade.plan")
			step("plan after upgrade", 0, "plan", "-input=false", "-no-color", "-detailed-exitcode")

			res := step("destroy", 0, "destroy", "-auto-approve", "-input=false", "-no-color")
			out := res.stdout + res.stderr
			if want := keys(pc.leftBehind); len(want) == 0 {
				if has(out, "Objects left in the cluster") {
					t.Errorf("destroy warns of objects left behind, want none:\n%s", out)
				}
			} else {
				for _, o := range want {
					if !has(out, "- "+o+" (") {
						t.Errorf("destroy does not name %s among the objects left behind:\n%s", o, out)
					}
				}
			}
		})
	}
}

// TestPublicChartRoundsRaceFree installs, upgrades and destroys argo-cd
// (about a hundred objects, many of one kind, and a subchart: the release
// whose destroy crashed the provider on a data race) with the provider
// built with the race detector, which stops it at the first data race,
// at TF_LOG=trace: the code paths of every log level, and the logging
// itself. sensitive_values make the provider mask secrets in its log,
// which is what made concurrent logging unsafe. (One round: the race
// detector makes argo-cd's apply many times slower, and a round with the
// log off runs a subset of the same code.)
func TestPublicChartRoundsRaceFree(t *testing.T) {
	testenv.FullSuiteOnly(t, "argo-cd under a provider built with the race detector")
	parallelMatrix(t)
	charts := sharedCharts(t)
	ns := newNamespace(t)
	w := newWorkspace(t, "rounds")
	// The race detector and the trace log make a provider many times
	// slower, more so on a machine that runs the rest of the suite: a
	// refresh and plan of argo-cd took 7 minutes of such a run.
	w.runTimeout = 40 * time.Minute
	for round, logLevel := range []string{"trace"} {
		w.env = []string{"TF_CLI_CONFIG_FILE=" + raceCLIConfig, "GORACE=halt_on_error=1"}
		if logLevel != "" {
			w.env = append(w.env, "TF_LOG="+logLevel, "TF_LOG_PATH="+filepath.Join(t.TempDir(), "trace.log"))
		}
		for _, values := range []string{`{ server = { replicaCount = 1 } }`, `{ server = { replicaCount = 2 } }`} {
			config := publicChartConfig(ns, filepath.Join(charts, "argo-cd"), "argo", values)
			config = strings.Replace(config, "  values", `  sensitive_values = yamlencode({ config = { secret = { argocdServerAdminPassword = "round-secret-`+strconv.Itoa(round)+`" } } })
  values`, 1)
			w.write(config)
			if res := w.run("apply", "-auto-approve", "-input=false", "-no-color"); res.code != 0 {
				t.Fatalf("round %d (TF_LOG=%q; a data race stops the provider, its report is in the provider's log at TF_LOG=trace): %s", round+1, logLevel, res)
			}
		}
		if res := w.run("destroy", "-auto-approve", "-input=false", "-no-color"); res.code != 0 {
			t.Fatalf("round %d (TF_LOG=%q; a data race stops the provider, its report is in the provider's log at TF_LOG=trace): %s", round+1, logLevel, res)
		}
	}
}

// publicChartConfig is a release of a local chart directory.
func publicChartConfig(ns, chart, release, values string) string {
	return fmt.Sprintf(`terraform {
  required_providers {
    helmrelease = { source = "helmrelease/helmrelease" }
  }
}

provider "helmrelease" {
  kubernetes = { config_path = %q }
}

resource "helmrelease_release" "chart" {
  name            = %q
  namespace       = %q
  chart           = { name = %q }
  values          = %s
  drift_detection = { mode = "enabled" }
}
`, cluster.Kubeconfig, release, ns, chart, values)
}

// measure runs terraform to its end and returns, beside its result, the
// peak resident set size (VmHWM) of the provider processes it started.
func (w *workspace) measure(args ...string) (result, int64) {
	w.t.Helper()
	r := w.start(args...)
	var peak atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			peak.Store(max(peak.Load(), providerPeakRSS(r.cmd.Process.Pid)))
			select {
			case <-r.done:
				return
			case <-tick.C:
			}
		}
	})
	res := r.wait(w.t, 10*time.Minute)
	wg.Wait()
	return res, peak.Load()
}

// providerPeakRSS is the largest VmHWM of the provider processes in the
// process group pgid.
func providerPeakRSS(pgid int) int64 {
	var peak int64
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces.
		_, rest, ok := strings.Cut(string(stat), ") ")
		fields := strings.Fields(rest)
		if !ok || len(fields) < 3 || fields[2] != strconv.Itoa(pgid) {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err != nil || filepath.Base(exe) != "terraform-provider-helmrelease" {
			continue
		}
		peak = max(peak, testrepo.PeakRSS(filepath.Join("/proc", e.Name(), "status")))
	}
	return peak
}

// stateObjects are the keys of resources of the release in the state.
func (w *workspace) stateObjects() []string {
	w.t.Helper()
	return slices.Sorted(maps.Keys(w.stateResources()))
}

// stateResources is the resources attribute of the state's release.
func (w *workspace) stateResources() map[string]string {
	w.t.Helper()
	res := w.must(0, "show", "-json")
	var state struct {
		Values struct {
			RootModule struct {
				Resources []struct {
					Type   string `json:"type"`
					Values struct {
						Resources map[string]string `json:"resources"`
					} `json:"values"`
				} `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &state); err != nil {
		w.t.Fatalf("terraform show -json: %v", err)
	}
	for _, r := range state.Values.RootModule.Resources {
		if r.Type == "helmrelease_release" {
			return r.Values.Resources
		}
	}
	return nil
}

// plannedRelease is the change a plan file plans for its release, as
// `terraform show -json` tells it.
type plannedRelease struct {
	// Before and After are resources before and after the change; After
	// lacks what is known after apply.
	Before, After map[string]string
	// Unknown are the keys of resources known after apply; AllUnknown is
	// set when resources is, whole.
	Unknown    []string
	AllUnknown bool
	// PlannedAction is planned_action (nil when null).
	PlannedAction *string
	// PlannedChanges is planned_changes (nil when null or unknown).
	PlannedChanges map[string]string
	// PlannedHooks is planned_hooks (nil when null or unknown).
	PlannedHooks map[string]string
}

// plannedRelease reads the change of the plan file's helmrelease_release.
func (w *workspace) plannedRelease(planFile string) plannedRelease {
	w.t.Helper()
	res := w.must(0, "show", "-json", planFile)
	var plan struct {
		ResourceChanges []struct {
			Type   string `json:"type"`
			Change struct {
				Before struct {
					Resources map[string]string `json:"resources"`
				} `json:"before"`
				After struct {
					Resources      map[string]string `json:"resources"`
					PlannedAction  *string           `json:"planned_action"`
					PlannedChanges map[string]string `json:"planned_changes"`
					PlannedHooks   map[string]string `json:"planned_hooks"`
				} `json:"after"`
				AfterUnknown struct {
					Resources json.RawMessage `json:"resources"`
				} `json:"after_unknown"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &plan); err != nil {
		w.t.Fatalf("terraform show -json: %v", err)
	}
	for _, rc := range plan.ResourceChanges {
		if rc.Type != "helmrelease_release" {
			continue
		}
		out := plannedRelease{Before: rc.Change.Before.Resources, After: rc.Change.After.Resources, PlannedAction: rc.Change.After.PlannedAction,
			PlannedChanges: rc.Change.After.PlannedChanges, PlannedHooks: rc.Change.After.PlannedHooks}
		var marks map[string]bool
		if err := json.Unmarshal(rc.Change.AfterUnknown.Resources, &marks); err != nil {
			// Not a map of marks: true, resources unknown whole.
			out.AllUnknown = string(rc.Change.AfterUnknown.Resources) == "true"
		}
		for k, u := range marks {
			if u {
				out.Unknown = append(out.Unknown, k)
			}
		}
		slices.Sort(out.Unknown)
		return out
	}
	w.t.Fatalf("the plan has no helmrelease_release")
	return plannedRelease{}
}

// Changed are the keys of the objects the change changes, adds, removes
// or leaves known after apply, sorted.
func (p plannedRelease) Changed() []string {
	var out []string
	for k, v := range p.Before {
		if a, ok := p.After[k]; !ok && !slices.Contains(p.Unknown, k) || ok && a != v {
			out = append(out, k)
		}
	}
	for k := range p.After {
		if _, ok := p.Before[k]; !ok {
			out = append(out, k)
		}
	}
	out = append(out, p.Unknown...)
	slices.Sort(out)
	return slices.Compact(out)
}

// Known are the keys of the objects the change shows, sorted.
func (p plannedRelease) Known() []string {
	return slices.Sorted(maps.Keys(p.After))
}

// scaleBy sets the replicas of a Deployment or StatefulSet by hand.
func scaleBy(t *testing.T, ns, kind, name string, replicas int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	patch := []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas))
	var err error
	switch kind {
	case "deployments":
		_, err = clientset.AppsV1().Deployments(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	case "statefulsets":
		_, err = clientset.AppsV1().StatefulSets(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	default:
		t.Fatalf("cannot scale %s", kind)
	}
	if err != nil {
		t.Fatalf("scaling %s/%s: %v", kind, name, err)
	}
}

// replicas reads the replicas of a Deployment or StatefulSet.
func replicas(t *testing.T, ns, kind, name string) int32 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	switch kind {
	case "deployments":
		d, err := clientset.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return *d.Spec.Replicas
	case "statefulsets":
		s, err := clientset.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return *s.Spec.Replicas
	}
	t.Fatalf("no replicas of %s", kind)
	return 0
}
