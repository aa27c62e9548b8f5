package reconcile

import (
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
)

func TestConfigDigest(t *testing.T) {
	a, _ := ConfigDigest(map[string]any{"a": 1, "b": map[string]any{"c": "d", "e": []any{1, 2}}})
	b, _ := ConfigDigest(map[string]any{"b": map[string]any{"e": []any{1, 2}, "c": "d"}, "a": 1})
	if a != b || !strings.HasPrefix(a, "sha256:") || len(a) != len("sha256:")+64 {
		t.Errorf("digests of equal values differ or are malformed: %s %s", a, b)
	}
	c, _ := ConfigDigest(map[string]any{"a": 2})
	if c == a {
		t.Error("different values have the same digest")
	}
	empty, _ := ConfigDigest(nil)
	alsoEmpty, _ := ConfigDigest(map[string]any{})
	if empty != alsoEmpty {
		t.Error("nil and empty values have different digests")
	}
	// Whole numbers from HCL (int64) and from YAML (float64) are the same value.
	i, _ := ConfigDigest(map[string]any{"n": int64(3)})
	f, _ := ConfigDigest(map[string]any{"n": float64(3)})
	if i != f {
		t.Error("3 and 3.0 have different digests")
	}
}

func TestReleaseDigest(t *testing.T) {
	rel := func(mutate func(*release.Release)) *release.Release {
		r := &release.Release{
			Name: "web", Namespace: "apps", Version: 2,
			Info:     &release.Info{Status: release.StatusDeployed},
			Chart:    &chart.Chart{Metadata: &chart.Metadata{Name: "app", Version: "1.0.0"}},
			Config:   map[string]any{"a": 1},
			Manifest: "kind: ConfigMap",
			Hooks: []*release.Hook{
				{Path: "pre.yaml", Manifest: "pre", Events: []release.HookEvent{release.HookPreInstall}},
				{Path: "test.yaml", Manifest: "test", Events: []release.HookEvent{release.HookTest}},
			},
		}
		if mutate != nil {
			mutate(r)
		}
		return r
	}
	base, _ := ReleaseDigest(rel(nil))
	for name, tc := range map[string]struct {
		mutate func(*release.Release)
		same   bool
	}{
		"test hook run":     {func(r *release.Release) { r.Hooks[1].LastRun.Phase = release.HookPhaseFailed }, true},
		"test hook changed": {func(r *release.Release) { r.Hooks[1].Manifest = "other" }, true},
		"description":       {func(r *release.Release) { r.Info.Description = "other" }, true},
		"revision":          {func(r *release.Release) { r.Version = 3 }, false},
		"status":            {func(r *release.Release) { r.Info.Status = release.StatusUninstalled }, false},
		"values":            {func(r *release.Release) { r.Config = map[string]any{"a": 2} }, false},
		"chart version":     {func(r *release.Release) { r.Chart.Metadata.Version = "1.0.1" }, false},
		"manifest":          {func(r *release.Release) { r.Manifest = "kind: Secret" }, false},
		"install hook":      {func(r *release.Release) { r.Hooks[0].Manifest = "other" }, false},
	} {
		got, _ := ReleaseDigest(rel(tc.mutate))
		if (got == base) != tc.same {
			t.Errorf("%s: digest equal to the original = %v, want %v", name, got == base, tc.same)
		}
	}
	// No values: written as {} and read back from storage as nil.
	empty, _ := ReleaseDigest(rel(func(r *release.Release) { r.Config = map[string]any{} }))
	none, _ := ReleaseDigest(rel(func(r *release.Release) { r.Config = nil }))
	if empty != none {
		t.Error("no values: the digest differs between {} and nil")
	}
}
