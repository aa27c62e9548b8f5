package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	ri "helm.sh/helm/v4/pkg/release"
	releasecommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/postrender"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testcluster"
)

func TestUninstall(t *testing.T) {
	t.Parallel() // a namespace of its own per case
	for _, keep := range []bool{false, true} {
		t.Run(map[bool]string{false: "purge", true: "keep-history"}[keep], func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			st := &Status{}
			s := f.spec(func(s *Spec) { s.Uninstall.KeepHistory = keep })
			if err := f.reconcile(s, st, "1.0.0", nil); err != nil {
				t.Fatal(err)
			}
			if _, err := f.engine.Uninstall(context.Background(), s, st); err != nil {
				t.Fatal(err)
			}
			rel := f.latest()
			switch {
			case keep && (rel == nil || rel.Info.Status != releasecommon.StatusUninstalled):
				t.Errorf("keep_history: latest %v, want an uninstalled release", rel)
			case !keep && rel != nil:
				t.Errorf("latest %s, want no release", rel.Info.Status)
			}
			if _, err := f.cs.AppsV1().Deployments(f.ns).Get(context.Background(), "app", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("Deployment after uninstall: %v", err)
			}
			// Uninstalling what is gone succeeds.
			if _, err := f.engine.Uninstall(context.Background(), s, st); err != nil {
				t.Errorf("second uninstall: %v", err)
			}
		})
	}
}

func TestStaleLockRecovered(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	st := &Status{}
	s := f.spec(nil)
	if err := f.reconcile(s, st, "1.0.0", nil); err != nil {
		t.Fatal(err)
	}
	// An upgrade run by something else (its objects carry no origin label
	// of this resource's) and killed midway: the revision stays
	// pending-upgrade.
	pending := f.latest()
	pending.Version = 2
	pending.Info.Status = releasecommon.StatusPendingUpgrade
	pending.Info.LastDeployed = pending.Info.FirstDeployed
	pending.Manifest = strings.ReplaceAll(pending.Manifest, postrender.OriginNameLabel, "example.com/other-tool")
	if err := f.engine.Helm.UpdateRelease(pending); err == nil {
		t.Fatal("updating a revision that does not exist succeeded")
	}
	created := *pending
	if err := createRelease(f, &created); err != nil {
		t.Fatal(err)
	}

	// Within the timeout the lock is respected.
	f.engine.Now = func() time.Time { return pending.Info.LastDeployed.Add(10 * time.Second) }
	err := f.reconcile(s, st, "1.0.0", map[string]any{"replicas": 2})
	if err == nil || !strings.Contains(err.Error(), "another operation may still run it") {
		t.Fatalf("fresh lock: %v, want a refusal", err)
	}
	// Once stale (older than the action's timeout) it is broken and the
	// upgrade goes on.
	f.engine.Now = func() time.Time { return pending.Info.LastDeployed.Add(s.Timeout + time.Minute) }
	if err := f.reconcile(s, st, "1.0.0", map[string]any{"replicas": 2}); err != nil {
		t.Fatal(err)
	}
	// Unlocked, the interrupted upgrade is a failed one: it is rolled back,
	// then upgraded again.
	rel := f.latest()
	if rel.Version < 3 || rel.Info.Status != releasecommon.StatusDeployed || fmt.Sprint(rel.Config["replicas"]) != "2" {
		t.Errorf("latest v%d %s %v, want a later revision deployed with replicas 2", rel.Version, rel.Info.Status, rel.Config)
	}
	if got := condition(st, ConditionReady); !strings.HasPrefix(got, "true/") {
		t.Errorf("Ready %s", got)
	}
	history, _ := f.engine.Helm.History("app")
	for _, h := range history {
		if h.Version == 2 && h.Info.Status != releasecommon.StatusFailed {
			t.Errorf("the stale revision is %s, want failed", h.Info.Status)
		}
	}
}

// A lock this resource left in a run that was killed (terraform and the
// provider gone, the state never saw the run) is broken at once: the next
// apply recovers without waiting for the action's timeout.
func TestOwnLockBrokenAtOnce(t *testing.T) {
	t.Parallel() // a namespace of its own per case
	t.Run("upgrade", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		st := &Status{}
		s := f.spec(func(s *Spec) { s.Timeout = time.Hour })
		if err := f.reconcile(s, st, "1.0.0", nil); err != nil {
			t.Fatal(err)
		}
		pending := f.latest()
		pending.Version = 2
		pending.Info.Status = releasecommon.StatusPendingUpgrade
		pending.Info.LastDeployed = time.Now()
		if err := createRelease(f, pending); err != nil {
			t.Fatal(err)
		}
		f.engine.written = nil // a new run: this process wrote nothing yet
		// A status that is not this resource's last record (another
		// state's) does not recognise the lock.
		if err := f.reconcile(s, &Status{History: []Snapshot{{Name: "app", Namespace: f.ns, Version: 5}}}, "1.0.0", map[string]any{"replicas": 2}); err == nil || !strings.Contains(err.Error(), "another operation may still run it") {
			t.Fatalf("lock with a foreign history: %v, want a refusal", err)
		}
		if err := f.reconcile(s, st, "1.0.0", map[string]any{"replicas": 2}); err != nil {
			t.Fatal(err)
		}
		rel := f.latest()
		if rel.Info.Status != releasecommon.StatusDeployed || fmt.Sprint(rel.Config["replicas"]) != "2" {
			t.Errorf("latest v%d %s %v, want deployed with replicas 2", rel.Version, rel.Info.Status, rel.Config)
		}
		if st.Latest() == nil || st.Latest().Version != rel.Version {
			t.Errorf("status records %+v, want revision %d", st.Latest(), rel.Version)
		}
	})
	t.Run("install", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		s := f.spec(func(s *Spec) { s.Timeout = time.Hour })
		if err := f.reconcile(s, &Status{}, "1.0.0", nil); err != nil {
			t.Fatal(err)
		}
		pending := f.latest()
		if _, err := f.engine.Uninstall(context.Background(), s, &Status{}); err != nil {
			t.Fatal(err)
		}
		pending.Info.Status = releasecommon.StatusPendingInstall
		pending.Info.LastDeployed = time.Now()
		if err := createRelease(f, pending); err != nil {
			t.Fatal(err)
		}
		f.engine.written = nil // a new run: this process wrote nothing yet
		// Another resource's lock is not this one's to break.
		other := f.spec(func(o *Spec) { o.Name, o.ReleaseName, o.Timeout = "other", "app", time.Hour })
		if err := f.reconcile(other, &Status{}, "1.0.0", nil); err == nil || !strings.Contains(err.Error(), "another operation may still run it") ||
			!strings.Contains(err.Error(), "run by helmrelease_release "+f.ns+"/app") {
			t.Fatalf("another resource's lock: %v, want a refusal", err)
		}
		// The state lost the resource: its create is applied again.
		st := &Status{}
		if err := f.reconcile(s, st, "1.0.0", nil); err != nil {
			t.Fatal(err)
		}
		if rel := f.latest(); rel.Info.Status != releasecommon.StatusDeployed {
			t.Errorf("latest v%d %s, want deployed", rel.Version, rel.Info.Status)
		}
		if _, err := f.cs.AppsV1().Deployments(f.ns).Get(context.Background(), "app", metav1.GetOptions{}); err != nil {
			t.Errorf("Deployment after recovery: %v", err)
		}
	})
}

// createRelease writes a release to storage as an interrupted Helm would.
func createRelease(f *fixture, rel *release.Release) error {
	return f.engine.Helm.CreateRelease(rel)
}

func TestForceAndResetTokens(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	st := &Status{}
	s := f.spec(nil)
	if err := f.reconcile(s, st, "1.0.0", nil); err != nil {
		t.Fatal(err)
	}
	// force_at upgrades an in-sync release once.
	s.ForceAt = "2026-01-01"
	if err := f.reconcile(s, st, "1.0.0", nil); err != nil {
		t.Fatal(err)
	}
	if f.latest().Version != 2 || st.LastHandledForceAt != "2026-01-01" {
		t.Fatalf("force: latest v%d, handled %q", f.latest().Version, st.LastHandledForceAt)
	}
	if err := f.reconcile(s, st, "1.0.0", nil); err != nil || f.latest().Version != 2 {
		t.Fatalf("a handled force token forced again: v%d %v", f.latest().Version, err)
	}
	// An upgrade fails and exhausts its retries...
	err := f.reconcile(s, st, "1.1.0", map[string]any{"failHook": true})
	if !errors.Is(err, ErrRetriesExhausted) {
		t.Fatalf("failing upgrade: %v", err)
	}
	if err := f.reconcile(s, st, "1.1.0", map[string]any{"failHook": true}); !errors.Is(err, ErrRetriesExhausted) || st.UpgradeFailures != 1 {
		t.Fatalf("exhausted release retried: %v, %d failures", err, st.UpgradeFailures)
	}
	// ...reset_at gives it its retries back (and it fails again).
	s.ResetAt = "r1"
	if err := f.reconcile(s, st, "1.1.0", map[string]any{"failHook": true}); !errors.Is(err, ErrRetriesExhausted) || st.UpgradeFailures != 1 {
		t.Fatalf("after reset: %v, %d failures (want a new attempt counted once)", err, st.UpgradeFailures)
	}
	if st.LastHandledResetAt != "r1" {
		t.Errorf("reset token not recorded")
	}
}

func TestCRDPolicies(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	crdChart := func(version, description string) *chart.Chart {
		c := engineChart(version)
		c.Files = append(c.Files, &common.File{Name: "crds/gadgets.yaml", Data: []byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.` + f.ns + `.example.com
spec:
  group: ` + f.ns + `.example.com
  names: {kind: Gadget, plural: gadgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        description: "` + description + `"
        x-kubernetes-preserve-unknown-fields: true
`)})
		return c
	}
	crds := dynamic.NewForConfigOrDie(testRESTConfig).Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	name := "gadgets." + f.ns + ".example.com"
	t.Cleanup(func() { _ = crds.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	description := func() string {
		u, err := crds.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return "absent"
		}
		versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
		if len(versions) == 0 {
			return "no versions"
		}
		d, _, _ := unstructured.NestedString(versions[0].(map[string]any), "schema", "openAPIV3Schema", "description")
		return d
	}
	run := func(s *Spec, c *chart.Chart, st *Status) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if err := f.engine.Reconcile(ctx, &Request{Spec: s, Chart: c, Status: st}, nil); err != nil {
			t.Fatal(err)
		}
	}
	st := &Status{}
	// Skip on install: no CRD.
	run(f.spec(func(s *Spec) { s.Install.CRDs = CRDSkip }), crdChart("1.0.0", "one"), st)
	if got := description(); got != "absent" {
		t.Fatalf("install with Skip created the CRD (%s)", got)
	}
	// Create (the upgrade default is Skip, so set it): created, labelled.
	run(f.spec(func(s *Spec) { s.Upgrade.CRDs = CRDCreate }), crdChart("1.0.1", "two"), st)
	if got := description(); got != "two" {
		t.Fatalf("upgrade with Create: CRD %s, want created", got)
	}
	u, _ := crds.Get(context.Background(), name, metav1.GetOptions{})
	if u.GetLabels()[postrender.OriginNameLabel] != "app" {
		t.Errorf("CRD labels %v lack the origin labels", u.GetLabels())
	}
	// Create leaves an existing CRD alone.
	run(f.spec(func(s *Spec) { s.Upgrade.CRDs = CRDCreate }), crdChart("1.0.2", "three"), st)
	if got := description(); got != "two" {
		t.Fatalf("upgrade with Create changed an existing CRD to %s", got)
	}
	// CreateReplace replaces it.
	run(f.spec(func(s *Spec) { s.Upgrade.CRDs = CRDCreateReplace }), crdChart("1.0.3", "four"), st)
	if got := description(); got != "four" {
		t.Fatalf("upgrade with CreateReplace: CRD %s, want replaced", got)
	}
	// Uninstalling never deletes CRDs, and says so.
	left, err := f.engine.Uninstall(context.Background(), f.spec(nil), st)
	if err != nil {
		t.Fatal(err)
	}
	if want := []LeftBehind{{Object: "CustomResourceDefinition " + name, Why: whyCRD}}; !slices.Equal(left, want) {
		t.Errorf("left behind %v, want %v", left, want)
	}
	if got := description(); got != "four" {
		t.Errorf("uninstall removed the CRD (%s)", got)
	}
}

func TestWaitTimeout(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	st := &Status{}
	// No hook and nothing that becomes ready late: a ConfigMap, ready once
	// it exists, and a Deployment no node can ever take. However slow the
	// machine, the wait ends at its timeout with that one object left.
	c := &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: "v2", Name: "engine", Version: "1.0.0"},
		Templates: []*common.File{
			{Name: "templates/configmap.yaml", Data: []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}
data: {message: ready}
`)},
			{Name: "templates/unschedulable.yaml", Data: []byte(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: unschedulable
spec:
  selector:
    matchLabels: {app: unschedulable}
  template:
    metadata:
      labels: {app: unschedulable}
    spec:
      nodeSelector: {no-such-node: "true"}
      containers: [{name: c, image: busybox:1.36}]
`)},
		},
	}
	s := f.spec(func(s *Spec) { s.Install.Timeout = 5 * time.Second })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	err := f.engine.Reconcile(ctx, &Request{Spec: s, Chart: c, Status: st}, nil)
	if !errors.Is(err, ErrRetriesExhausted) || !strings.Contains(err.Error(), "timed out after 5s waiting for 1 of 2 objects to be ready") {
		t.Fatalf("error %v, want exhausted after a wait timeout", err)
	}
	if !strings.Contains(err.Error(), "Last Helm log lines") {
		t.Errorf("the failure lacks Helm's log lines: %v", err)
	}
	if rel := f.latest(); rel == nil || rel.Info.Status != releasecommon.StatusFailed {
		t.Errorf("latest %v, want a failed release", rel)
	}
}

func TestOwnership(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// A release made by hand (helm install): no origin labels.
	if _, err := f.engine.Helm.Install(context.Background(), engineChart("1.0.0"), nil, helm.InstallOptions{
		ReleaseName: "app", Namespace: f.ns, Timeout: 5 * time.Minute, Wait: true,
	}); err != nil {
		t.Fatal(err)
	}
	f.engine.observed = nil
	st := &Status{}
	err := f.reconcile(f.spec(nil), st, "1.0.0", nil)
	if !errors.Is(err, ErrNotOwned) || !strings.Contains(err.Error(), "import it") {
		t.Fatalf("error %v, want a refusal naming import", err)
	}
	if f.latest().Version != 1 {
		t.Fatal("a refused release was changed")
	}
	// Adopted, it is upgraded and carries the origin labels from then on.
	if err := f.reconcile(f.spec(func(s *Spec) { s.Adopt = true }), st, "1.0.0", nil); err != nil {
		t.Fatal(err)
	}
	if f.latest().Version != 2 || !origins(f.latest().Manifest)[f.ns+"/app"] {
		t.Fatalf("adopted release v%d lacks the origin labels", f.latest().Version)
	}
	// Another resource claiming the same release name is refused, even
	// when it asks to adopt.
	other := f.spec(func(s *Spec) { s.Name, s.ReleaseName, s.Adopt = "other", "app", true })
	err = f.reconcile(other, &Status{}, "1.0.0", nil)
	if !errors.Is(err, ErrNotOwned) || !strings.Contains(err.Error(), "managed by helmrelease_release "+f.ns+"/app") {
		t.Fatalf("second owner: %v", err)
	}
	// The same resource without a record of the release (a second state
	// declaring it, or one that lost it) is refused: import adopts it.
	err = f.reconcile(f.spec(nil), &Status{}, "1.0.0", map[string]any{"replicas": 2})
	var owned *OwnershipError
	if !errors.As(err, &owned) || !owned.Unrecorded || !strings.Contains(err.Error(), "in another Terraform state") {
		t.Fatalf("the same resource without a record: %v, want it refused as managed in another state", err)
	}
	if err := f.reconcile(f.spec(func(s *Spec) { s.Adopt = true }), &Status{}, "1.0.0", map[string]any{"replicas": 2}); err != nil {
		t.Fatalf("adopting it: %v", err)
	}
}

// faultyStorage fails the writes its switches select.
type faultyStorage struct {
	driver.Driver
	failCreate, failUpdate bool
}

var errInjected = errors.New("injected storage failure")

func (d *faultyStorage) Create(key string, rls ri.Releaser) error {
	if d.failCreate {
		return errInjected
	}
	return d.Driver.Create(key, rls)
}

func (d *faultyStorage) Update(key string, rls ri.Releaser) error {
	if d.failUpdate {
		return errInjected
	}
	return d.Driver.Update(key, rls)
}

// TestStorageFaults: an action that could not write to storage is an error
// of the run, not a release failure; one that did write is a failure.
func TestStorageFaults(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	faults := &faultyStorage{}
	c, err := helm.NewClient(helm.ClientOptions{
		Getter:           kube.NewGetter(testRESTConfig, f.ns, ""),
		StorageNamespace: f.ns,
		Log:              f.engine.Logs,
		Observe:          f.engine.Observe,
		WrapStorage: func(d driver.Driver) driver.Driver {
			faults.Driver = d
			return faults
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.engine.Helm = c

	st := &Status{}
	faults.failCreate = true
	err = f.reconcile(f.spec(nil), st, "1.0.0", nil)
	var untouched *StorageUntouchedError
	if !errors.As(err, &untouched) || !errors.Is(err, errInjected) {
		t.Fatalf("error %v, want a storage-untouched error wrapping the fault", err)
	}
	if st.Failures != 0 || st.InstallFailures != 0 {
		t.Errorf("a failure that wrote nothing was counted: %d/%d", st.Failures, st.InstallFailures)
	}

	// Created, then not updated: Helm only logs a failure to record the
	// result, so the revision stays pending-install; breaking that lock
	// (ours) fails too, and the run ends with the storage error.
	faults.failCreate, faults.failUpdate = false, true
	err = f.reconcile(f.spec(nil), st, "1.0.0", nil)
	if !errors.Is(err, errInjected) || errors.As(err, &untouched) {
		t.Fatalf("error %v, want the storage fault met while unlocking", err)
	}
	if st.Latest() == nil || st.Latest().Status != releasecommon.StatusPendingInstall.String() {
		t.Fatalf("latest snapshot %+v, want the pending revision as written", st.Latest())
	}
	// Storage back: the lock this engine took is broken at once, the failed
	// revision is remediated (uninstalled) and installed again.
	faults.failUpdate = false
	if err := f.reconcile(f.spec(nil), st, "1.0.0", nil); err != nil {
		t.Fatalf("after the fault: %v", err)
	}
	if rel := f.latest(); rel.Info.Status != releasecommon.StatusDeployed {
		t.Errorf("latest %s, want deployed", rel.Info.Status)
	}
	if got := condition(st, ConditionReady); !strings.HasPrefix(got, "true/") {
		t.Errorf("Ready %s", got)
	}
}

func TestTestFilters(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := engineChart("1.0.0")
	c.Templates = append(c.Templates, &common.File{Name: "templates/failing-test.yaml", Data: []byte(`apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-failing-test
  annotations:
    helm.sh/hook: test
    helm.sh/hook-delete-policy: before-hook-creation
  labels:
    ` + testcluster.FailLabel + `: "true"
spec:
  restartPolicy: Never
  containers: [{name: test, image: busybox:1.36, command: [sh, -c, "exit 1"]}]
`)})
	// run returns the test results of the release, then uninstalls it.
	run := func(filters []TestFilter) (map[string]TestHook, error) {
		st := &Status{}
		s := f.spec(func(s *Spec) { s.Test = TestSpec{Enable: true, Filters: filters} })
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		err := f.engine.Reconcile(ctx, &Request{Spec: s, Chart: c, Status: st}, nil)
		var hooks map[string]TestHook
		if cur := st.Latest(); cur != nil {
			hooks = cur.TestHooks
		}
		_, _ = f.engine.Uninstall(ctx, s, st)
		return hooks, err
	}
	hooks, err := run([]TestFilter{{Name: "app-failing-test", Exclude: true}})
	if err != nil {
		t.Fatalf("excluding the failing test: %v", err)
	}
	if len(hooks) != 1 || hooks["app-test"].Phase != "Succeeded" {
		t.Errorf("tests run %v, want only app-test, succeeded", hooks)
	}
	hooks, err = run([]TestFilter{{Name: "app-test"}})
	if err != nil {
		t.Fatalf("including only the passing test: %v", err)
	}
	if _, ran := hooks["app-failing-test"]; ran {
		t.Error("a test outside the include filter ran")
	}
	if hooks["app-test"].Phase != "Succeeded" {
		t.Errorf("the included test did not run and succeed: %v", hooks)
	}
	if _, err = run(nil); !errors.Is(err, ErrRetriesExhausted) {
		t.Errorf("without filters the failing test runs and fails: %v", err)
	}
}

func TestDryRun(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := f.spec(func(s *Spec) {
		s.PostRenderers = []postrender.Renderer{{Kustomize: postrender.Kustomize{Patches: []postrender.Patch{{
			Patch:  `[{"op": "replace", "path": "/spec/replicas", "value": 5}]`,
			Target: &postrender.Selector{Kind: "Deployment"},
		}}}}}
	})
	ctx := context.Background()
	// Absent: what an install would apply.
	rel, err := f.engine.DryRun(ctx, &Request{Spec: s, Chart: engineChart("1.0.0"), Status: &Status{}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rel.Manifest, "replicas: 5") || !origins(rel.Manifest)[f.ns+"/app"] {
		t.Errorf("dry-run manifest lacks the post-renderers:\n%s", rel.Manifest)
	}
	if f.latest() != nil {
		t.Fatal("a dry run wrote to storage")
	}
	if _, err := f.cs.AppsV1().Deployments(f.ns).Get(ctx, "app", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a dry run created the Deployment: %v", err)
	}
	// Installed: what an upgrade would apply, storage untouched.
	st := &Status{}
	if err := f.reconcile(s, st, "1.0.0", nil); err != nil {
		t.Fatal(err)
	}
	rel, err = f.engine.DryRun(ctx, &Request{Spec: s, Chart: engineChart("2.0.0"), Values: map[string]any{"replicas": 3}, Status: st})
	if err != nil {
		t.Fatal(err)
	}
	if rel.Chart.Metadata.Version != "2.0.0" || f.latest().Version != 1 {
		t.Errorf("dry-run upgrade: chart %s, storage at v%d", rel.Chart.Metadata.Version, f.latest().Version)
	}
	// Invalid objects are caught by the cluster's schemas.
	bad := engineChart("3.0.0")
	bad.Templates = append(bad.Templates, &common.File{Name: "templates/bad.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad}\ndata: {key: {not: a string}}\n")})
	if _, err := f.engine.DryRun(ctx, &Request{Spec: s, Chart: bad, Status: st}); err == nil || !strings.Contains(err.Error(), "ConfigMap bad") {
		t.Errorf("a ConfigMap with a map value: %v, want the cluster's rejection naming it", err)
	}
	// Unknown fields are errors, as Helm's OpenAPI validation makes them,
	// unless the validation is disabled.
	unknown := engineChart("3.0.0")
	unknown.Templates = append(unknown.Templates, &common.File{Name: "templates/unknown.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: unknown}\nspec: {replicas: 2}\n")})
	if _, err := f.engine.DryRun(ctx, &Request{Spec: s, Chart: unknown, Status: st}); err == nil || !strings.Contains(err.Error(), `.spec: field not declared in schema`) {
		t.Errorf("a ConfigMap with a spec: %v, want the unknown field refused", err)
	}
	lax := *s
	lax.Upgrade.DisableOpenAPIValidation = true
	if _, err := f.engine.DryRun(ctx, &Request{Spec: &lax, Chart: unknown, Status: st}); err != nil {
		t.Errorf("a ConfigMap with a spec, validation disabled: %v", err)
	}
}

// failureHook creates a ConfigMap when the engine reports a failed action,
// so that the next attempt of a chart that looks it up succeeds.
type failureHook struct {
	t  *testing.T
	f  *fixture
	on string
}

func (h failureHook) Info(msg string, _ ...any) {
	if msg != h.on {
		return
	}
	_, err := h.f.cs.CoreV1().ConfigMaps(h.f.ns).Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "go"}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		h.t.Error(err)
	}
}
func (failureHook) Debug(string, ...any) {}

// flakyChart's hook fails until a ConfigMap "go" exists.
func flakyChart() *chart.Chart { return flakyChartAt("1.0.0") }

func flakyChartAt(version string) *chart.Chart {
	c := engineChart(version)
	c.Values["failHook"] = false
	for _, tpl := range c.Templates {
		if tpl.Name == "templates/hook.yaml" {
			tpl.Data = []byte(strings.ReplaceAll(string(tpl.Data), ".Values.failHook", `(not (lookup "v1" "ConfigMap" .Release.Namespace "go"))`))
		}
	}
	return c
}

func TestInstallRetriesThenSuccess(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.engine.Log = failureHook{t, f, "action failed"}
	st := &Status{}
	s := f.spec(func(s *Spec) { s.Install.Remediation.Retries = 2 })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := f.engine.Reconcile(ctx, &Request{Spec: s, Chart: flakyChart(), Status: st}, nil); err != nil {
		t.Fatal(err)
	}
	rel := f.latest()
	if rel.Info.Status != releasecommon.StatusDeployed || st.InstallFailures != 1 {
		t.Errorf("release %s, %d install failures: want deployed after one failure", rel.Info.Status, st.InstallFailures)
	}
	if got := condition(st, ConditionReady); got != "true/"+ReasonInstallSucceeded {
		t.Errorf("Ready %s", got)
	}
}

func TestUpgradeFailureUninstallStrategy(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	st := &Status{}
	s := f.spec(func(s *Spec) { s.Upgrade.Remediation = Remediation{Retries: 1, Strategy: StrategyUninstall} })
	if err := f.reconcile(s, st, "1.0.0", nil); err != nil {
		t.Fatal(err)
	}
	err := f.reconcile(s, st, "1.1.0", map[string]any{"failHook": true})
	if !errors.Is(err, ErrRetriesExhausted) {
		t.Fatalf("error %v, want exhausted", err)
	}
	// Upgrade fails → uninstall → install (fails: same hook) → ... the
	// install takes over after the uninstall, and its own retries (0) end it.
	if st.UpgradeFailures != 1 || st.InstallFailures != 1 {
		t.Errorf("failures: upgrade %d install %d, want 1 and 1", st.UpgradeFailures, st.InstallFailures)
	}
	// The release was uninstalled, then installed afresh (v1).
	if rel := f.latest(); rel.Version != 1 || rel.Info.Status != releasecommon.StatusFailed || rel.Chart.Metadata.Version != "1.1.0" {
		t.Errorf("latest v%d %s chart %s, want the fresh install v1 of 1.1.0, failed", rel.Version, rel.Info.Status, rel.Chart.Metadata.Version)
	}
	if len(st.History) != 1 {
		t.Errorf("history keeps %d snapshots of the purged release", len(st.History)-1)
	}
}

func TestPreserveValuesConverges(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	st := &Status{}
	s := f.spec(nil)
	if err := f.reconcile(s, st, "1.0.0", map[string]any{"replicas": 2}); err != nil {
		t.Fatal(err)
	}
	s.Upgrade.PreserveValues = true
	if err := f.reconcile(s, st, "1.0.1", map[string]any{"failTest": false}); err != nil {
		t.Fatal(err)
	}
	rel := f.latest()
	if fmt.Sprint(rel.Config["replicas"]) != "2" || rel.Version != 2 {
		t.Fatalf("v%d values %v, want v2 keeping replicas 2", rel.Version, rel.Config)
	}
	if err := f.reconcile(s, st, "1.0.1", map[string]any{"failTest": false}); err != nil || f.latest().Version != 2 {
		t.Errorf("preserved values upgraded again (v%d, %v)", f.latest().Version, err)
	}
}

func TestCreateNamespaceAndMaxHistory(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	target := f.ns + "-target"
	t.Cleanup(func() { _ = f.cs.CoreV1().Namespaces().Delete(context.Background(), target, metav1.DeleteOptions{}) })
	one := 2
	st := &Status{}
	s := f.spec(func(s *Spec) {
		s.TargetNamespace = target
		s.Install.CreateNamespace = true
		s.MaxHistory = &one
	})
	// The engine of the spec: its clients default to the target namespace.
	e, err := New(context.Background(), s, Options{Config: testRESTConfig})
	if err != nil {
		t.Fatal(err)
	}
	e.Key = testDigests.Key
	for i := 1; i <= 4; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		err := e.Reconcile(ctx, &Request{Spec: s, Chart: engineChart("1.0.0"), Values: map[string]any{"replicas": i}, Status: st}, nil)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.cs.AppsV1().Deployments(target).Get(context.Background(), target+"-app", metav1.GetOptions{}); err != nil {
		t.Errorf("Deployment in the created target namespace: %v", err)
	}
	history, err := e.Helm.History(target + "-app")
	if err != nil || len(history) != 2 {
		t.Errorf("Helm history has %d revisions (%v), want max_history 2", len(history), err)
	}
	if len(st.History) != 2 || st.History[0].Version != 4 {
		t.Errorf("status history %d snapshots, newest v%d", len(st.History), st.History[0].Version)
	}
}

// TestInstallValidatedByTheServer: an object with an unknown field is
// refused before anything is written (not a counted failure), as Helm's
// own validation refuses it, also in a namespace the install creates; with
// the validation disabled a client-side install writes it (the API server
// drops the field), as Helm 3 did: server-side apply never takes it.
func TestInstallValidatedByTheServer(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := engineChart("1.0.0")
	c.Templates = append(c.Templates, &common.File{Name: "templates/unknown.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: unknown}\nspec: {replicas: 2}\n")})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	st := &Status{}
	err := f.engine.Reconcile(ctx, &Request{Spec: f.spec(nil), Chart: c, Status: st}, nil)
	var untouched *StorageUntouchedError
	if !errors.As(err, &untouched) || !strings.Contains(err.Error(), "field not declared in schema") {
		t.Fatalf("install with an unknown field: %v", err)
	}
	if f.latest() != nil || st.Failures != 0 {
		t.Errorf("refused install wrote a release (%v) or counted a failure (%d)", f.latest(), st.Failures)
	}
	clientSide := false
	lax := f.spec(func(s *Spec) { s.Install.DisableOpenAPIValidation, s.Install.ServerSideApply = true, &clientSide })
	if err := f.engine.Reconcile(ctx, &Request{Spec: lax, Chart: c, Status: st}, nil); err != nil {
		t.Fatalf("install with validation disabled: %v", err)
	}
	if _, err := f.cs.CoreV1().ConfigMaps(f.ns).Get(ctx, "unknown", metav1.GetOptions{}); err != nil {
		t.Errorf("ConfigMap not installed: %v", err)
	}

	target := f.ns + "-created"
	t.Cleanup(func() { _ = f.cs.CoreV1().Namespaces().Delete(context.Background(), target, metav1.DeleteOptions{}) })
	created := f.spec(func(s *Spec) {
		s.TargetNamespace = target
		s.Install.CreateNamespace = true
	})
	e, err := New(ctx, created, Options{Config: testRESTConfig})
	if err != nil {
		t.Fatal(err)
	}
	e.Key = testDigests.Key
	st = &Status{}
	err = e.Reconcile(ctx, &Request{Spec: created, Chart: c, Status: st}, nil)
	if !errors.As(err, &untouched) || !strings.Contains(err.Error(), "field not declared in schema") {
		t.Fatalf("install into a namespace it creates, with an unknown field: %v", err)
	}
	if rel, _ := e.Helm.LastRelease(created.GetReleaseName()); rel != nil || st.Failures != 0 {
		t.Errorf("refused install wrote a release (%v) or counted a failure (%d)", rel, st.Failures)
	}
	// It leaves nothing: the namespace it created is deleted.
	if ns, err := f.cs.CoreV1().Namespaces().Get(ctx, target, metav1.GetOptions{}); err == nil && ns.DeletionTimestamp == nil {
		t.Errorf("refused install left the namespace %s it created", target)
	} else if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	// A namespace that existed before is left alone.
	if _, err := f.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: target + "-kept"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = f.cs.CoreV1().Namespaces().Delete(context.Background(), target+"-kept", metav1.DeleteOptions{})
	})
	kept := f.spec(func(s *Spec) {
		s.TargetNamespace = target + "-kept"
		s.Install.CreateNamespace = true
	})
	if e, err = New(ctx, kept, Options{Config: testRESTConfig}); err != nil {
		t.Fatal(err)
	}
	e.Key = testDigests.Key
	if err := e.Reconcile(ctx, &Request{Spec: kept, Chart: c, Status: &Status{}}, nil); !errors.As(err, &untouched) {
		t.Fatalf("install into an existing namespace, with an unknown field: %v", err)
	}
	if ns, err := f.cs.CoreV1().Namespaces().Get(ctx, target+"-kept", metav1.GetOptions{}); err != nil || ns.DeletionTimestamp != nil {
		t.Errorf("refused install deleted the namespace it did not create (%v)", err)
	}
}

// TestRetryOnFailure: under the strategy RetryOnFailure a failed install
// or upgrade is left as it is (no remediation, no stall), each later run
// upgrades it once more, and the first success clears the counters.
func TestRetryOnFailure(t *testing.T) {
	t.Parallel() // a namespace of its own per case
	for _, tc := range []struct {
		name string
		// before runs first, with the cause of failure absent.
		before string
		action ReleaseAction
	}{
		{name: "install", action: ActionInstall},
		{name: "upgrade", before: "1.0.0", action: ActionUpgrade},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			retry := ActionStrategy{Name: StrategyRetryOnFailure}
			s := f.spec(func(s *Spec) { s.Install.Strategy, s.Upgrade.Strategy = retry, retry })
			st := &Status{}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			run := func(version string) error {
				return f.engine.Reconcile(ctx, &Request{Spec: s, Chart: flakyChartAt(version), Status: st}, nil)
			}
			setCause := func(fixed bool) {
				t.Helper()
				cms := f.cs.CoreV1().ConfigMaps(f.ns)
				var err error
				if fixed {
					_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "go"}}, metav1.CreateOptions{})
				} else {
					err = cms.Delete(ctx, "go", metav1.DeleteOptions{})
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if tc.before != "" {
				setCause(true)
				if err := run(tc.before); err != nil {
					t.Fatal(err)
				}
				setCause(false)
			}
			base := 0
			if rel := f.latest(); rel != nil {
				base = rel.Version
			}
			failures := func() int64 {
				if tc.action == ActionUpgrade {
					return st.UpgradeFailures
				}
				return st.InstallFailures + st.UpgradeFailures
			}
			for attempt := 1; attempt <= 2; attempt++ {
				err := run("1.1.0")
				if !errors.Is(err, ErrRetryNextRun) {
					t.Fatalf("attempt %d: error %v, want ErrRetryNextRun", attempt, err)
				}
				rel := f.latest()
				if rel.Version != base+attempt || rel.Info.Status != releasecommon.StatusFailed {
					t.Errorf("attempt %d: latest v%d %s, want v%d failed (one attempt a run, nothing remediated)", attempt, rel.Version, rel.Info.Status, base+attempt)
				}
				if got := failures(); got != int64(attempt) {
					t.Errorf("attempt %d: %d failures counted", attempt, got)
				}
				if c := st.Condition(ConditionStalled); c != nil {
					t.Errorf("attempt %d: stalled (%s): RetryOnFailure never stalls", attempt, c.Message)
				}
				if c := st.Condition(ConditionRemediated); c != nil {
					t.Errorf("attempt %d: remediated (%s)", attempt, c.Message)
				}
			}
			if st.LastAttemptedReleaseAction != ActionUpgrade {
				t.Errorf("last attempted %s: a failed release is retried by an upgrade", st.LastAttemptedReleaseAction)
			}
			setCause(true)
			if err := run("1.1.0"); err != nil {
				t.Fatalf("run after the cause was fixed: %v", err)
			}
			if rel := f.latest(); rel.Version != base+3 || rel.Info.Status != releasecommon.StatusDeployed {
				t.Errorf("latest v%d %s, want v%d deployed", rel.Version, rel.Info.Status, base+3)
			}
			if st.Failures+st.InstallFailures+st.UpgradeFailures != 0 {
				t.Errorf("counters %d/%d/%d kept after the success", st.Failures, st.InstallFailures, st.UpgradeFailures)
			}
			if got := condition(st, ConditionReady); got != "true/"+ReasonUpgradeSucceeded {
				t.Errorf("Ready %s", got)
			}
		})
	}
}
