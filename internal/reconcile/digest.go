package reconcile

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"slices"
	"sort"
	"strings"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
)

const (
	// digestPrefix starts the digests of what holds no secret (post-
	// renderers, options), as in Flux (an OCI digest algorithm). Versions
	// before keyed digests wrote values and release digests so too.
	digestPrefix = "sha256:"
	// keyedDigestPrefix starts the digests of values and releases.
	keyedDigestPrefix = "hmac-sha256:"
)

// ErrNoDigestKey: digests of values and releases need the resource's key.
var ErrNoDigestKey = errors.New("no key to digest values with")

// Digests computes the digests a status records of values and of releases,
// which hold secrets (sensitive values, values read from Secrets, Secret
// objects in the manifest): HMAC-SHA-256 under the resource's key, kept in
// its private state, so that a plan or state published for review gives no
// way to confirm a guessed value offline, as a plain SHA-256 would.
type Digests struct {
	// Key is the resource's key; without it, computing a digest fails.
	Key []byte
}

// Config is the digest of the composed values of a release; an empty or nil
// map has the digest of no values.
func (d Digests) Config(values map[string]any) (string, error) {
	return d.keyed(configObserved(values))
}

// Release is the digest of what identifies a release in storage: its name,
// namespace, revision, status, chart, values, manifest and the hooks that
// are not tests. A release changed by anything else (a manual helm upgrade
// or rollback, an uninstall keeping history) has another digest. Test hooks
// are left out: running tests must not change it.
func (d Digests) Release(rel *helm.Release) (string, error) {
	if rel == nil {
		return "", nil
	}
	return d.keyed(releaseObserved(rel))
}

// SameConfig reports whether stored, a digest a status recorded (keyed, or
// plain from a version before keyed digests), is the digest of values.
func (d Digests) SameConfig(stored string, values map[string]any) (bool, error) {
	got, err := d.of(stored, configObserved(values))
	return err == nil && got != "" && got == stored, err
}

// SameRelease reports whether stored, a digest a status recorded (keyed,
// or plain from a version before keyed digests), is the digest of rel.
func (d Digests) SameRelease(stored string, rel *helm.Release) (bool, error) {
	if rel == nil {
		return stored == "", nil
	}
	got, err := d.of(stored, releaseObserved(rel))
	return err == nil && got != "" && got == stored, err
}

// of is the digest of v in the form of stored: plain for a plain digest.
func (d Digests) of(stored string, v any) (string, error) {
	if isPlainDigest(stored) {
		return digestJSON(sha256.New(), digestPrefix, v)
	}
	if stored == "" {
		return "", nil // none recorded: no digest is the same
	}
	return d.keyed(v)
}

func (d Digests) keyed(v any) (string, error) {
	if len(d.Key) == 0 {
		return "", ErrNoDigestKey
	}
	return digestJSON(hmac.New(sha256.New, d.Key), keyedDigestPrefix, v)
}

// isPlainDigest: a digest of values or of a release a version before keyed
// digests recorded.
func isPlainDigest(s string) bool { return strings.HasPrefix(s, digestPrefix) }

// PlainDigests are the digests of rel that versions before keyed digests
// recorded in the status (of its values, then of the release): what no
// output may show, since anyone may compute them from a guess.
func PlainDigests(rel *helm.Release) []string {
	config, _ := digestJSON(sha256.New(), digestPrefix, configObserved(rel.Config))
	digest, _ := digestJSON(sha256.New(), digestPrefix, releaseObserved(rel))
	return []string{config, digest}
}

func digestJSON(h hash.Hash, prefix string, v any) (string, error) {
	// encoding/json writes map keys sorted: the encoding is canonical.
	if err := json.NewEncoder(h).Encode(v); err != nil {
		return "", fmt.Errorf("computing digest: %w", err)
	}
	return prefix + hex.EncodeToString(h.Sum(nil)), nil
}

// configObserved is what the digest of values covers: no values and empty
// values are the same.
func configObserved(values map[string]any) any {
	if len(values) == 0 {
		return nil
	}
	return values
}

// releaseObserved is what the digest of a release covers.
func releaseObserved(rel *helm.Release) any {
	type hook struct{ Path, Manifest string }
	observed := struct {
		Name, Namespace string
		Version         int
		Status          helm.Status
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
	return observed
}

func isTestHook(h *helm.Hook) bool {
	for _, e := range h.Events {
		if e == helm.HookTest {
			return true
		}
	}
	return false
}

// PostRenderers is the digest of spec.postRenderers; empty when none. A
// list of Kustomize directives has Flux's digest. The values of a
// command's env, which are sensitive, enter it as HMACs under the key
// (left out without one), so that the digest in a status gives no way to
// confirm a guessed value offline.
func (d Digests) PostRenderers(s *Spec) string {
	if len(s.PostRenderers) == 0 {
		return ""
	}
	renderers := slices.Clone(s.PostRenderers)
	for i, r := range renderers {
		if r.Exec == nil || len(r.Exec.Env) == 0 {
			continue
		}
		x := *r.Exec
		x.Env = make(map[string]string, len(r.Exec.Env))
		for name, v := range r.Exec.Env {
			x.Env[name] = ""
			if len(d.Key) > 0 {
				mac := hmac.New(sha256.New, d.Key)
				mac.Write([]byte(v))
				x.Env[name] = keyedDigestPrefix + hex.EncodeToString(mac.Sum(nil))
			}
		}
		renderers[i].Exec = &x
	}
	digest, _ := digestJSON(sha256.New(), digestPrefix, renderers) // plain structs of strings: cannot fail
	return digest
}

// OptionsDigest is the digest of the spec fields that change what a
// release renders besides chart, values and post-renderers: the common
// metadata. Empty when none.
func OptionsDigest(s *Spec) string {
	if len(s.CommonMetadata.Labels) == 0 && len(s.CommonMetadata.Annotations) == 0 {
		return ""
	}
	d, _ := digestJSON(sha256.New(), digestPrefix, s.CommonMetadata)
	return d
}
