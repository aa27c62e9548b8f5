package reconcile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	releasecommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/postrender"
)

// testDigests digests under a fixed key, as a resource's would.
var testDigests = Digests{Key: []byte("0123456789abcdef0123456789abcdef")}

func TestConfigDigest(t *testing.T) {
	a, _ := testDigests.Config(map[string]any{"a": 1, "b": map[string]any{"c": "d", "e": []any{1, 2}}})
	b, _ := testDigests.Config(map[string]any{"b": map[string]any{"e": []any{1, 2}, "c": "d"}, "a": 1})
	if a != b || !strings.HasPrefix(a, "hmac-sha256:") || len(a) != len("hmac-sha256:")+64 {
		t.Errorf("digests of equal values differ or are malformed: %s %s", a, b)
	}
	c, _ := testDigests.Config(map[string]any{"a": 2})
	if c == a {
		t.Error("different values have the same digest")
	}
	empty, _ := testDigests.Config(nil)
	alsoEmpty, _ := testDigests.Config(map[string]any{})
	if empty != alsoEmpty {
		t.Error("nil and empty values have different digests")
	}
	// Whole numbers from HCL (int64) and from YAML (float64) are the same value.
	i, _ := testDigests.Config(map[string]any{"n": int64(3)})
	f, _ := testDigests.Config(map[string]any{"n": float64(3)})
	if i != f {
		t.Error("3 and 3.0 have different digests")
	}
}

// TestDigestsConfirmNoGuess: a digest of values holding a password is of
// no use to confirm a guess of it without the resource's key.
func TestDigestsConfirmNoGuess(t *testing.T) {
	values := map[string]any{"auth": map[string]any{"password": "hunter2"}}
	got, err := testDigests.Config(values)
	if err != nil {
		t.Fatal(err)
	}
	plain := sha256.Sum256([]byte(`{"auth":{"password":"hunter2"}}` + "\n"))
	if strings.Contains(got, hex.EncodeToString(plain[:])) {
		t.Errorf("the digest %s is the plain SHA-256 of the values", got)
	}
	for _, d := range PlainDigests(&release.Release{Config: values}) {
		if d == got {
			t.Errorf("the digest %s is the one versions before keyed digests recorded", got)
		}
	}
	other, _ := Digests{Key: []byte("another key of 32 bytes.........")}.Config(values)
	if other == got {
		t.Error("two keys give the same digest")
	}
	if _, err := (Digests{}).Config(values); !errors.Is(err, ErrNoDigestKey) {
		t.Errorf("digest without a key: %v, want %v", err, ErrNoDigestKey)
	}
}

func testReleaseFor(mutate func(*release.Release)) *release.Release {
	r := &release.Release{
		Name: "web", Namespace: "apps", Version: 2,
		Info:     &release.Info{Status: releasecommon.StatusDeployed},
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

func TestReleaseDigest(t *testing.T) {
	base, _ := testDigests.Release(testReleaseFor(nil))
	for name, tc := range map[string]struct {
		mutate func(*release.Release)
		same   bool
	}{
		"test hook run":     {func(r *release.Release) { r.Hooks[1].LastRun.Phase = release.HookPhaseFailed }, true},
		"test hook changed": {func(r *release.Release) { r.Hooks[1].Manifest = "other" }, true},
		"description":       {func(r *release.Release) { r.Info.Description = "other" }, true},
		"revision":          {func(r *release.Release) { r.Version = 3 }, false},
		"status":            {func(r *release.Release) { r.Info.Status = releasecommon.StatusUninstalled }, false},
		"values":            {func(r *release.Release) { r.Config = map[string]any{"a": 2} }, false},
		"chart version":     {func(r *release.Release) { r.Chart.Metadata.Version = "1.0.1" }, false},
		"manifest":          {func(r *release.Release) { r.Manifest = "kind: Secret" }, false},
		"install hook":      {func(r *release.Release) { r.Hooks[0].Manifest = "other" }, false},
	} {
		got, _ := testDigests.Release(testReleaseFor(tc.mutate))
		if (got == base) != tc.same {
			t.Errorf("%s: digest equal to the original = %v, want %v", name, got == base, tc.same)
		}
	}
	// No values: written as {} and read back from storage as nil.
	empty, _ := testDigests.Release(testReleaseFor(func(r *release.Release) { r.Config = map[string]any{} }))
	none, _ := testDigests.Release(testReleaseFor(func(r *release.Release) { r.Config = nil }))
	if empty != none {
		t.Error("no values: the digest differs between {} and nil")
	}
}

// TestSameDigests: a recorded digest is compared in its own form, keyed or
// plain (a status recorded before keyed digests).
func TestSameDigests(t *testing.T) {
	rel := testReleaseFor(nil)
	changed := testReleaseFor(func(r *release.Release) { r.Manifest = "kind: Secret" })
	plain := PlainDigests(rel)
	keyedRelease, _ := testDigests.Release(rel)
	keyedConfig, _ := testDigests.Config(rel.Config)
	for _, tc := range []struct {
		name   string
		same   func() (bool, error)
		want   bool
		hasErr bool
	}{
		{"keyed release", func() (bool, error) { return testDigests.SameRelease(keyedRelease, rel) }, true, false},
		{"keyed release changed", func() (bool, error) { return testDigests.SameRelease(keyedRelease, changed) }, false, false},
		{"plain release", func() (bool, error) { return testDigests.SameRelease(plain[1], rel) }, true, false},
		{"plain release changed", func() (bool, error) { return testDigests.SameRelease(plain[1], changed) }, false, false},
		{"plain release, no key", func() (bool, error) { return Digests{}.SameRelease(plain[1], rel) }, true, false},
		{"keyed release, no key", func() (bool, error) { return Digests{}.SameRelease(keyedRelease, rel) }, false, true},
		{"keyed release, another key", func() (bool, error) { return Digests{Key: []byte("k")}.SameRelease(keyedRelease, rel) }, false, false},
		{"no release recorded", func() (bool, error) { return testDigests.SameRelease("", rel) }, false, false},
		{"keyed values", func() (bool, error) { return testDigests.SameConfig(keyedConfig, rel.Config) }, true, false},
		{"plain values", func() (bool, error) { return testDigests.SameConfig(plain[0], rel.Config) }, true, false},
		{"plain values changed", func() (bool, error) { return testDigests.SameConfig(plain[0], map[string]any{"a": 2}) }, false, false},
		{"no values recorded", func() (bool, error) { return testDigests.SameConfig("", rel.Config) }, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.same()
			if got != tc.want || (err != nil) != tc.hasErr {
				t.Errorf("same = %v, %v; want %v, error %v", got, err, tc.want, tc.hasErr)
			}
		})
	}
}

// TestUpgradePlainDigests: a status recorded before keyed digests gets
// keyed ones for what storage or the values confirm, and keeps no plain
// digest it cannot confirm.
func TestUpgradePlainDigests(t *testing.T) {
	v1 := testReleaseFor(func(r *release.Release) { r.Version = 1; r.Info.Status = releasecommon.StatusSuperseded })
	v2 := testReleaseFor(func(r *release.Release) { r.Config = map[string]any{"a": 2} })
	plainStatus := func(lastAttempted map[string]any) *Status {
		st := &Status{}
		for _, rel := range []*release.Release{v2, v1} {
			p := PlainDigests(rel)
			st.History = append(st.History, Snapshot{Name: rel.Name, Namespace: rel.Namespace, Version: rel.Version, ConfigDigest: p[0], Digest: p[1]})
		}
		st.LastAttemptedConfigDigest = PlainDigests(&release.Release{Config: lastAttempted})[0]
		return st
	}
	keyed := func(rel *release.Release) (string, string) {
		c, _ := testDigests.Config(rel.Config)
		d, _ := testDigests.Release(rel)
		return c, d
	}
	v1Config, v1Digest := keyed(v1)
	v2Config, v2Digest := keyed(v2)
	changedV2 := testReleaseFor(func(r *release.Release) { r.Config = map[string]any{"a": 2}; r.Manifest = "kind: Secret" })
	for _, tc := range []struct {
		name          string
		status        *Status
		stored        []*release.Release
		values        map[string]any
		history       [][2]string // config, digest per snapshot
		lastAttempted string
	}{
		{name: "confirmed by storage", status: plainStatus(v2.Config), stored: []*release.Release{v1, v2},
			history: [][2]string{{v2Config, v2Digest}, {v1Config, v1Digest}}, lastAttempted: v2Config},
		{name: "revision 1 gone from storage", status: plainStatus(v2.Config), stored: []*release.Release{v2},
			history: [][2]string{{v2Config, v2Digest}, {"", ""}}, lastAttempted: v2Config},
		{name: "revision 2 changed by hand", status: plainStatus(v2.Config), stored: []*release.Release{v1, changedV2},
			history: [][2]string{{"", ""}, {v1Config, v1Digest}}, lastAttempted: ""},
		{name: "last attempt not confirmed at refresh (no values)", status: plainStatus(map[string]any{"a": 3}), stored: []*release.Release{v1, v2},
			history: [][2]string{{v2Config, v2Digest}, {v1Config, v1Digest}}, lastAttempted: ""},
		{name: "last attempt confirmed by the values", status: plainStatus(map[string]any{"a": 3}), stored: []*release.Release{v1, v2},
			values: map[string]any{"a": 3}, history: [][2]string{{v2Config, v2Digest}, {v1Config, v1Digest}},
			lastAttempted: func() string { c, _ := testDigests.Config(map[string]any{"a": 3}); return c }()},
		{name: "last attempt not confirmed", status: plainStatus(map[string]any{"a": 3}), stored: []*release.Release{v1, v2},
			values: map[string]any{"a": 4}, history: [][2]string{{v2Config, v2Digest}, {v1Config, v1Digest}},
			lastAttempted: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.status.HasPlainDigests() {
				t.Fatal("the status before has no plain digests")
			}
			if err := testDigests.Upgrade(tc.status, tc.stored, tc.values); err != nil {
				t.Fatal(err)
			}
			for i, want := range tc.history {
				if got := tc.status.History[i]; got.ConfigDigest != want[0] || got.Digest != want[1] {
					t.Errorf("revision %d: digests %s, %s; want %s, %s", got.Version, got.ConfigDigest, got.Digest, want[0], want[1])
				}
			}
			if tc.status.LastAttemptedConfigDigest != tc.lastAttempted {
				t.Errorf("last attempted config digest %s, want %s", tc.status.LastAttemptedConfigDigest, tc.lastAttempted)
			}
		})
	}
	if err := (Digests{}).Upgrade(plainStatus(nil), nil, nil); !errors.Is(err, ErrNoDigestKey) {
		t.Errorf("upgrade without a key: %v, want %v", err, ErrNoDigestKey)
	}
}

// TestPostRenderersDigestHidesEnv: a command's env values enter the
// digest of the post-renderers keyed, so that a status published for
// review confirms no guess of them; a change of value still changes it.
func TestPostRenderersDigestHidesEnv(t *testing.T) {
	spec := func(token string) *Spec {
		return &Spec{PostRenderers: []postrender.Renderer{{Exec: &postrender.Exec{Command: "yq", Env: map[string]string{"TOKEN": token}}}}}
	}
	key, other := Digests{Key: []byte("resource key")}, Digests{Key: []byte("another key")}
	unkeyed, err := digestJSON(sha256.New(), digestPrefix, spec("hunter2").PostRenderers)
	if err != nil {
		t.Fatal(err)
	}
	got := key.PostRenderers(spec("hunter2"))
	switch {
	case got == unkeyed:
		t.Error("the digest is the plain digest of the env values")
	case got == other.PostRenderers(spec("hunter2")):
		t.Error("the digest does not depend on the key")
	case got == key.PostRenderers(spec("hunter3")):
		t.Error("another env value has the same digest")
	case got != key.PostRenderers(spec("hunter2")):
		t.Error("the digest is not stable")
	case (Digests{}).PostRenderers(spec("hunter2")) != (Digests{}).PostRenderers(spec("hunter3")):
		t.Error("without a key, the env values enter the digest")
	}
	if s := spec("hunter2"); s.PostRenderers[0].Exec.Env["TOKEN"] != "hunter2" {
		t.Error("the digest changed the spec")
	}
	kustomize := &Spec{PostRenderers: []postrender.Renderer{{Kustomize: postrender.Kustomize{Images: []postrender.Image{{Name: "app", NewTag: "2"}}}}}}
	if want, _ := digestJSON(sha256.New(), digestPrefix, kustomize.PostRenderers); key.PostRenderers(kustomize) != want {
		t.Error("a Kustomize list's digest is not Flux's")
	}
}

// TestPostRenderersDigestCoversPrograms: the digest of a command's
// post-renderer changes when its program is edited, or a file its
// arguments name, with the command line unchanged; a status recorded
// before programs entered it is told apart (PostRenderersBeforePrograms).
func TestPostRenderersDigestCoversPrograms(t *testing.T) {
	dir := t.TempDir()
	script, patch := filepath.Join(dir, "render.sh"), filepath.Join(dir, "patch.yaml")
	write := func(path, content string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write(script, "#!/bin/sh\ncat\n")
	write(patch, "a: 1\n")
	spec := &Spec{PostRenderers: []postrender.Renderer{{Exec: &postrender.Exec{Command: script, Args: []string{patch, "--flag"}}}}}
	d := Digests{Key: []byte("resource key")}
	first := d.PostRenderers(spec)
	if first == d.PostRenderersBeforePrograms(spec) {
		t.Fatal("the program's content is not in the digest")
	}
	write(script, "#!/bin/sh\nsed s/a/b/\n")
	edited := d.PostRenderers(spec)
	if edited == first {
		t.Error("an edited program leaves the digest as it was")
	}
	write(patch, "a: 2\n")
	if d.PostRenderers(spec) == edited {
		t.Error("an edited file named by an argument leaves the digest as it was")
	}
	if again, once := d.PostRenderers(spec), d.PostRenderers(spec); again != once {
		t.Error("the digest is not stable")
	}
	if err := os.Remove(script); err != nil {
		t.Fatal(err)
	}
	if got := d.PostRenderers(spec); got == first || got == edited {
		t.Error("a missing program has the digest of a program that existed")
	}
}
