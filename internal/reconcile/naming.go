package reconcile

import (
	"crypto/sha256"
	"encoding/hex"
)

// MaxReleaseNameLength is Helm's limit on release names.
const MaxReleaseNameLength = 53

// ReleaseName returns the release name of a HelmRelease named name:
// releaseName when set, else [targetNamespace-]name, shortened when longer
// than 53 characters to its first 40 characters, a dash and the first 12
// hex digits of its SHA-256 (HelmRelease v2 "Release name").
func ReleaseName(releaseName, targetNamespace, name string) string {
	if releaseName != "" {
		return releaseName
	}
	full := name
	if targetNamespace != "" {
		full = targetNamespace + "-" + name
	}
	if len(full) <= MaxReleaseNameLength {
		return full
	}
	sum := sha256.Sum256([]byte(full))
	return full[:40] + "-" + hex.EncodeToString(sum[:])[:12]
}
