//go:build unix

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/semver"
	releasecommon "helm.sh/helm/v4/pkg/release/common"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testcluster"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testenv"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

var helmReleases = schema.GroupVersionResource{Group: "helm.toolkit.fluxcd.io", Version: "v2", Resource: "helmreleases"}

// withFluxControllers runs f once per helm-controller version of
// testcluster.FluxVersions, side by side: each version on a local cluster
// of its own (fluxClusterFor: its CRDs are that version's), each run in a
// namespace of its own that a source-controller and that helm-controller,
// started for f alone, watch.
func withFluxControllers(t *testing.T, f func(t *testing.T, run *fluxRun)) {
	t.Helper()
	withFluxControllersOf(t, false, f)
}

// withNewestFluxControllers is withFluxControllers for the newest
// helm-controller only.
func withNewestFluxControllers(t *testing.T, f func(t *testing.T, run *fluxRun)) {
	t.Helper()
	withFluxControllersOf(t, true, f)
}

func withFluxControllersOf(t *testing.T, newestOnly bool, f func(t *testing.T, run *fluxRun)) {
	t.Helper()
	testenv.FullSuiteOnly(t, "Flux's controllers, built from their sources")
	parallelMatrix(t)
	all, err := testcluster.FluxVersions()
	if err != nil {
		t.Fatal(err)
	}
	versions := all[testcluster.HelmController]
	if newestOnly && len(versions) > 0 {
		versions = versions[len(versions)-1:]
	}
	for _, version := range versions {
		t.Run("helm-controller "+version, func(t *testing.T) {
			// t is already parallel (parallelMatrix): one version runs in
			// its slot. Pausing again would queue it behind every test
			// released before it, and the longest matrices (TestConformance,
			// 20 minutes under make test-all's load) would start last.
			if len(versions) > 1 {
				t.Parallel()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
			defer cancel()
			k, err := fluxClusterFor(ctx, version)
			if err != nil {
				t.Fatal(err)
			}
			ns := newNamespaceOn(t, k.cs)
			flux, err := testcluster.StartFluxWith(ctx, testcluster.FluxOptions{Kubeconfig: k.kubeconfig, Dir: t.TempDir(), Namespace: ns, Log: os.Stderr}, version)
			if err != nil {
				testenv.SkipUnlessRequired(t, "needs Flux's controllers, built from the Go module proxy or from the archives "+testcluster.FluxSourcesEnv+" names: "+err.Error())
			}
			defer flux.Stop()
			defer func() {
				if t.Failed() {
					b, _ := os.ReadFile(flux.Logs[testcluster.HelmController])
					lines := strings.Split(strings.TrimSpace(string(b)), "\n")
					t.Logf("helm-controller's last log lines:\n%s", strings.Join(lines[max(0, len(lines)-15):], "\n"))
					b, _ = os.ReadFile(flux.Logs[testcluster.SourceController])
					lines = strings.Split(strings.TrimSpace(string(b)), "\n")
					t.Logf("source-controller's last log lines:\n%s", strings.Join(lines[max(0, len(lines)-25):], "\n"))
				}
			}()
			f(t, &fluxRun{Flux: flux, target: k, ns: ns})
		})
	}
}

// fluxRun is what a Flux test runs against: its namespace on the cluster
// of its helm-controller version, and the controllers that watch it.
type fluxRun struct {
	*testcluster.Flux
	*target
	ns string
}

// config is a configuration of releases in the run's namespace, on its
// cluster.
func (r *fluxRun) config(t *testing.T, repo *testrepo.HTTP) config {
	return config{namespace: r.ns, repo: repo, cacheDir: t.TempDir(), kubernetes: fmt.Sprintf("{ config_path = %q }", r.kubeconfig)}
}

// TestFluxEngine: a release with engine = "flux" through terraform:
// installed by helm-controller from the HelmRelease the apply wrote, an
// empty plan, a value change upgraded by the controller, the HelmRelease
// edited by hand planned back, then destroyed with the controller's
// uninstall; a second release is destroyed with uninstall off and stays.
func TestFluxEngine(t *testing.T) {
	withFluxControllers(t, func(t *testing.T, run *fluxRun) {
		ns := run.ns
		c := run.config(t, newRepository(t))
		st := newStorageOn(t, run.rest, ns)
		dyn := dynamic.NewForConfigOrDie(run.rest)
		ctx := context.Background()
		w := newWorkspace(t, "flux")
		body := func(message string) map[string]string {
			return map[string]string{
				"app": `  engine = "flux"
  values = { message = "` + message + `", copySecrets = true }
  sensitive_values = yamlencode({ password = "flux-secret-value" })`,
				"kept": `  engine = "flux"
  flux = { uninstall_on_destroy = false, interval = "1h" }`,
			}
		}
		w.write(c.hcl(body("one")))
		out := w.apply()
		if strings.Contains(out.stdout+out.stderr, "flux-secret-value") {
			t.Fatal("the sensitive value shows in the apply's output")
		}
		for _, name := range []string{"app", "kept"} {
			latest := st.latest(name)
			if latest == nil || latest.Info.Status != releasecommon.StatusDeployed || latest.Version != 1 {
				t.Fatalf("release %s after apply: %s, want revision 1 deployed", name, st.describe(name))
			}
			hr, err := dyn.Resource(helmReleases).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if v, _, _ := unstructured.NestedString(helmChartOf(t, dyn, hr).Object, "spec", "version"); v != "1.0.0" {
				t.Errorf("HelmRelease %s chart version %q, want the planned 1.0.0", name, v)
			}
			if strings.Contains(string(mustJSON(t, hr.Object)), "flux-secret-value") {
				t.Errorf("HelmRelease %s holds the sensitive value", name)
			}
		}
		// Rendered as the controller renders: its origin labels.
		cm, err := run.cs.CoreV1().ConfigMaps(ns).Get(ctx, "app", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cm.Labels["helm.toolkit.fluxcd.io/name"] != "app" || cm.Data["message"] != "one" {
			t.Errorf("ConfigMap labels %v, message %q; want helm-controller's origin label and message one", cm.Labels, cm.Data["message"])
		}
		w.planIsEmpty()
		// The chart copies the secret into its ConfigMap: the state
		// shows it keyed, as the plan did.
		if state := withoutSensitive(t, w.must(0, "show", "-json").stdout); strings.Contains(state, "flux-secret-value") || !regexp.MustCompile(`password-copy: '?\(sensitive value\) hmac-sha256:`).MatchString(state) {
			t.Errorf("the state shows the copied secret, or not as a keyed hash:\n%s", state)
		}

		// A value change: the plan shows the object, the controller upgrades.
		w.write(c.hcl(body("two")))
		w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=tfplan")
		p := w.plannedRelease(filepath.Join(w.dir, "tfplan"))
		if changed := strings.Join(p.Changed(), ","); changed != "v1/ConfigMap/"+ns+"/app" {
			t.Errorf("a message change plans %q, want the ConfigMap alone", changed)
		}
		w.must(0, "apply", "-input=false", "-no-color", "tfplan")
		if got := configMessageOn(t, run.cs, ns, "app"); got != "two" {
			t.Errorf("message after the upgrade %q, want two", got)
		}
		if v := st.latest("app").Version; v != 2 {
			t.Errorf("revision after the upgrade %d, want 2", v)
		}
		w.planIsEmpty()

		// The HelmRelease edited by hand: planned back, written back.
		patch := []byte(`{"spec":{"values":{"message":"by hand"}}}`)
		if _, err := dyn.Resource(helmReleases).Namespace(ns).Patch(ctx, "app", types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
			t.Fatal(err)
		}
		// The controller watches its HelmReleases: at once, not at the interval.
		st.waitFor("app", 3, releasecommon.StatusDeployed, time.Minute)
		if got := configMessageOn(t, run.cs, ns, "app"); got != "by hand" {
			t.Fatalf("the controller did not roll out the edited HelmRelease: message %q", got)
		}
		res := w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode")
		if !has(res.stdout, "changed outside Terraform") {
			t.Errorf("the plan after an edit of the HelmRelease does not say it was changed outside Terraform:\n%s", res.stdout)
		}
		w.apply()
		if got := configMessageOn(t, run.cs, ns, "app"); got != "two" {
			t.Errorf("message after writing the HelmRelease back %q, want two", got)
		}
		w.planIsEmpty()

		w.must(0, "destroy", "-auto-approve", "-input=false", "-no-color")
		if _, err := dyn.Resource(helmReleases).Namespace(ns).Get(ctx, "app", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("HelmRelease app after destroy: %v, want not found", err)
		}
		if latest := st.latest("app"); latest != nil {
			t.Errorf("release app after destroy: %s, want uninstalled", st.describe("app"))
		}
		if latest := st.latest("kept"); latest == nil || latest.Info.Status != releasecommon.StatusDeployed {
			t.Errorf("release kept after destroy with uninstall_on_destroy = false: %s, want still deployed", st.describe("kept"))
		}
		if left := providerObjects(t, run.rest, ns); len(left) > 0 {
			t.Errorf("after destroy the provider's sources and Secrets are left: %v", left)
		}
	})
}

// sourcesOf are the HelmRepositories of url in namespace ns and the
// Secrets they name, as kind/name.
func sourcesOf(t *testing.T, rc *rest.Config, ns, url string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dyn := dynamic.NewForConfigOrDie(rc)
	list, err := dyn.Resource(schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "helmrepositories"}).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing HelmRepositories: %v", err)
	}
	var out []string
	for _, o := range list.Items {
		if u, _, _ := unstructured.NestedString(o.Object, "spec", "url"); u != url {
			continue
		}
		out = append(out, "HelmRepository/"+o.GetName())
		if secret, _, _ := unstructured.NestedString(o.Object, "spec", "secretRef", "name"); secret != "" {
			if _, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}).Namespace(ns).Get(ctx, secret, metav1.GetOptions{}); err == nil {
				out = append(out, "Secret/"+secret)
			}
		}
	}
	return out
}

// providerObjects are the chart sources and Secrets the provider wrote
// in namespace ns (its managed-by label), as kind/name.
func providerObjects(t *testing.T, rc *rest.Config, ns string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []string
	for kind, gvr := range map[string]schema.GroupVersionResource{
		"HelmRepository": {Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "helmrepositories"},
		"OCIRepository":  {Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "ocirepositories"},
		"GitRepository":  {Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "gitrepositories"},
		"Bucket":         {Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "buckets"},
		"HelmChart":      helmCharts,
		"Secret":         {Version: "v1", Resource: "secrets"},
	} {
		list, err := dynamic.NewForConfigOrDie(rc).Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=terraform-provider-helmrelease"})
		if apierrors.IsNotFound(err) {
			continue // a cluster without Flux's CRDs has none
		}
		if err != nil {
			t.Fatalf("listing %s: %v", kind, err)
		}
		for _, o := range list.Items {
			out = append(out, kind+"/"+o.GetName())
		}
	}
	slices.Sort(out)
	return out
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFluxHandOver: a release installed by the in-process engine is
// handed to helm-controller in place (same objects, one new revision at
// most), then taken back without an uninstall.
func TestFluxHandOver(t *testing.T) {
	withFluxControllers(t, func(t *testing.T, run *fluxRun) {
		ns := run.ns
		c := run.config(t, newRepository(t))
		st := newStorageOn(t, run.rest, ns)
		dyn := dynamic.NewForConfigOrDie(run.rest)
		ctx := context.Background()
		w := newWorkspace(t, "handover")
		w.write(c.hcl(map[string]string{"app": `  values = { message = "one" }`}))
		w.apply()
		uid := deploymentUID(t, run.cs, ns, "app")

		w.write(c.hcl(map[string]string{"app": `  engine = "flux"
  values = { message = "one" }`}))
		w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=tfplan")
		p := w.plannedRelease(filepath.Join(w.dir, "tfplan"))
		if p.PlannedAction == nil || !strings.Contains(*p.PlannedAction, "handed to Flux") {
			t.Errorf("planned_action of the hand-over %v, want it to say the release is handed to Flux", p.PlannedAction)
		}
		w.must(0, "apply", "-input=false", "-no-color", "tfplan")
		if got := deploymentUID(t, run.cs, ns, "app"); got != uid {
			t.Errorf("Deployment uid %s after the hand-over to Flux, want the same %s (no reinstall)", got, uid)
		}
		if latest := st.latest("app"); latest == nil || latest.Version > 2 || latest.Info.Status != releasecommon.StatusDeployed {
			t.Errorf("release after the hand-over to Flux: %s, want revision 1 or 2 deployed", st.describe("app"))
		}
		w.planIsEmpty()
		handed := st.latest("app").Version

		w.write(c.hcl(map[string]string{"app": `  values = { message = "one" }`}))
		w.apply()
		if _, err := dyn.Resource(helmReleases).Namespace(ns).Get(ctx, "app", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("HelmRelease after taking the release back: %v, want not found", err)
		}
		if got := deploymentUID(t, run.cs, ns, "app"); got != uid {
			t.Errorf("Deployment uid %s after taking the release back, want the same %s (no uninstall)", got, uid)
		}
		for _, r := range st.history("app") {
			if r.Version <= handed && r.Info.Status == releasecommon.StatusUninstalled {
				t.Errorf("revision %d was uninstalled when the release was taken back", r.Version)
			}
		}
		if latest := st.latest("app"); latest == nil || latest.Info.Status != releasecommon.StatusDeployed || latest.Version > handed+1 {
			t.Errorf("release after taking it back: %s, want revision %d or %d deployed", st.describe("app"), handed, handed+1)
		}
		w.planIsEmpty()
		w.must(0, "destroy", "-auto-approve", "-input=false", "-no-color")
	})
}

// TestFluxHandOverRecords: what the release records say after hand-overs
// between this provider and each controller. Every Helm 4 writer (this
// provider, helm-controller v1.5 and later) records its apply method:
// installs are server-side ("ssa"), upgrades follow the previous record
// (Helm 4's "auto": client-side, "csa", after a record without one); Helm 3
// (helm-controller v1.4) records none. Every step plans empty after its
// apply, and the release's objects stay in place throughout.
func TestFluxHandOverRecords(t *testing.T) {
	withFluxControllers(t, func(t *testing.T, run *fluxRun) {
		helm4 := semver.Compare(run.Versions[testcluster.HelmController], "v1.5.0") >= 0
		ns := run.ns
		c := run.config(t, newRepository(t))
		st := newStorageOn(t, run.rest, ns)
		w := newWorkspace(t, "records")
		flux := "  engine = \"flux\"\n  values = { message = \"one\" }"
		helm := "  values = { message = \"one\" }"
		seen := map[string]int{} // the newest revision checked, by release
		// want checks the records written since the last call: an install
		// records installed, each later revision follows the one before.
		want := func(name string, byHelm4 bool, installed string) {
			t.Helper()
			h := st.history(name)
			for i, r := range h {
				if r.Version <= seen[name] {
					continue
				}
				method := ""
				switch {
				case !byHelm4:
				case i == 0:
					method = installed
				case h[i-1].ApplyMethod == "ssa":
					method = "ssa"
				default:
					method = "csa"
				}
				if r.ApplyMethod != method {
					t.Errorf("release %s revision %d (%s) records apply_method %q, want %q", name, r.Version, r.Info.Description, r.ApplyMethod, method)
				}
			}
			if len(h) > 0 {
				seen[name] = h[len(h)-1].Version
			}
		}

		// here: installed by this provider, then handed over; there:
		// installed by the controller.
		w.write(c.hcl(map[string]string{"here": helm}))
		w.apply()
		want("here", true, "ssa")
		uids := map[string]string{"here": deploymentUID(t, run.cs, ns, "here")}
		w.write(c.hcl(map[string]string{"here": flux, "there": flux}))
		w.apply()
		w.planIsEmpty()
		want("here", helm4, "")
		want("there", helm4, "ssa")
		uids["there"] = deploymentUID(t, run.cs, ns, "there")

		// Both taken back.
		w.write(c.hcl(map[string]string{"here": helm, "there": helm}))
		w.apply()
		w.planIsEmpty()
		want("here", true, "")
		want("there", true, "")

		// Handed over again, with a change the controller upgrades.
		w.write(c.hcl(map[string]string{"here": helm, "there": strings.Replace(flux, "one", "two", 1)}))
		w.apply()
		w.planIsEmpty()
		want("there", helm4, "")
		if got := configMessageOn(t, run.cs, ns, "there"); got != "two" {
			t.Errorf("message after the controller's upgrade %q, want two", got)
		}
		for name, uid := range uids {
			if got := deploymentUID(t, run.cs, ns, name); got != uid {
				t.Errorf("Deployment %s uid %s after the hand-overs, want the same %s", name, got, uid)
			}
		}
		w.must(0, "destroy", "-auto-approve", "-input=false", "-no-color")
	})
}

// TestFluxFailures: values that make the install fail end the apply with
// the controller's reason at once (Stalled: no retries), so does an
// upgrade that fails under RetryOnFailure (the controller requeues it),
// and a stopped controller is said as such after a minute's grace, well
// within the timeout.
func TestFluxFailures(t *testing.T) {
	withFluxControllers(t, func(t *testing.T, run *fluxRun) {
		c := run.config(t, newRepository(t))
		w := newWorkspace(t, "failures")
		w.write(c.hcl(map[string]string{"app": `  engine = "flux"
  timeout = "15s"
  values = { stuck = true }`}))
		res := w.must(1, "apply", "-auto-approve", "-input=false", "-no-color")
		// "stalled", not "not ready after": Stalled ended the wait, not
		// its timeout.
		if !has(res.stderr, "stalled") || !has(res.stderr, "InstallFailed") {
			t.Errorf("a failed install's error does not carry the controller's reason:\n%s", res.stderr)
		}
		// With a retry, the controller remediates the failed install
		// (uninstall), tries again, and the error says what it ran.
		w.write(c.hcl(map[string]string{"app": `  engine = "flux"
  timeout = "15s"
  install = { remediation = { retries = 1 } }
  values = { stuck = true }`}))
		res = w.must(1, "apply", "-auto-approve", "-input=false", "-no-color")
		if !has(res.stderr, "UninstallSucceeded") || !has(res.stderr, "failures: 2 install") {
			t.Errorf("a failed install with one retry does not carry the remediation the controller ran:\n%s", res.stderr)
		}
		// Fixed values install: the tainted resource is replaced.
		w.write(c.hcl(map[string]string{"app": `  engine = "flux"
  timeout = "2m"`}))
		w.apply()

		// RetryOnFailure: the controller leaves the failed upgrade as it
		// is and requeues it after the interval; the wait ends there, and
		// the next plan upgrades again.
		retrying := `  engine = "flux"
  timeout = "15s"
  upgrade = { strategy = { name = "RetryOnFailure", retry_interval = "1h" } }
  values = { stuck = true }`
		w.write(c.hcl(map[string]string{"app": retrying}))
		res = w.must(1, "apply", "-auto-approve", "-input=false", "-no-color")
		if !has(res.stderr, "the controller retries it after its retry interval (strategy RetryOnFailure)") || !has(res.stderr, "UpgradeFailed") {
			t.Errorf("a failed upgrade under RetryOnFailure:\n%s", res.stderr)
		}
		// helm-controller v1.4.5 has been seen taking the failed release
		// up again within seconds: while it is at work, the plan says so
		// and plans nothing; once it is done, the plan upgrades again.
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(5 * time.Second) {
			res = w.run("plan", "-input=false", "-no-color", "-detailed-exitcode")
			if res.code == 0 && has(res.stdout+res.stderr, "Release being reconciled by Flux") && time.Now().Before(deadline) {
				continue
			}
			if res.code != 2 {
				t.Errorf("the plan after a failed upgrade under RetryOnFailure does not upgrade again:\n%s", res)
			}
			break
		}

		// With no controller running, the apply ends after the grace,
		// not after its 5-minute timeout (and its remediation's).
		run.Stop()
		w.write(c.hcl(map[string]string{"app": `  engine = "flux"
  timeout = "5m"
  values = { message = "unseen" }`}))
		res = w.must(1, "apply", "-auto-approve", "-input=false", "-no-color")
		if !has(res.stderr, "was not taken up within 1m0s of its write") || !has(res.stderr, "no Flux helm-controller handled its latest change") {
			t.Errorf("with no controller running the error does not say so after the grace:\n%s", res.stderr)
		}
	})
}

func deploymentUID(t *testing.T, cs kubernetes.Interface, ns, name string) string {
	t.Helper()
	d, err := cs.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return string(d.UID)
}

// TestFluxImport: a HelmRelease written by hand (as a GitOps repository
// holds it) and installed by the controller is imported into a resource
// with engine = "flux" without a new revision; the apply then owns the
// HelmRelease, and the plan after it is empty.
func TestFluxImport(t *testing.T) {
	withFluxControllers(t, func(t *testing.T, run *fluxRun) {
		ns := run.ns
		repo := newRepository(t)
		c := run.config(t, repo)
		st := newStorageOn(t, run.rest, ns)
		dyn := dynamic.NewForConfigOrDie(run.rest)
		ctx := context.Background()
		for _, obj := range []map[string]any{
			{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "repo-login"}, "stringData": map[string]any{"username": testrepo.Username, "password": testrepo.Password}},
			{"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmRepository", "metadata": map[string]any{"name": "charts"}, "spec": map[string]any{"url": repo.URL, "interval": "1h", "secretRef": map[string]any{"name": "repo-login"}}},
			{"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "metadata": map[string]any{"name": "gitops"}, "spec": map[string]any{
				"interval": "30m",
				"chart":    map[string]any{"spec": map[string]any{"chart": "svc", "version": "1.0.0", "sourceRef": map[string]any{"kind": "HelmRepository", "name": "charts"}}},
				"values":   map[string]any{"message": "from git"},
			}},
		} {
			u := &unstructured.Unstructured{Object: obj}
			gvk := u.GroupVersionKind()
			gvr := schema.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: map[string]string{"Secret": "secrets", "HelmRepository": "helmrepositories", "HelmRelease": "helmreleases"}[gvk.Kind]}
			if _, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, u, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		st.waitFor("gitops", 1, releasecommon.StatusDeployed, 2*time.Minute)

		w := newWorkspace(t, "import")
		w.write(c.hcl(map[string]string{"gitops": `  engine = "flux"
  flux   = { interval = "30m" }
  values = { message = "from git" }`}) + `
import {
  to = helmrelease_release.gitops
  id = "` + ns + `/gitops"
}
`)
		res := w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode")
		if !has(res.stdout, "1 to import") || has(res.stdout, "planned_action") {
			t.Errorf("the import plan is not an import without a Helm action:\n%s", res.stdout)
		}
		w.apply()
		if latest := st.latest("gitops"); latest == nil || latest.Version != 1 {
			t.Errorf("release after the import's apply: %s, want revision 1 still", st.describe("gitops"))
		}
		hr, err := dyn.Resource(helmReleases).Namespace(ns).Get(ctx, "gitops", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ready := readyStatus(hr); ready != "True" {
			t.Errorf("HelmRelease Ready=%s after the import's apply", ready)
		}
		w.planIsEmpty()
	})
}

func readyStatus(u *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == "Ready" {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}

// TestFluxManyReleases: ten releases handed to the controller in one
// apply (Terraform's default parallelism) are each installed once and
// planned empty, then destroyed.
func TestFluxManyReleases(t *testing.T) {
	withFluxControllers(t, func(t *testing.T, run *fluxRun) {
		ns := run.ns
		c := run.config(t, newRepository(t))
		st := newStorageOn(t, run.rest, ns)
		resources := map[string]string{}
		for i := range 10 {
			resources[fmt.Sprintf("app%d", i)] = `  engine = "flux"
  values = { message = "release ` + strconv.Itoa(i) + `" }`
		}
		w := newWorkspace(t, "many")
		w.write(c.hcl(resources))
		w.apply()
		for name := range resources {
			if latest := st.latest(name); latest == nil || latest.Version != 1 || latest.Info.Status != releasecommon.StatusDeployed {
				t.Errorf("release %s: %s, want revision 1 deployed", name, st.describe(name))
			}
		}
		w.planIsEmpty()
		w.must(0, "destroy", "-auto-approve", "-input=false", "-no-color")
		for name := range resources {
			if latest := st.latest(name); latest != nil {
				t.Errorf("release %s after destroy: %s, want uninstalled", name, st.describe(name))
			}
		}
	})
}

// TestFluxHealthChecks: health_check_exprs handed to helm-controller:
// v1.5 waits until the expression holds (a ConfigMap whose message is not
// "ready" yet fails the install, then a release whose message is installs
// and is Ready); against v1.4, whose HelmRelease has no healthCheckExprs,
// the plan refuses them instead of the controller dropping them.
func TestFluxHealthChecks(t *testing.T) {
	withFluxControllers(t, func(t *testing.T, run *fluxRun) {
		ns := run.ns
		c := run.config(t, newRepository(t))
		w := newWorkspace(t, "health")
		// The check that never holds fails at its timeout; the one that
		// holds gets minutes, however loaded the machine.
		release := func(message, timeout string) string {
			return c.hcl(map[string]string{"app": fmt.Sprintf(`  engine = "flux"
  timeout = %q
  values = { message = %q }
  health_check_exprs = [{
    api_version = "v1"
    kind        = "ConfigMap"
    current     = "data.message == 'ready'"
  }]`, timeout, message)})
		}
		w.write(release("starting", "20s"))
		if v := run.Versions[testcluster.HelmController]; strings.HasPrefix(v, "v1.4.") {
			res := w.must(1, "plan", "-input=false", "-no-color")
			if !has(res.stderr, "has no spec.healthCheckExprs: its helm-controller is older than v1.5") {
				t.Errorf("health checks against helm-controller %s:\n%s", v, res.stderr)
			}
			return
		}
		res := w.must(1, "apply", "-auto-approve", "-input=false", "-no-color")
		if !has(res.stderr, "InstallFailed") || !has(res.stderr, "ConfigMap") {
			t.Errorf("an install whose health check never holds: the error does not name the failed install and the ConfigMap:\n%s", res.stderr)
		}
		t.Logf("what the failed install says:\n%s", res.stderr)
		w.write(release("ready", "5m"))
		w.apply()
		hr, err := dynamic.NewForConfigOrDie(run.rest).Resource(helmReleases).Namespace(ns).Get(context.Background(), "app", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		exprs, _, _ := unstructured.NestedSlice(hr.Object, "spec", "healthCheckExprs")
		strategy, _, _ := unstructured.NestedString(hr.Object, "spec", "waitStrategy", "name")
		if len(exprs) != 1 || strategy != "poller" {
			t.Errorf("the HelmRelease holds healthCheckExprs %v and waitStrategy %q, want the one check and poller", exprs, strategy)
		}
		w.planIsEmpty()
	})
}

// TestFluxPublicCharts: the public charts podinfo and postgresql, handed
// to every helm-controller version: the install and an upgrade apply
// without a render difference between the plan and what the controller
// deployed, and the plans after them are empty.
func TestFluxPublicCharts(t *testing.T) {
	charts := sharedCharts(t)
	withFluxControllers(t, func(t *testing.T, run *fluxRun) {
		for _, pc := range publicCharts {
			if pc.local || pc.dir == "argo-cd" { // argo-cd: the manual runs; too long for each version here
				continue
			}
			t.Run(pc.dir, func(t *testing.T) {
				repo := testrepo.NewHTTP(t)
				repo.Add(t, testrepo.LoadChart(t, filepath.Join(charts, pc.dir), "1.0.0"), nil)
				c := run.config(t, repo)
				w := newWorkspace(t, pc.dir)
				write := func(values string) {
					w.write(fmt.Sprintf(`terraform {
  required_providers {
    helmrelease = { source = "helmrelease/helmrelease" }
  }
}

provider "helmrelease" {
  kubernetes = %s
  cache_dir  = %q
}

resource "helmrelease_release" "this" {
  name      = %q
  namespace = %q
  engine    = "flux"
  timeout   = "3m"
  chart     = { name = %q, version = "1.0.0", repository = %q, username = %q, password = %q }
  values    = %s
}
`, c.kubernetes, c.cacheDir, pc.release, run.ns, pc.dir, repo.URL, testrepo.Username, repo.Password, values))
				}
				write(pc.values)
				w.apply()
				w.planIsEmpty()
				write(pc.upgraded)
				w.apply()
				w.planIsEmpty()
				w.must(0, "destroy", "-auto-approve", "-input=false", "-no-color")
			})
		}
	})
}

// TestFluxEmptyFields: objects written with empty maps and lists (a
// chart's `annotations: {}`, as kube-prometheus-stack's dashboards have
// them), which the API server stores as absent, install under every
// controller as planned: no render difference, and an empty plan after.
func TestFluxEmptyFields(t *testing.T) {
	withFluxControllers(t, func(t *testing.T, run *fluxRun) {
		repo := testrepo.NewHTTP(t)
		repo.Add(t, testrepo.LoadChart(t, testdataPath("charts", "dashboards"), "1.0.0"), nil)
		c := run.config(t, repo)
		c.chart = "dashboards"
		w := newWorkspace(t, "dashboards")
		w.write(c.hcl(map[string]string{"grafana": `  engine = "flux"`}))
		w.apply()
		w.planIsEmpty()
		cm, err := run.cs.CoreV1().ConfigMaps(run.ns).Get(context.Background(), "grafana-dashboard", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for k := range cm.Annotations {
			if !strings.HasPrefix(k, "meta.helm.sh/") {
				t.Errorf("ConfigMap annotation %s: want Helm's only (the chart's are empty)", k)
			}
		}
		if cm.Labels["grafana_dashboard"] != "1" {
			t.Errorf("ConfigMap labels %v: want the chart's grafana_dashboard", cm.Labels)
		}
		w.must(0, "destroy", "-auto-approve", "-input=false", "-no-color")
	})
}

// helmChartOf is the HelmChart the HelmRelease's spec.chartRef names (the
// one the provider shares among the releases of a Helm repository's
// chart), in its namespace.
func helmChartOf(t *testing.T, dyn dynamic.Interface, hr *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	ref, _, _ := unstructured.NestedStringMap(hr.Object, "spec", "chartRef")
	if ref["kind"] != "HelmChart" {
		t.Fatalf("HelmRelease %s's chartRef %v names no HelmChart", hr.GetName(), ref)
	}
	hc, err := dyn.Resource(helmCharts).Namespace(hr.GetNamespace()).Get(context.Background(), ref["name"], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return hc
}

// TestFluxNoWait: with flux.wait = false the apply returns once
// helm-controller has taken up the HelmRelease, before its outcome; the
// next plan reports the outcome: a failed install as the stall it is,
// with the controller's reason, and, once fixed, an upgrade the
// controller finishes after the apply, then an empty plan; a plan made
// while the controller holds a release back plans nothing and says so.
func TestFluxNoWait(t *testing.T) {
	withNewestFluxControllers(t, func(t *testing.T, run *fluxRun) {
		c := run.config(t, newRepository(t))
		w := newWorkspace(t, "no-wait")
		release := func(values string) string {
			return "  engine = \"flux\"\n  timeout = \"20s\"\n  flux = { wait = false }\n  values = " + values
		}
		hrStatus := func() (ready, stalled *metav1.Condition, hr *unstructured.Unstructured) {
			t.Helper()
			got, err := dynamic.NewForConfigOrDie(run.rest).Resource(helmReleases).Namespace(run.ns).Get(context.Background(), "app", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			conditions, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			for _, raw := range conditions {
				m, _ := raw.(map[string]any)
				c := &metav1.Condition{Type: fmt.Sprint(m["type"]), Status: metav1.ConditionStatus(fmt.Sprint(m["status"])), Reason: fmt.Sprint(m["reason"]), Message: fmt.Sprint(m["message"])}
				switch c.Type {
				case "Ready":
					ready = c
				case "Stalled":
					stalled = c
				}
			}
			return ready, stalled, got
		}
		waitFor := func(what string, done func(ready, stalled *metav1.Condition) bool) {
			t.Helper()
			if err := wait.PollUntilContextTimeout(context.Background(), time.Second, 2*time.Minute, true, func(context.Context) (bool, error) {
				ready, stalled, _ := hrStatus()
				return done(ready, stalled), nil
			}); err != nil {
				ready, stalled, _ := hrStatus()
				t.Fatalf("waiting for %s: %v (Ready %+v, Stalled %+v)", what, err, ready, stalled)
			}
		}

		// An install the controller's Helm waits 20 s for, and fails.
		w.write(c.hcl(map[string]string{"app": release("{ stuck = true }")}))
		w.apply()
		st := w.statuses()["app"]
		if st.Ready || len(st.History) > 0 {
			t.Errorf("the apply waited for the outcome: status %+v, want the controller at work with no revision yet", st)
		}
		if ready, _, _ := hrStatus(); ready != nil && ready.Status == metav1.ConditionFalse && ready.Reason == "InstallFailed" {
			t.Errorf("the apply returned after the controller's failed install (%s), not once it took the HelmRelease up", ready.Message)
		}
		waitFor("the failed install", func(_, stalled *metav1.Condition) bool {
			return stalled != nil && stalled.Status == metav1.ConditionTrue
		})
		res := w.must(0, "plan", "-input=false", "-no-color", "-detailed-exitcode")
		if out := res.stdout + res.stderr; !has(out, "Release stalled: retries exhausted") {
			t.Errorf("the plan after the failed install does not report it:\n%s", out)
		}

		// Fixed: the apply writes the HelmRelease and returns; the
		// controller upgrades after it, and the plan then is empty.
		w.write(c.hcl(map[string]string{"app": release(`{ message = "fixed" }`)}))
		res = w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode")
		if !has(res.stdout, "values changed") {
			t.Errorf("the fix plans no upgrade:\n%s", res.stdout)
		}
		w.apply()
		waitFor("the fixed release", func(ready, _ *metav1.Condition) bool { return ready != nil && ready.Status == metav1.ConditionTrue })
		w.planIsEmpty()
		if got := configMessageOn(t, run.cs, run.ns, "app"); got != "fixed" {
			t.Errorf("message %q after the controller's upgrade, want fixed", got)
		}
		w.must(0, "apply", "-refresh-only", "-auto-approve", "-input=false", "-no-color")
		if st := w.statuses()["app"]; !st.Ready || len(st.History) == 0 || st.History[0].Status != "deployed" {
			t.Errorf("after a refresh the state's status is %+v, want ready with a deployed revision", st)
		}

		// A release the controller holds back (a dependency that never
		// comes): taken up, never finished. A plan meanwhile says the
		// controller is at work and plans nothing, not the install again.
		w.write(c.hcl(map[string]string{"app": release(`{ message = "fixed" }`), "late": `  engine = "flux"
  flux = { wait = false, depends_on = [{ name = "missing" }] }`}))
		w.apply()
		res = w.must(0, "plan", "-input=false", "-no-color", "-detailed-exitcode")
		if out := res.stdout + res.stderr; !has(out, "helm-controller is at work") {
			t.Errorf("a plan while the controller holds the release back does not say it is at work:\n%s", out)
		}
	})
}
