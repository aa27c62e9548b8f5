package reconcile

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"sort"
	"strings"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/postrender"
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
// confirm a guessed value offline; so does the content of each command's
// program and of the files its arguments name (postrender.Exec.Files), so
// that an edited script is a change like an edited directive.
func (d Digests) PostRenderers(s *Spec) string {
	return d.postRenderers(s, true)
}

// PostRenderersBeforePrograms is PostRenderers as versions of this
// provider that did not digest the commands' programs wrote it: a status
// that records it says nothing of the programs deployed.
func (d Digests) PostRenderersBeforePrograms(s *Spec) string {
	return d.postRenderers(s, false)
}

func (d Digests) postRenderers(s *Spec, programs bool) string {
	if len(s.PostRenderers) == 0 {
		return ""
	}
	type digested struct {
		postrender.Renderer
		// Programs are the digests of the files a command runs and
		// reads, by path.
		Programs map[string]string `json:",omitempty"`
	}
	renderers := make([]digested, len(s.PostRenderers))
	for i, r := range s.PostRenderers {
		renderers[i].Renderer = r
		if r.Exec == nil {
			continue
		}
		if programs {
			renderers[i].Programs = d.programs(r.Exec)
		}
		if len(r.Exec.Env) == 0 {
			continue
		}
		x := *r.Exec
		x.Env = make(map[string]string, len(r.Exec.Env))
		for name, v := range r.Exec.Env {
			x.Env[name] = ""
			if len(d.Key) > 0 {
				x.Env[name] = d.keyedBytes([]byte(v))
			}
		}
		renderers[i].Exec = &x
	}
	digest, _ := digestJSON(sha256.New(), digestPrefix, renderers) // plain structs of strings: cannot fail
	return digest
}

// programs digests what x.Files finds, keyed when d has a key; a file
// that cannot be found or read is recorded with why, so that it differs
// from any content.
func (d Digests) programs(x *postrender.Exec) map[string]string {
	files, err := x.Files()
	if err != nil {
		return map[string]string{x.Command: "unreadable: " + err.Error()}
	}
	out := make(map[string]string, len(files))
	for path, content := range files {
		if len(d.Key) > 0 {
			out[path] = d.keyedBytes(content)
			continue
		}
		sum := sha256.Sum256(content)
		out[path] = digestPrefix + hex.EncodeToString(sum[:])
	}
	return out
}

// keyedBytes is the HMAC of b under d's key.
func (d Digests) keyedBytes(b []byte) string {
	mac := hmac.New(sha256.New, d.Key)
	mac.Write(b)
	return keyedDigestPrefix + hex.EncodeToString(mac.Sum(nil))
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
