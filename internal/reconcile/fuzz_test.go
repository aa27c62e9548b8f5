package reconcile

import (
	"testing"

	ssajsondiff "github.com/fluxcd/pkg/ssa/jsondiff"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// FuzzReleaseName: the release name of any HelmRelease name and target
// namespace is Helm's length at most, the same every time, and the full
// name when that fits.
func FuzzReleaseName(f *testing.F) {
	for _, seed := range [][3]string{
		{"", "apps", "web"}, {"", "", "web"}, {"explicit", "apps", "web"},
		{"", "a-namespace-with-a-rather-long-name", "and-a-release-name-that-is-long-too"}, {"", "ü", "名前"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, releaseName, targetNamespace, name string) {
		got := ReleaseName(releaseName, targetNamespace, name)
		if got != ReleaseName(releaseName, targetNamespace, name) {
			t.Fatal("not deterministic")
		}
		if releaseName != "" {
			if got != releaseName {
				t.Fatalf("explicit release name %q became %q", releaseName, got)
			}
			return
		}
		full := name
		if targetNamespace != "" {
			full = targetNamespace + "-" + name
		}
		if len(full) <= MaxReleaseNameLength && got != full {
			t.Fatalf("%q shortened to %q though it fits", full, got)
		}
		if len(got) > MaxReleaseNameLength {
			t.Fatalf("%q is %d bytes long", got, len(got))
		}
	})
}

// FuzzIgnoreRules: drift ignore rules with any selectors and JSON pointers
// compile or fail with an error, and compiled selectors match objects
// without panicking.
func FuzzIgnoreRules(f *testing.F) {
	for _, seed := range [][4]string{
		{"/spec/replicas", "Deployment", "app=web", ""}, {"/metadata/annotations/example.com~1key", ".*", "", "tier in (web, api)"},
		{"/a~0b", "(", "!canary", "a=b=c"}, {"", "", "", ""}, {"relative/path", "Config.*", "x notin (y)", "z"},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3])
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "apps", "labels": map[string]any{"app": "web"}, "annotations": map[string]any{"tier": "web"}},
		"spec":     map[string]any{"replicas": int64(2)},
	}}
	f.Fuzz(func(t *testing.T, path, kind, labelSelector, annotationSelector string) {
		rules := []ssajsondiff.IgnoreRule{{
			Paths:    []string{path},
			Selector: &ssajsondiff.Selector{Kind: kind, Name: kind, LabelSelector: labelSelector, AnnotationSelector: annotationSelector},
		}}
		compiled, err := ssajsondiff.CompileIgnoreRules(rules)
		if err != nil {
			return
		}
		for sel := range compiled {
			_ = sel.MatchUnstructured(obj)
		}
	})
}
