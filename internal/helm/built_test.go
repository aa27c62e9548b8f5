package helm

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/kube"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	k8s "github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
)

const builtManifest = `apiVersion: v1
kind: ConfigMap
metadata:
  name: built
data:
  k: v
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: built
spec:
  selector:
    matchLabels: {app: built}
  template:
    metadata:
      labels: {app: built}
    spec:
      containers: [{name: web, image: busybox:1.36}]
`

// TestBuildDecodesOnce: a manifest built again, by another client of the
// same cluster and namespace (as the apply after the plan that rendered
// it), gives the same objects as the first Build, copies that an action
// may change, with REST clients that reach the cluster; a manifest that
// differs by a byte, or another namespace, is decoded anew.
func TestBuildDecodesOnce(t *testing.T) {
	const ns = "helm-built"
	plan, _, _ := newTestClient(t, ns)
	apply, err := NewClient(ClientOptions{Getter: plan.kube.getter, StorageNamespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	build := func(c *Client, manifest string) kube.ResourceList {
		t.Helper()
		list, err := c.kube.Build(strings.NewReader(manifest), false)
		if err != nil {
			t.Fatal(err)
		}
		return list
	}
	first := build(plan, builtManifest)
	key, keyed := plan.kube.builtKey([]byte(builtManifest), false)
	if !keyed || !builtManifests.Has(key) {
		t.Fatal("the built manifest is not kept")
	}
	second := build(apply, builtManifest)
	if len(first) != 2 || len(second) != 2 {
		t.Fatalf("built %d and %d objects, want 2", len(first), len(second))
	}
	for i := range first {
		a, b := first[i], second[i]
		if a.Namespace != ns || b.Namespace != ns || a.Name != b.Name || a.Mapping.GroupVersionKind != b.Mapping.GroupVersionKind {
			t.Errorf("object %d: %s/%s (%v), then %s/%s (%v)", i, a.Namespace, a.Name, a.Mapping.GroupVersionKind, b.Namespace, b.Name, b.Mapping.GroupVersionKind)
		}
		if got, want := b.Object.(*unstructured.Unstructured).GetNamespace(), ns; got != want {
			t.Errorf("object %d: namespace %q in the copy, want %q", i, got, want)
		}
	}
	// An action labels the objects it creates: the next Build is not
	// changed by it.
	second[0].Object.(*unstructured.Unstructured).SetLabels(map[string]string{"app.kubernetes.io/managed-by": "Helm"})
	if third := build(apply, builtManifest); third[0].Object.(*unstructured.Unstructured).GetLabels() != nil {
		t.Fatalf("a change to a built object shows in the next Build: %v", third[0].Object.(*unstructured.Unstructured).GetLabels())
	}
	// The copies' clients create the objects.
	if _, err := apply.kube.Create(second); err != nil {
		t.Fatalf("creating the built objects: %v", err)
	}
	cs := kubernetes.NewForConfigOrDie(testRESTConfig)
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), "built", metav1.GetOptions{})
	if err != nil || cm.Data["k"] != "v" {
		t.Fatalf("the ConfigMap created from the copy: %v, %v", cm, err)
	}
	changed := build(apply, strings.Replace(builtManifest, "k: v", "k: w", 1))
	if data, _, _ := unstructured.NestedString(changed[0].Object.(*unstructured.Unstructured).Object, "data", "k"); data != "w" {
		t.Fatalf("a manifest changed by a byte built as %q, want w", data)
	}
	other, _, _ := newTestClient(t, "helm-built-other")
	if got := build(other, builtManifest)[0].Namespace; got != "helm-built-other" {
		t.Fatalf("built in namespace %q by a client of helm-built-other", got)
	}
}

// BenchmarkBuild: Helm's Build of a manifest of 1,000 ConfigMaps, decoded
// (a new manifest each time) and copied (built before in this process).
func BenchmarkBuild(b *testing.B) {
	if testRESTConfig == nil {
		b.Skip("needs a cluster")
	}
	c, err := NewClient(ClientOptions{Getter: k8s.NewGetter(testRESTConfig, "default", ""), StorageNamespace: "default"})
	if err != nil {
		b.Fatal(err)
	}
	var m bytes.Buffer
	for i := range 1000 {
		m.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-" + strings.Repeat("x", i%7) + "\ndata:\n  k: '" + strings.Repeat("v", 1000) + "'\n---\n")
	}
	b.Run("decoded", func(b *testing.B) {
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			n++
			if _, err := c.kube.Build(strings.NewReader(m.String()+"# "+strconv.Itoa(n)+"\n"), false); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("copied", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.kube.Build(bytes.NewReader(m.Bytes()), false); err != nil {
				b.Fatal(err)
			}
		}
	})
}
