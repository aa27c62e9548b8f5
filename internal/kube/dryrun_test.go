package kube

import (
	"context"
	"fmt"
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
// run whole are not sent again by the apply of the same identity that
// trusts it (Terraform's final plan validates, then the apply would again),
// once: a second action of the apply, or a plan, sends them again; objects
// of a namespace that does not exist yet are not sent (one read of the
// namespace says so) and are sent once it exists; other objects are sent.
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
	configMap := func(ns, message string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "validated", "namespace": ns},
			"data":     map[string]any{"message": message},
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
	for _, step := range []struct {
		name    string
		objs    []*unstructured.Unstructured
		apply   bool
		patches int64
		first   func() error
	}{
		{name: "plan", objs: []*unstructured.Unstructured{configMap("default", "a")}, patches: 1},
		{name: "the plan again", objs: []*unstructured.Unstructured{configMap("default", "a")}, patches: 1},
		{name: "its apply, another getter of the identity", objs: []*unstructured.Unstructured{configMap("default", "a")}, apply: true},
		{name: "a second action of the apply", objs: []*unstructured.Unstructured{configMap("default", "a")}, apply: true, patches: 1},
		{name: "other objects", objs: []*unstructured.Unstructured{configMap("default", "b")}, apply: true, patches: 1},
		{name: "a namespace that does not exist", objs: []*unstructured.Unstructured{configMap(created, "a")}},
		{name: "the same once the namespace exists", objs: []*unstructured.Unstructured{configMap(created, "a")}, patches: 1,
			first: func() error {
				if _, err := NewGetter(cfg, "default", "", shared).CreateNamespace(ctx, created, "test"); err != nil {
					return err
				}
				cs, err := kubernetes.NewForConfig(cfg)
				if err != nil {
					return err
				}
				ns, err := cs.CoreV1().Namespaces().Get(ctx, created, metav1.GetOptions{})
				if err == nil && ns.Labels["name"] != created {
					err = fmt.Errorf("namespace labels %v, want name=%s as Helm labels the namespaces it creates", ns.Labels, created)
				}
				return err
			}},
		{name: "and applied", objs: []*unstructured.Unstructured{configMap(created, "a")}, apply: true},
	} {
		if step.first != nil {
			if err := step.first(); err != nil {
				t.Fatalf("%s: %v", step.name, err)
			}
		}
		before := patches.Load()
		if err := NewGetter(cfg, "default", "", shared).DryRunApply(ctx, step.objs, DryRunOptions{TrustPlan: step.apply}); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if got := patches.Load() - before; got != step.patches {
			t.Errorf("%s: %d dry-run requests, want %d", step.name, got, step.patches)
		}
	}
	// A plan of this process, then the apply of another.
	if err := NewGetter(cfg, "default", "", shared).DryRunApply(ctx, []*unstructured.Unstructured{configMap("default", "a")}, DryRunOptions{}); err != nil {
		t.Fatal(err)
	}
	before := patches.Load()
	if err := NewGetter(cfg, "default", "", NewDiscovery(cfg, "")).DryRunApply(ctx, []*unstructured.Unstructured{configMap("default", "a")}, DryRunOptions{TrustPlan: true}); err != nil {
		t.Fatal(err)
	}
	if patches.Load() == before {
		t.Error("another discovery (another process's) used the record")
	}
}
