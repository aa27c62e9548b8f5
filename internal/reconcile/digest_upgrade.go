package reconcile

import (
	"fmt"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
)

// HasPlainDigests reports whether st holds digests of values or releases
// that a version before keyed digests recorded.
func (s *Status) HasPlainDigests() bool {
	if isPlainDigest(s.LastAttemptedConfigDigest) {
		return true
	}
	for _, snap := range s.History {
		if isPlainDigest(snap.ConfigDigest) || isPlainDigest(snap.Digest) {
			return true
		}
	}
	return false
}

// Upgrade replaces the plain digests that a version before keyed digests
// recorded in st with keyed ones, where it can confirm them: a snapshot's
// from its revision in stored (the release's whole history in storage), the last
// attempted values' from values (nil when not at hand) or from a snapshot
// that had the same values. A digest it cannot confirm is dropped, not
// kept: a snapshot whose revision is gone from storage or changed loses
// its digests, which no longer identify what storage holds, and a last
// attempted digest neither storage nor values confirm is cleared (the
// plan then compares the values with the newest revision's).
func (d Digests) Upgrade(st *Status, stored []*helm.Release, values map[string]any) error {
	if !st.HasPlainDigests() {
		return nil
	}
	if len(d.Key) == 0 {
		return ErrNoDigestKey
	}
	byVersion := make(map[int]*helm.Release, len(stored))
	for _, rel := range stored {
		byVersion[rel.Version] = rel
	}
	configs := map[string]string{} // plain → keyed
	for i := range st.History {
		snap := &st.History[i]
		if !isPlainDigest(snap.Digest) && !isPlainDigest(snap.ConfigDigest) {
			continue
		}
		rel := byVersion[snap.Version]
		if same, err := d.SameRelease(snap.Digest, rel); err != nil || rel == nil || !same || snap.Name != rel.Name || snap.Namespace != rel.Namespace {
			snap.Digest, snap.ConfigDigest = "", ""
			continue
		}
		digest, err := d.Release(rel)
		if err != nil {
			return fmt.Errorf("upgrading the digests of revision %d: %w", snap.Version, err)
		}
		config, err := d.Config(rel.Config)
		if err != nil {
			return fmt.Errorf("upgrading the digests of revision %d: %w", snap.Version, err)
		}
		if snap.ConfigDigest != "" {
			configs[snap.ConfigDigest] = config
		}
		snap.Digest, snap.ConfigDigest = digest, config
	}
	if !isPlainDigest(st.LastAttemptedConfigDigest) {
		return nil
	}
	if keyed, ok := configs[st.LastAttemptedConfigDigest]; ok {
		st.LastAttemptedConfigDigest = keyed
		return nil
	}
	if values == nil {
		st.LastAttemptedConfigDigest = ""
		return nil
	}
	if same, err := d.SameConfig(st.LastAttemptedConfigDigest, values); err != nil || !same {
		st.LastAttemptedConfigDigest = ""
		return err
	}
	keyed, err := d.Config(values)
	if err != nil {
		return err
	}
	st.LastAttemptedConfigDigest = keyed
	return nil
}
