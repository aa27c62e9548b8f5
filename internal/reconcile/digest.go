package reconcile

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"

	"helm.sh/helm/v3/pkg/release"
)

// digestPrefix starts every digest, as in Flux (an OCI digest algorithm).
const digestPrefix = "sha256:"

func digestJSON(v any) (string, error) {
	h := sha256.New()
	// encoding/json writes map keys sorted: the encoding is canonical.
	if err := json.NewEncoder(h).Encode(v); err != nil {
		return "", fmt.Errorf("computing digest: %w", err)
	}
	return digestPrefix + hex.EncodeToString(h.Sum(nil)), nil
}

// ConfigDigest is the digest of the composed values of a release; an empty
// or nil map has the digest of no values.
func ConfigDigest(values map[string]any) (string, error) {
	if len(values) == 0 {
		return digestJSON(nil)
	}
	return digestJSON(values)
}

// ReleaseDigest is the digest of what identifies a release in storage: its
// name, namespace, revision, status, chart, values, manifest and the hooks
// that are not tests. A release changed by anything else (a manual helm
// upgrade or rollback, an uninstall keeping history) has another digest.
// Test hooks are left out: running tests must not change it.
func ReleaseDigest(rel *release.Release) (string, error) {
	if rel == nil {
		return "", nil
	}
	type hook struct{ Path, Manifest string }
	observed := struct {
		Name, Namespace string
		Version         int
		Status          release.Status
		ChartName       string
		ChartVersion    string
		AppVersion      string
		// Helm stores the config with omitempty: no values read back as nil.
		Config   map[string]any `json:",omitempty"`
		Manifest string
		Hooks    []hook
	}{
		Name: rel.Name, Namespace: rel.Namespace, Version: rel.Version,
		Config: rel.Config, Manifest: rel.Manifest,
	}
	if rel.Info != nil {
		observed.Status = rel.Info.Status
	}
	if rel.Chart != nil && rel.Chart.Metadata != nil {
		observed.ChartName = rel.Chart.Metadata.Name
		observed.ChartVersion = rel.Chart.Metadata.Version
		observed.AppVersion = rel.Chart.Metadata.AppVersion
	}
	for _, h := range rel.Hooks {
		if isTestHook(h) {
			continue
		}
		observed.Hooks = append(observed.Hooks, hook{h.Path, h.Manifest})
	}
	sort.Slice(observed.Hooks, func(i, j int) bool { return observed.Hooks[i].Path < observed.Hooks[j].Path })
	return digestJSON(observed)
}

func isTestHook(h *release.Hook) bool {
	for _, e := range h.Events {
		if e == release.HookTest {
			return true
		}
	}
	return false
}

// PostRenderersDigest is the digest of spec.postRenderers; empty when none.
func PostRenderersDigest(s *Spec) string {
	if len(s.PostRenderers) == 0 {
		return ""
	}
	d, _ := digestJSON(s.PostRenderers) // plain structs of strings: cannot fail
	return d
}

// OptionsDigest is the digest of the spec fields that change what a
// release renders besides chart, values and post-renderers: the common
// metadata. Empty when none.
func OptionsDigest(s *Spec) string {
	if len(s.CommonMetadata.Labels) == 0 && len(s.CommonMetadata.Annotations) == 0 {
		return ""
	}
	d, _ := digestJSON(s.CommonMetadata)
	return d
}
