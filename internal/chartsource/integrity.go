package chartsource

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
)

// What names a digest in the cache must carry proof that this provider
// wrote it: a repository's index, which names the digests its archives
// are checked against, and the validators (ETag, Last-Modified) that
// revalidate it. The proof is an HMAC under the integrity key, kept
// outside the cache directory (IntegrityKeyFile), which a cache restored
// from elsewhere (a CI cache other jobs write, a shared directory) does
// not carry: what it holds without a valid proof is fetched again. A
// machine whose key is new (or unreadable) downloads each index once.

// integrityKeyName is the integrity key's file, under the user's
// configuration directory by default.
const integrityKeyName = "cache-integrity.key"

// DefaultIntegrityKeyFile is where the integrity key is kept: under the
// user's configuration directory ($XDG_CONFIG_HOME, ~/.config,
// %AppData%, ~/Library/Application Support); empty when there is none.
func DefaultIntegrityKeyFile() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "terraform-provider-helmrelease", integrityKeyName)
}

// WithIntegrityKeyFile makes r keep its integrity key in file (empty: a
// key of the process's own, which no other process can prove anything
// with). A file in the cache directory is not used: it would travel with
// the cache. Call it before r's first request.
func (r *Repositories) WithIntegrityKeyFile(file string) *Repositories {
	r.integrityFile = file
	return r
}

// integrityKey is r's integrity key: read from its file, made there when
// missing; a key of the process's own where neither can be done.
func (r *Repositories) integrityKey() []byte {
	r.integrityOnce.Do(func() {
		file := r.integrityFile
		if file != "" && r.cacheDir != "" && within(filepath.Clean(r.cacheDir), filepath.Clean(file)) {
			file = ""
		}
		if file == "" {
			r.integrity = make([]byte, 32)
			_, _ = rand.Read(r.integrity) // never fails: the runtime crashes instead
			return
		}
		r.integrity = loadOrMakeKey(file)
	})
	return r.integrity
}

// indexProof is the HMAC that vouches for a cached index: the index of
// key (indexCacheKey), of content digest sha256, revalidated by v.
func (r *Repositories) indexProof(key string, v validators) string {
	mac := hmac.New(sha256.New, r.integrityKey())
	for _, s := range []string{"index", key, v.Digest, v.ETag, v.LastModified} {
		mac.Write([]byte(s))
		mac.Write([]byte{0})
	}
	return hex.EncodeToString(mac.Sum(nil))
}

// proven reports whether v, read from the cache, was written by a
// process holding the integrity key for the index of key.
func (r *Repositories) proven(key string, v validators) bool {
	return v.Digest != "" && v.Proof != "" && hmac.Equal([]byte(v.Proof), []byte(r.indexProof(key, v)))
}
