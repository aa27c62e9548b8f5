//go:build unix

package e2e

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	chartutil "helm.sh/helm/v4/pkg/chart/common"
	releasecommon "helm.sh/helm/v4/pkg/release/common"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testcluster"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testenv"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// engineEnv is where a row of the engine contract runs: an engine, a
// namespace of a cluster and, for the Flux engine, the controllers that
// watch it.
type engineEnv struct {
	engine string
	ns     string
	c      config
	rest   *rest.Config
	cs     kubernetes.Interface
	st     *storage
	// kubeconfig of the cluster.
	kubeconfig string
	// cli is the Terraform CLI the row runs: empty is terraform, else an
	// OpenTofu binary.
	cli string
}

// workspace is a new workspace of the row, run with env's CLI.
func (env *engineEnv) workspace(t *testing.T, name string) *workspace {
	w := newWorkspace(t, name)
	w.bin = env.cli
	return w
}

func (env *engineEnv) flux() bool { return env.engine == "flux" }

// body is the HCL body of a release of the svc chart with the engine.
func (env *engineEnv) body(lines ...string) string {
	return "  engine = \"" + env.engine + "\"\n  " + strings.Join(lines, "\n  ")
}

// contractRows are the promises both engines keep, or refuse alike.
// A row whose promise the provider keeps before it hands the release to
// the controller (newestFlux) runs on the newest helm-controller only.
// A row of savedPlan runs on OpenTofu too (TestSavedPlansOnOpenTofu).
var contractRows = []struct {
	name       string
	run        func(t *testing.T, env *engineEnv)
	newestFlux bool
	savedPlan  bool
}{
	{"plan while another operation runs", contractBusyPlan, false, false},
	{"a saved plan applied after the repository moved", contractSavedPlan, true, true},
	{"a saved plan applied after an OCI tag was pushed again", contractSavedPlanOCI, true, true},
	{"a saved plan applied after its values_from Secret changed", contractSavedPlanValuesFrom, true, true},
	{"a saved plan applied after an object its chart looks up changed", contractSavedPlanLookup, true, true},
	{"a chart whose Chart.lock pins a dependency charts/ lacks", contractChartLock, true, true},
	{"a saved plan of no Helm action from a chart no refresh pins", contractSavedPlanUnpinned, true, true},
	{"two states declaring one release", contractTwoStates, false, false},
	{"force and reset actions", contractActions, false, false},
	{"a render the controller makes otherwise", contractRenderDiffers, false, false},
	{"a failed create", contractFailedCreate, false, false},
	{"namespaces that go with their release", contractDeleteNamespace, true, false},
	{"an operator and its custom resources in one apply", contractOperator, true, false},
	{"a release gated on a kind its dependency brings", contractGatedOnKind, true, false},
	{"a public chart gated on a kind its dependency brings", contractGatedOnKindPublic, true, false},
}

// TestSavedPlansOnOpenTofu runs the saved-plan rows of the engine
// contract with OpenTofu in place of terraform, on the helm engine: a
// plan file of OpenTofu keeps the same word (make test-all).
func TestSavedPlansOnOpenTofu(t *testing.T) {
	testenv.FullSuiteOnly(t, "the saved-plan rows of the engine contract on OpenTofu")
	parallelMatrix(t)
	tofu := os.Getenv("HELMRELEASE_TEST_OPENTOFU")
	if tofu == "" {
		testenv.SkipUnlessRequired(t, "needs OpenTofu: set HELMRELEASE_TEST_OPENTOFU to a tofu binary (make test-all builds one from tools/tofu)")
	}
	for _, row := range contractRows {
		if !row.savedPlan {
			continue
		}
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			env := &engineEnv{engine: "helm", ns: ns, rest: restConfig, cs: clientset, st: newStorage(t, ns), kubeconfig: cluster.Kubeconfig,
				c: config{namespace: ns, repo: newRepository(t), cacheDir: t.TempDir()}, cli: tofu}
			row.run(t, env)
		})
	}
}

// TestEngineContract runs each row against the in-process engine, and
// against Flux's helm-controller of every version testcluster builds (the
// newest only for rows of newestFlux), through the real terraform.
func TestEngineContract(t *testing.T) {
	parallelMatrix(t)
	t.Run("engine helm", func(t *testing.T) {
		t.Parallel()
		for _, row := range contractRows {
			t.Run(row.name, func(t *testing.T) {
				t.Parallel()
				ns := newNamespace(t)
				env := &engineEnv{engine: "helm", ns: ns, rest: restConfig, cs: clientset, st: newStorage(t, ns), kubeconfig: cluster.Kubeconfig,
					c: config{namespace: ns, repo: newRepository(t), cacheDir: t.TempDir()}}
				row.run(t, env)
			})
		}
	})
	t.Run("engine flux", func(t *testing.T) {
		all, err := testcluster.FluxVersions()
		if err != nil {
			t.Fatal(err)
		}
		versions := all[testcluster.HelmController]
		withFluxControllers(t, func(t *testing.T, run *fluxRun) {
			newest := run.Versions[testcluster.HelmController] == versions[len(versions)-1]
			// One group: the controllers stop when it returns.
			t.Run("rows", func(t *testing.T) {
				for _, row := range contractRows {
					if row.newestFlux && !newest {
						continue
					}
					t.Run(row.name, func(t *testing.T) {
						t.Parallel()
						env := &engineEnv{engine: "flux", ns: run.ns, rest: run.rest, cs: run.cs, st: newStorageOn(t, run.rest, run.ns), kubeconfig: run.kubeconfig,
							c: run.config(t, newRepository(t))}
						row.run(t, env)
					})
				}
			})
		})
	})
}

// contractBusyPlan: a plan made while another operation holds the
// release's lock succeeds and says so: helm-controller's own upgrade (a
// HelmRelease edited by hand) for the Flux engine, another Helm client's
// for the helm engine. Both run a pre-upgrade hook that never completes,
// so the lock is held for their timeout.
func contractBusyPlan(t *testing.T, env *engineEnv) {
	const name = "busy"
	w := newWorkspace(t, "busy")
	w.write(env.c.hcl(map[string]string{name: env.body(`values = { message = "one" }`, `timeout = "30s"`)}))
	w.apply()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	other := map[string]any{"message": "by hand", "hook": true, "hookStuck": true}
	var otherDone chan error
	if env.flux() {
		patch := []byte(`{"spec":{"values":{"message":"by hand","hook":true,"hookStuck":true}}}`)
		if _, err := dynamic.NewForConfigOrDie(env.rest).Resource(helmReleases).Namespace(env.ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
			t.Fatal(err)
		}
	} else {
		c, err := helm.NewClient(helm.ClientOptions{Getter: kube.NewGetter(env.rest, env.ns, ""), StorageNamespace: env.ns})
		if err != nil {
			t.Fatal(err)
		}
		chart := testrepo.LoadChart(t, testdataPath("charts", "svc"), "1.0.0")
		otherDone = make(chan error, 1)
		go func() {
			_, err := c.Upgrade(ctx, name, chart, other, helm.UpgradeOptions{Namespace: env.ns, Timeout: 30 * time.Second, Wait: true, ReuseValues: false})
			otherDone <- err
		}()
	}
	waitPending(t, env.st, name, 2*time.Minute)

	res := w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode")
	want := "run by another Helm client"
	if env.flux() {
		want = "helm-controller is at work on the release now"
	}
	if !has(res.stdout, want) {
		t.Errorf("the plan made while the release is locked does not say %q:\n%s", want, res.stdout)
	}
	if env.flux() {
		// The apply writes the HelmRelease back and waits for the
		// controller to end its upgrade, then to reconcile it.
		w.apply()
	} else {
		// Its hook never completes: it fails at its timeout.
		if err := <-otherDone; err == nil {
			t.Error("the other client's upgrade succeeded, its hook never completing")
		}
		w.apply()
	}
	if got := configMessageOn(t, env.cs, env.ns, name); got != "one" {
		t.Errorf("message after the apply %q, want one", got)
	}
	w.planIsEmpty()
}

// contractSavedPlan: a plan saved with a version range, applied after
// the repository published a newer version in the range, on a machine
// whose cache_dir is empty, deploys the version the plan showed; the
// next plan shows the newer one. A version the plan showed, published
// again with another archive before the apply, fails the apply with
// this provider's diagnostic naming both digests, never Terraform's
// "inconsistent final plan", and deploys nothing. The plan of a create,
// which nothing can pin, says so and shows the chart as known after
// apply: its apply deploys what the range resolves to then.
func contractSavedPlan(t *testing.T, env *engineEnv) {
	const name = "saved"
	svc := func(version, appVersion string) {
		c := testrepo.LoadChart(t, testdataPath("charts", "svc"), version)
		c.Metadata.AppVersion = appVersion
		env.c.repo.Add(t, c, nil)
	}
	deployed := func(want string) {
		t.Helper()
		if latest := env.st.latest(name); latest == nil || latest.Chart.Metadata.Version != want {
			t.Errorf("release %s: %s, want chart %s deployed", name, env.st.describe(name), want)
		}
	}
	c := env.c
	c.version = "1.*"
	w := env.workspace(t, "saved")
	w.write(c.hcl(map[string]string{name: env.body(`values = { message = "one" }`)}))
	res := w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=tfplan")
	if !has(res.stdout+res.stderr, "Chart known after apply") || !has(res.stdout+res.stderr, "it resolves to 1.0.0 (digest") || !has(res.stdout, "chart_version") {
		t.Errorf("the plan of a create from a range does not say its chart is known after apply:\n%s", res)
	}
	svc("1.0.1", "published after the create's plan")
	emptyDir(t, env.c.cacheDir)
	res = w.must(0, "apply", "-input=false", "-no-color", "tfplan")
	if strings.Contains(res.stderr, "inconsistent") {
		t.Errorf("the create's apply:\n%s", res)
	}
	deployed("1.0.1")
	w.planIsEmpty()

	svc("1.0.2", "planned")
	res = w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=tfplan")
	if !has(res.stdout, `chart version \"1.0.1\" → \"1.0.2\"`) {
		t.Errorf("the plan does not show the upgrade to 1.0.2:\n%s", res.stdout)
	}
	svc("1.1.0", "published after the plan")
	emptyDir(t, env.c.cacheDir)
	res = w.must(0, "apply", "-input=false", "-no-color", "tfplan")
	deployed("1.0.2")
	if strings.Contains(res.stdout+res.stderr, "1.1.0") {
		t.Errorf("the apply of the plan to 1.0.2 speaks of 1.1.0:\n%s", res)
	}
	res = w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode")
	if !has(res.stdout, `chart version \"1.0.2\" → \"1.1.0\"`) {
		t.Errorf("the plan after the apply does not show the newer 1.1.0:\n%s", res.stdout)
	}

	w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=tfplan")
	svc("1.1.0", "published again")
	emptyDir(t, env.c.cacheDir)
	res = w.must(1, "apply", "-input=false", "-no-color", "tfplan")
	if !has(res.stderr, "Chart changed since the plan") || !has(res.stderr, "published again") || strings.Contains(res.stderr, "inconsistent") {
		t.Errorf("the apply of a plan whose version was published again does not fail with the provider's own diagnostic:\n%s", res.stderr)
	}
	deployed("1.0.2")
	w.apply()
	deployed("1.1.0")
	if latest := env.st.latest(name); latest != nil && latest.Chart.Metadata.AppVersion != "published again" {
		t.Errorf("the new plan's apply deployed app version %q, want the chart published again", latest.Chart.Metadata.AppVersion)
	}
	w.planIsEmpty()
}

// contractSavedPlanUnpinned: a release whose repository password is
// write-only cannot be pinned by a refresh, which has no credentials. An
// update that runs no Helm action (the password rotated, its version
// bumped) plans its chart as known after apply and says why: a version
// published before its apply is deployed, never Terraform's "inconsistent
// final plan". A plan of no change stays empty.
func contractSavedPlanUnpinned(t *testing.T, env *engineEnv) {
	const name = "rotated"
	c := env.c
	c.version = "1.*"
	hcl := func(passwordVersion int) string {
		inline := fmt.Sprintf("password   = %q", testrepo.Password)
		out := c.hcl(map[string]string{name: env.body(`values = { message = "one" }`)})
		if !strings.Contains(out, inline) {
			t.Fatalf("no password line in the configuration:\n%s", out)
		}
		return strings.Replace(out, inline, fmt.Sprintf("password_wo = %q\n    password_wo_version = %d", testrepo.Password, passwordVersion), 1)
	}
	w := env.workspace(t, "unpinned")
	w.write(hcl(1))
	w.apply()
	w.planIsEmpty()

	w.write(hcl(2))
	res := w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=tfplan")
	if !has(res.stdout+res.stderr, "Chart known after apply") || !has(res.stdout+res.stderr, "no Helm action") {
		t.Errorf("the plan of an update no refresh pinned does not say its chart is known after apply:\n%s", res)
	}
	c2 := testrepo.LoadChart(t, testdataPath("charts", "svc"), "1.0.1")
	env.c.repo.Add(t, c2, nil)
	res = w.must(0, "apply", "-input=false", "-no-color", "tfplan")
	if has(res.stdout+res.stderr, "inconsistent") {
		t.Errorf("the apply ends in Terraform's error:\n%s", res)
	}
	if latest := env.st.latest(name); latest == nil || latest.Chart.Metadata.Version != "1.0.1" {
		t.Errorf("release %s: %s, want chart 1.0.1 deployed", name, env.st.describe(name))
	}
	w.planIsEmpty()
}

// contractSavedPlanOCI: OCI tags pushed again between a saved plan and
// its apply, on a machine whose cache_dir is empty. The plan of a create
// from a tag says its chart is known after apply and names the manifest
// digest to write instead; its apply deploys what the tag names then. The
// plan of an upgrade (pinned by the refresh) deploys the manifest it
// planned however the tag moved; a create naming the manifest by its
// digest plans its chart, and deploys that manifest. The next plan sees
// the tag's newest push.
func contractSavedPlanOCI(t *testing.T, env *engineEnv) {
	oci := testrepo.NewOCI(t)
	push := func(appVersion string) string {
		c := testrepo.LoadChart(t, testdataPath("charts", "svc"), "1.0.0")
		c.Metadata.AppVersion = appVersion
		oci.Push(t, c, nil)
		return oci.Digest(t, "svc", "1.0.0")
	}
	deployed := func(name, appVersion, message string) {
		t.Helper()
		latest := env.st.latest(name)
		if latest == nil || latest.Chart.Metadata.AppVersion != appVersion || latest.Config["message"] != message {
			t.Errorf("release %s: %s, want the push %q deployed with message %q", name, env.st.describe(name), appVersion, message)
		}
	}
	release := func(name, version, message string) string {
		return fmt.Sprintf(`
resource "helmrelease_release" %[1]q {
  name      = %[1]q
  namespace = %[2]q
  engine    = %[3]q
  chart = {
    name       = "svc"
    repository = %[4]q
    version    = %[5]q
    username   = %[6]q
    password   = %[7]q
    ca_file    = %[8]q
  }
  values = { message = %[9]q }
}
`, name, env.ns, env.engine, oci.URL, version, testrepo.Username, testrepo.Password, oci.CAFile, message)
	}
	first := push("first push")
	w := env.workspace(t, "saved-oci")
	w.write(env.c.hcl(nil) + release("tag", "1.0.0", "one"))
	res := w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=tfplan")
	if !has(res.stdout+res.stderr, "Chart known after apply") || !has(res.stdout+res.stderr, `chart.version = "1.0.0@`+first+`"`) {
		t.Errorf("the plan of a create from an OCI tag does not say its chart is known after apply, naming the digest to write:\n%s", res)
	}
	second := push("pushed again")
	emptyDir(t, env.c.cacheDir)
	res = w.must(0, "apply", "-input=false", "-no-color", "tfplan")
	if strings.Contains(res.stderr, "inconsistent") {
		t.Errorf("the create's apply:\n%s", res)
	}
	deployed("tag", "pushed again", "one")
	w.planIsEmpty()

	w.write(env.c.hcl(nil) + release("tag", "1.0.0", "two") + release("digest", "1.0.0@"+second, "two"))
	res = w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=tfplan")
	if has(res.stdout+res.stderr, "Chart known after apply") || !has(res.stdout, shortDigest(second)) {
		t.Errorf("the plan of an upgrade, and of a create naming a manifest by its digest, does not show their chart:\n%s", res)
	}
	third := push("third push")
	emptyDir(t, env.c.cacheDir)
	res = w.must(0, "apply", "-input=false", "-no-color", "tfplan")
	if strings.Contains(res.stdout+res.stderr, shortDigest(third)) {
		t.Errorf("the apply of the plan speaks of the third push, %s:\n%s", third, res)
	}
	deployed("tag", "pushed again", "two")
	deployed("digest", "pushed again", "two")

	res = w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode")
	if !has(res.stdout, "helmrelease_release.tag will be updated") || !has(res.stdout, shortDigest(third)) || has(res.stdout, "helmrelease_release.digest will be") {
		t.Errorf("the plan after the tag's third push does not upgrade the release of the tag alone:\n%s", res.stdout)
	}
}

// shortDigest is the part of an OCI manifest digest a chart version
// carries as build metadata.
func shortDigest(digest string) string { return strings.TrimPrefix(digest, "sha256:")[:12] }

// emptyDir removes what dir holds, as a machine that never ran the plan
// (an emptied cache_dir) has nothing of it.
func emptyDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
}

// waitPending waits until the newest revision of the release is pending.
func waitPending(t *testing.T, st *storage, name string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if latest := st.latest(name); latest != nil && latest.Info.Status.IsPending() {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("release %s never became pending: %s", name, st.describe(name))
}

// contractTwoStates: a second state declaring the same release is
// warned at plan and refused at apply, which changes nothing; the first
// state's plan stays empty.
func contractTwoStates(t *testing.T, env *engineEnv) {
	const name = "shared"
	first := newWorkspace(t, "first")
	first.write(env.c.hcl(map[string]string{name: env.body(`values = { message = "first" }`)}))
	first.apply()
	revision := env.st.latest(name).Version

	second := newWorkspace(t, "second")
	second.write(env.c.hcl(map[string]string{name: env.body(`values = { message = "second" }`)}))
	res := second.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode")
	if !has(res.stdout, "managed in another state") {
		t.Errorf("the second state's plan does not warn that another state manages the release:\n%s", res.stdout)
	}
	res = second.must(1, "apply", "-auto-approve", "-input=false", "-no-color")
	if !has(res.stderr, "another Terraform state") || !has(res.stderr, "terraform import") {
		t.Errorf("the second state's apply is not refused as managed in another state, with the import remedy:\n%s", res.stderr)
	}
	if got := second.releases(); len(got) != 0 {
		t.Errorf("the refused resource is in the second state: %v", got)
	}
	if got, rev := configMessageOn(t, env.cs, env.ns, name), env.st.latest(name).Version; got != "first" || rev != revision {
		t.Errorf("after the refused apply: message %q revision %d, want first and %d", got, rev, revision)
	}
	if env.flux() {
		hr, err := dynamic.NewForConfigOrDie(env.rest).Resource(helmReleases).Namespace(env.ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if v, _, _ := unstructured.NestedString(hr.Object, "spec", "values", "message"); v != "first" {
			t.Errorf("HelmRelease values after the refused apply: message %q, want first", v)
		}
	}
	first.planIsEmpty()
}

// contractActions: helmrelease_force makes a new revision, and
// helmrelease_reset tries a release whose retries are exhausted again.
// The helm engine records the request for the next apply, which runs it;
// the Flux engine asks helm-controller, which runs it at once.
func contractActions(t *testing.T, env *engineEnv) {
	newer := os.Getenv("HELMRELEASE_TEST_TERRAFORM_NEWER")
	if newer == "" {
		testenv.SkipUnlessRequired(t, "actions need Terraform >= 1.14: set HELMRELEASE_TEST_TERRAFORM_NEWER")
	}
	const name = "asked"
	w := newWorkspace(t, "actions")
	w.bin = newer
	actions := fmt.Sprintf(`
action "helmrelease_force" "x" {
  config {
    namespace = %[1]q
    name      = %[2]q
  }
}

action "helmrelease_reset" "x" {
  config {
    namespace = %[1]q
    name      = %[2]q
  }
}
`, env.ns, name)
	write := func(lines ...string) {
		w.write(env.c.hcl(map[string]string{name: env.body(lines...)}) + actions)
	}
	write(`values = { message = "one" }`, `timeout = "1m"`)
	w.apply()
	revision := env.st.latest(name).Version
	invoke := func(code int, action string) result {
		return w.must(code, "apply", "-auto-approve", "-input=false", "-no-color", "-invoke=action."+action+".x")
	}

	invoke(0, "helmrelease_force")
	if env.flux() {
		if got := env.st.latest(name); got.Version != revision+1 || got.Info.Status != releasecommon.StatusDeployed {
			t.Errorf("after the force action: %s, want revision %d deployed by helm-controller", env.st.describe(name), revision+1)
		}
		if hr := helmReleaseStatus(t, env, name); hr["lastHandledForceAt"] == "" {
			t.Errorf("helm-controller recorded no force request handled: %v", hr)
		}
		w.planIsEmpty()
	} else {
		if got := env.st.latest(name).Version; got != revision {
			t.Errorf("the force action made revision %d itself, want it left to the apply", got)
		}
		res := w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode")
		if !has(res.stdout, "force") {
			t.Errorf("the plan after the force action does not plan it:\n%s", res.stdout)
		}
		w.apply()
		if got := env.st.latest(name).Version; got != revision+1 {
			t.Errorf("after the forced apply: revision %d, want %d", got, revision+1)
		}
		w.planIsEmpty()
	}

	// An upgrade that fails, no retries: stalled until a reset.
	write(`values = { message = "two", stuck = true }`, `timeout = "15s"`)
	w.must(1, "apply", "-auto-approve", "-input=false", "-no-color")
	failed := env.st.latest(name).Version
	if env.flux() {
		// helm-controller tries again at once, and fails again: the
		// action says so.
		res := invoke(1, "helmrelease_reset")
		if !has(res.stderr, "Request not completed") {
			t.Errorf("the reset action's failure does not say the controller took the request:\n%s", res.stderr)
		}
		if hr := helmReleaseStatus(t, env, name); hr["lastHandledResetAt"] == "" {
			t.Errorf("helm-controller recorded no reset request handled: %v", hr)
		}
		if got := env.st.latest(name).Version; got <= failed {
			t.Errorf("after the reset action the newest revision is %d, want an attempt after %d", got, failed)
		}
	} else {
		invoke(0, "helmrelease_reset")
		res := w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode")
		if !has(res.stdout, "reset") {
			t.Errorf("the plan after the reset action does not plan the retry:\n%s", res.stdout)
		}
		w.must(1, "apply", "-auto-approve", "-input=false", "-no-color")
		if got := env.st.latest(name).Version; got <= failed {
			t.Errorf("after the reset and apply the newest revision is %d, want an attempt after %d", got, failed)
		}
	}
	// Helm 3's three-way merge (helm-controller v1.4.5) keeps the
	// nodeSelector the failed upgrades added, which the last deployed
	// revision lacks: the way back replaces the Deployment.
	write(`values = { message = "three" }`, `timeout = "1m"`, `upgrade = { force = true }`)
	w.apply()
	w.planIsEmpty()
}

// helmReleaseStatus is the status of the HelmRelease, as strings.
func helmReleaseStatus(t *testing.T, env *engineEnv, name string) map[string]string {
	t.Helper()
	hr, err := dynamic.NewForConfigOrDie(env.rest).Resource(helmReleases).Namespace(env.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	status, _, _ := unstructured.NestedMap(hr.Object, "status")
	for k, v := range status {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// contractRenderDiffers: a chart whose render says which Helm rendered it
// (.Capabilities.HelmVersion). The helm engine deploys what it planned;
// with a controller whose Helm is another version, the apply fails naming
// the object, the field and both values (never Terraform's "inconsistent
// result"), the state records what is deployed, and the plan after it is
// empty.
func contractRenderDiffers(t *testing.T, env *engineEnv) {
	const name = "versioned"
	w := newWorkspace(t, "versioned")
	w.write(env.c.hcl(map[string]string{name: env.body(`values = { message = "one" }`)}))
	w.apply()
	w.write(env.c.hcl(map[string]string{name: env.body(`values = { message = "one", showHelmVersion = true }`)}))
	ours := chartutil.DefaultCapabilities.HelmVersion.Version
	res := w.run("apply", "-auto-approve", "-input=false", "-no-color")
	deployed := configMapOn(t, env.cs, env.ns, name).Data["helm-version"]
	if has(res.stderr, "inconsistent result") {
		t.Fatalf("Terraform's inconsistent-result error:\n%s", res.stderr)
	}
	switch {
	case deployed == ours && res.code != 0:
		t.Errorf("rendered as planned (%s), but the apply failed:\n%s", ours, res)
	case deployed != ours && !env.flux():
		t.Errorf("the helm engine deployed helm-version %q, want %q as planned", deployed, ours)
	case deployed != ours:
		field := fmt.Sprintf("v1/ConfigMap/%s/%s /data/helm-version: planned %q, deployed %q", env.ns, name, ours, deployed)
		if res.code != 1 || !has(res.stderr, "Controller deployed otherwise than planned") || !has(res.stderr, field) || !has(res.stderr, "helm-controller") {
			t.Errorf("the controller rendered helm-version %q, the plan %q: want the apply to fail naming %q and the controller:\n%s", deployed, ours, field, res)
		}
		t.Logf("helm-controller renders .Capabilities.HelmVersion.Version as %s, this provider as %s", deployed, ours)
	}
	if !has(string(w.stateBytes()), "helm-version: "+deployed) {
		t.Errorf("the state does not record the deployed helm-version %q", deployed)
	}
	w.planIsEmpty()
	// The next upgrade plans the field as the controller renders it: its
	// apply finds nothing deployed otherwise.
	w.write(env.c.hcl(map[string]string{name: env.body(`values = { message = "two", showHelmVersion = true }`)}))
	w.apply()
	if got := configMapOn(t, env.cs, env.ns, name).Data; got["message"] != "two" || got["helm-version"] != deployed {
		t.Errorf("ConfigMap after the next upgrade: %v, want message two and helm-version %s", got, deployed)
	}
	w.planIsEmpty()
}

// contractFailedCreate: a create whose credentials may not write what it
// needs leaves nothing behind: the helm engine's plan, which validates
// every object with a server-side dry run, refuses it; the Flux engine's
// apply, refused the HelmRelease after it wrote the chart source and
// Secrets, deletes them.
func contractFailedCreate(t *testing.T, env *engineEnv) {
	const name = "refused"
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"secrets", "configmaps", "events"}, Verbs: []string{"*"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"*"}},
		{APIGroups: []string{"source.toolkit.fluxcd.io"}, Resources: []string{"helmrepositories", "ocirepositories", "helmcharts"}, Verbs: []string{"*"}},
		{APIGroups: []string{"helm.toolkit.fluxcd.io"}, Resources: []string{"helmreleases"}, Verbs: []string{"get", "list", "watch"}},
	}
	if !env.flux() {
		// Helm's objects may be read, not written.
		rules[1].Verbs = []string{"get", "list", "watch"}
	}
	token := roleToken(t, env, rules)
	c := env.c
	c.kubernetes = fmt.Sprintf("{ host = %q, token = %q, cluster_ca_certificate = %q }", env.rest.Host, token, caPEMOf(t, env.rest))
	w := newWorkspace(t, "refused")
	w.write(c.hcl(map[string]string{name: env.body(`sensitive_values = yamlencode({ password = "never-written" })`)}))
	res := w.must(1, "apply", "-auto-approve", "-input=false", "-no-color")
	if got := w.releases(); len(got) != 0 {
		t.Errorf("the failed create is in the state: %v\n%s", got, res.stderr)
	}
	if env.flux() && !has(res.stderr, "HelmRelease not written") {
		t.Errorf("the Flux engine's create does not fail on the HelmRelease:\n%s", res.stderr)
	}
	ctx := context.Background()
	if env.st.latest(name) != nil {
		t.Errorf("release after the failed create: %s, want none", env.st.describe(name))
	}
	for _, s := range []string{name, name + "-sensitive-values", name + "-chart-credentials"} {
		if _, err := env.cs.CoreV1().Secrets(env.ns).Get(ctx, s, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("Secret %s after the failed create: %v, want not found", s, err)
		}
	}
	if _, err := env.cs.CoreV1().ConfigMaps(env.ns).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap %s after the failed create: %v, want not found", name, err)
	}
	if env.flux() {
		// The namespace holds the other rows' releases. A deleted
		// HelmRepository goes once source-controller has removed its
		// finalizer, which under load can take minutes.
		left := sourcesOf(t, env.rest, env.ns, env.c.repo.URL)
		for deadline := time.Now().Add(3 * time.Minute); len(left) > 0 && time.Now().Before(deadline); left = sourcesOf(t, env.rest, env.ns, env.c.repo.URL) {
			time.Sleep(500 * time.Millisecond)
		}
		if len(left) > 0 {
			t.Errorf("the chart source and Secrets written before the failed create are left: %v", left)
		}
	}
}

// contractDeleteNamespace: uninstall.delete_namespace. Four releases
// install into namespaces of their own: one the install creates and the
// destroy deletes (the destroy waits until it is gone), one the install
// creates that a user's ConfigMap keeps, with a warning naming it, one
// that existed before the install, kept with a warning saying so, and
// one created without delete_namespace, kept silently as Helm keeps it.
func contractDeleteNamespace(t *testing.T, env *engineEnv) {
	ctx := context.Background()
	suffix := strings.ToLower(rand.Text()[:6])
	target := map[string]string{}
	for _, name := range []string{"gone", "kept", "existing", "default"} {
		target[name] = name + "-" + suffix
		t.Cleanup(func() {
			_ = env.cs.CoreV1().Namespaces().Delete(context.Background(), target[name], metav1.DeleteOptions{})
		})
	}
	if _, err := env.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: target["existing"]}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bodies := map[string]string{}
	for name, ns := range target {
		deleteNamespace := name != "default"
		bodies[name] = env.body(fmt.Sprintf("target_namespace = %q", ns), "install = { create_namespace = true }", fmt.Sprintf("uninstall = { delete_namespace = %t }", deleteNamespace), `timeout = "2m"`)
	}
	w := newWorkspace(t, "namespaces")
	w.write(env.c.hcl(bodies))
	w.apply()
	created, err := env.cs.CoreV1().Namespaces().Get(ctx, target["gone"], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Flux's default release name with a target namespace.
	if want := env.ns + "/" + target["gone"] + "-gone"; created.Annotations[kube.CreatedForAnnotation] != want {
		t.Errorf("namespace %s is annotated %s=%q, want %q", created.Name, kube.CreatedForAnnotation, created.Annotations[kube.CreatedForAnnotation], want)
	}
	userData := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "user-data"}, Data: map[string]string{"k": "v"}}
	if _, err := env.cs.CoreV1().ConfigMaps(target["kept"]).Create(ctx, userData, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	res := w.must(0, "destroy", "-auto-approve", "-input=false", "-no-color")
	out := res.stdout + res.stderr
	if _, err := env.cs.CoreV1().Namespaces().Get(ctx, target["gone"], metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s after the destroy: %v, want gone\n%s", target["gone"], err, out)
	}
	for _, name := range []string{"kept", "existing", "default"} {
		ns, err := env.cs.CoreV1().Namespaces().Get(ctx, target[name], metav1.GetOptions{})
		if err != nil || ns.DeletionTimestamp != nil {
			t.Errorf("namespace %s after the destroy: %v, want kept", target[name], err)
		}
	}
	if !has(out, "keeps namespace "+target["kept"]) || !has(out, "- ConfigMap/user-data") {
		t.Errorf("the destroy does not warn that the user's ConfigMap keeps namespace %s:\n%s", target["kept"], out)
	}
	if has(out, "ConfigMap/kube-root-ca.crt") || has(out, "ServiceAccount/default") {
		t.Errorf("what Kubernetes puts in every namespace is named as keeping it:\n%s", out)
	}
	if !has(out, "namespace "+target["existing"]+" has no record of the release that created it") {
		t.Errorf("the destroy does not warn that namespace %s was not the release's:\n%s", target["existing"], out)
	}
	if has(out, "namespace "+target["default"]) {
		t.Errorf("a release without delete_namespace warns about its namespace:\n%s", out)
	}
	// The kept namespace holds the user's ConfigMap and nothing of the
	// release.
	if cms, err := env.cs.CoreV1().ConfigMaps(target["kept"]).List(ctx, metav1.ListOptions{}); err == nil {
		for _, cm := range cms.Items {
			if cm.Name != "user-data" && cm.Name != "kube-root-ca.crt" {
				t.Errorf("ConfigMap %s/%s is left after the destroy", cm.Namespace, cm.Name)
			}
		}
	}
}

// roleToken is a token of a service account of the environment's
// namespace allowed rules there, and the API discovery every user has.
func roleToken(t *testing.T, env *engineEnv, rules []rbacv1.PolicyRule) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const sa = "limited"
	if _, err := env.cs.CoreV1().ServiceAccounts(env.ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.cs.RbacV1().Roles(env.ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: sa}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: sa},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: sa},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: env.ns}},
	}
	if _, err := env.cs.RbacV1().RoleBindings(env.ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return tokenOf(ctx, t, env.cs, env.ns, sa)
}

// caPEMOf is the CA certificate of the cluster of cfg.
func caPEMOf(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	if len(cfg.CAData) > 0 {
		return string(cfg.CAData)
	}
	b, err := os.ReadFile(cfg.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
