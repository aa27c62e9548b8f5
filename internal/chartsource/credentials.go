package chartsource

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// What is cached of a repository that asks for credentials is kept apart
// per set of credentials: a release with wrong or no credentials never
// resolves from what another release's credentials downloaded, in the
// process or on disk (an index revalidated or used stale).

// authenticated reports whether auth identifies the client to the
// repository (basic auth or a client certificate).
func (a Auth) authenticated() bool {
	return a.Username != "" || a.Password != "" || a.CertFile != "" || a.KeyFile != "" || a.CertPEM != "" || a.KeyPEM != "" || a.Login != nil || a.DockerConfig
}

// dockerConfigID stands for the credentials of Docker's configuration in
// credentialID.
const dockerConfigID = "\x00docker-config"

// credentialID names auth's cache entries: empty for anonymous access
// (shared), else an HMAC of the credentials under the cache's key.
func (r *Repositories) credentialID(auth Auth) string {
	if !auth.authenticated() {
		return ""
	}
	mac := hmac.New(sha256.New, r.credentialKey())
	secret := auth.Password
	switch {
	case auth.Login != nil:
		// One login, one access: a renewed token keeps the cache.
		secret = auth.Login.ID()
	case auth.DockerConfig && auth.Username == "" && auth.Password == "":
		secret = dockerConfigID
	}
	for _, s := range []string{auth.Username, secret, auth.CertFile, auth.KeyFile, auth.CertPEM, auth.KeyPEM} {
		mac.Write([]byte(s))
		mac.Write([]byte{0})
	}
	return hex.EncodeToString(mac.Sum(nil))
}

// credentialKey names the cache entries of each set of credentials: a
// plain digest of a password in a file name would let whoever lists the
// directory confirm a guess. It derives from the integrity key, kept
// outside the cache directory: a cache copied elsewhere, without it,
// neither confirms a guess nor lends one set of credentials' entries to
// another (a key in the cache would travel with it).
func (r *Repositories) credentialKey() []byte {
	r.keyOnce.Do(func() {
		mac := hmac.New(sha256.New, r.integrityKey())
		mac.Write([]byte("credentials"))
		r.key = mac.Sum(nil)
	})
	return r.key
}

func loadOrMakeKey(path string) []byte {
	if b, err := os.ReadFile(path); err == nil && len(b) == 32 {
		return b
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key) // never fails: the runtime crashes instead
	if os.MkdirAll(filepath.Dir(path), 0o750) != nil {
		return key
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		// Made by another process meanwhile.
		if b, err := os.ReadFile(path); err == nil && len(b) == 32 {
			return b
		}
		return key
	}
	if err != nil {
		return key
	}
	_, werr := f.Write(key)
	if cerr := f.Close(); werr != nil || cerr != nil {
		_ = os.Remove(path)
	}
	return key
}

// indexCacheKey names the index of repoURL fetched with auth, in the
// process and on disk.
func (r *Repositories) indexCacheKey(repoURL string, auth Auth) string {
	key := indexURL(repoURL)
	if id := r.credentialID(auth); id != "" {
		key += "\x00" + id
	}
	return key
}
