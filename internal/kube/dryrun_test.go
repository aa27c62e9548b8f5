package kube

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// TestDryRunApplyOnceForTheSameObjects: objects that passed a dry run
// whole are not sent again by the same identity (Terraform's final plan
// validates, then the apply would again); objects skipped (their namespace
// does not exist yet) are sent again, and other objects are sent.
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
	for _, step := range []struct {
		name    string
		objs    []*unstructured.Unstructured
		patches int64
	}{
		{"first", []*unstructured.Unstructured{configMap("default", "a")}, 1},
		{"the same objects, another getter of the identity", []*unstructured.Unstructured{configMap("default", "a")}, 0},
		{"other objects", []*unstructured.Unstructured{configMap("default", "b")}, 1},
		{"a namespace that does not exist", []*unstructured.Unstructured{configMap("absent-namespace", "a")}, 1},
		{"the same, still not validated whole", []*unstructured.Unstructured{configMap("absent-namespace", "a")}, 1},
	} {
		before := patches.Load()
		if err := NewGetter(cfg, "default", "", shared).DryRunApply(ctx, step.objs); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if got := patches.Load() - before; got != step.patches {
			t.Errorf("%s: %d dry-run requests, want %d", step.name, got, step.patches)
		}
	}
	before := patches.Load()
	if err := NewGetter(cfg, "default", "", NewDiscovery(cfg, "")).DryRunApply(ctx, []*unstructured.Unstructured{configMap("default", "a")}); err != nil {
		t.Fatal(err)
	}
	if patches.Load() == before {
		t.Error("another discovery (another process's) used the record")
	}
}
