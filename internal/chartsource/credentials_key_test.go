package chartsource

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCredentialKeyOutsideTheCache: the key that names the cache entries
// of each set of credentials is kept with the integrity key, outside the
// cache directory: the same cache used with another integrity key (a
// cache restored on another machine or job) names them otherwise, the
// same key names them alike, and nothing of it is written into the cache.
func TestCredentialKeyOutsideTheCache(t *testing.T) {
	cache, config := t.TempDir(), t.TempDir()
	auth := Auth{Username: "bot", Password: "s3cret"}
	id := func(keyFile string) string {
		return NewRepositories(cache, 0).WithIntegrityKeyFile(keyFile).credentialID(auth)
	}
	here := id(filepath.Join(config, "here.key"))
	if here == "" || here != id(filepath.Join(config, "here.key")) {
		t.Fatalf("the same integrity key names the entries %q and %q", here, id(filepath.Join(config, "here.key")))
	}
	if other := id(filepath.Join(config, "elsewhere.key")); other == here {
		t.Error("another machine's integrity key names the entries of the same credentials alike")
	}
	entries, err := os.ReadDir(cache)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("the cache directory holds %s: a key there would travel with the cache", e.Name())
	}
	inCache := filepath.Join(cache, "in-cache.key")
	if first, second := id(inCache), id(inCache); first == second {
		t.Error("a key file inside the cache directory is used: two processes name the entries alike")
	}
}
