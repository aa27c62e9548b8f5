package kube

import (
	"context"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
)

// countingTransport counts the requests of a method.
type countingTransport struct {
	next   http.RoundTripper
	method string
	n      *atomic.Int64
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == c.method {
		c.n.Add(1)
	}
	return c.next.RoundTrip(r)
}

// TestDryRunApplyOnceForTheSameObjects: objects that passed a plan's dry
// run whole are not sent again by the apply that trusts the plan's set
// (handed over, or the newest of its process), in any order, for ten
// minutes, once; other objects are sent; objects of a
// namespace that does not exist yet are not sent (one read of the
// namespace says so), and such a set vouches for nothing; they are sent
// once it exists.
func TestDryRunApplyOnceForTheSameObjects(t *testing.T) {
	if testKubeconfig == "" {
		t.Skip("needs the test cluster")
	}
	cfg, err := Config{ConfigPath: testKubeconfig}.RESTConfig(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	var patches atomic.Int64
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return countingTransport{next: rt, method: http.MethodPatch, n: &patches}
	})
	shared := NewDiscovery(cfg, "")
	configMap := func(ns, name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": ns},
			"data":     map[string]any{"message": "hello"},
		}}
	}
	ctx := context.Background()
	created := "dry-run-created-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	t.Cleanup(func() {
		cs, err := kubernetes.NewForConfig(cfg)
		if err == nil {
			_ = cs.CoreV1().Namespaces().Delete(context.Background(), created, metav1.DeleteOptions{})
		}
	})
	dryRun := func(name string, objs []*unstructured.Unstructured, trusted *ValidatedSet, wantPatches int64) *ValidatedSet {
		t.Helper()
		before := patches.Load()
		v, err := NewGetter(cfg, "default", "", NewDiscovery(cfg, "")).DryRunApply(ctx, objs, DryRunOptions{TrustPlan: trusted != nil, Planned: trusted})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := patches.Load() - before; got != wantPatches {
			t.Errorf("%s: %d dry-run requests, want %d", name, got, wantPatches)
		}
		return v
	}
	a, b := configMap("default", "a"), configMap("default", "b")
	plan := dryRun("plan", []*unstructured.Unstructured{a, b}, nil, 2)
	if plan == nil {
		t.Fatal("a set validated whole vouches for nothing")
	}
	dryRun("the plan again", []*unstructured.Unstructured{a, b}, nil, 2)
	dryRun("its apply, the objects in another order", []*unstructured.Unstructured{b, a}, plan, 0)
	dryRun("an apply of other objects", []*unstructured.Unstructured{a, configMap("default", "c")}, plan, 2)
	old := *plan
	old.At = old.At.Add(-11 * time.Minute)
	dryRun("an apply of a plan made too long ago", []*unstructured.Unstructured{a, b}, &old, 2)

	missing := dryRun("a namespace that does not exist", []*unstructured.Unstructured{configMap(created, "a")}, nil, 0)
	if missing != nil {
		t.Error("a set of objects not sent vouches for them")
	}
	if _, err := NewGetter(cfg, "default", "", shared).CreateNamespace(ctx, created, "test", "test/test"); err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if ns, err := cs.CoreV1().Namespaces().Get(ctx, created, metav1.GetOptions{}); err != nil || ns.Labels["name"] != created {
		t.Errorf("namespace labels %v (%v), want name=%s as Helm labels the namespaces it creates", ns.Labels, err, created)
	}
	dryRun("the same once the namespace exists", []*unstructured.Unstructured{configMap(created, "a")}, missing, 1)

	// In one process (Terraform's final plan and the apply), a set the
	// identity validated vouches for the apply, once, even after other
	// releases of the identity validated theirs.
	process := func(name string, trust bool, want int64) {
		t.Helper()
		before := patches.Load()
		if _, err := NewGetter(cfg, "default", "", shared).DryRunApply(ctx, []*unstructured.Unstructured{a, b}, DryRunOptions{TrustPlan: trust}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := patches.Load() - before; got != want {
			t.Errorf("%s: %d dry-run requests, want %d", name, got, want)
		}
	}
	process("the final plan", false, 2)
	if _, err := NewGetter(cfg, "default", "", shared).DryRunApply(ctx, []*unstructured.Unstructured{configMap("default", "other-release")}, DryRunOptions{}); err != nil {
		t.Fatal(err)
	}
	process("its apply, after another release's final plan", true, 0)
	process("a second action of the apply", true, 2)
}
