package chartsource

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	chart "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// TestCachedIndexNeedsProof: an index in the cache directory edited to map
// a version to another archive (an older one of the same chart, genuinely
// published) is never used: not when the repository answers 304 to the
// validators cached beside it, not as the stale copy when the repository
// is down, not when the validators are rewritten to match the edit, and
// not when it is written in place while a process reads it. A cache
// written on another machine (another integrity key) is downloaded again,
// never revalidated; one written with the same key is revalidated.
func TestCachedIndexNeedsProof(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := testrepo.NewHTTP(t)
	for _, v := range []string{"0.9.0", "1.0.0"} {
		repo.Add(t, &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "web", Version: v}}, nil)
	}
	src := Source{Repository: repo.URL, Name: "web", Version: "1.0.0", Auth: Auth{Username: testrepo.Username, Password: testrepo.Password}}
	cacheDir, keys := t.TempDir(), t.TempDir()
	key := filepath.Join(keys, "key")
	repos := func(keyFile string) *Repositories { return NewRepositories(cacheDir, 0).WithIntegrityKeyFile(keyFile) }
	resolve := func(t *testing.T, r *Repositories) *Resolved {
		t.Helper()
		out, err := r.Resolve(ctx, src)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	genuine := resolve(t, repos(key))
	if genuine.Chart.Metadata.Version != "1.0.0" {
		t.Fatalf("resolved %s", genuine.Chart.Metadata.Version)
	}
	indexes, err := filepath.Glob(filepath.Join(cacheDir, "indexes", "*.yaml"))
	if err != nil || len(indexes) != 1 {
		t.Fatalf("cached indexes %v: %v", indexes, err)
	}
	cached := indexes[0]
	older := digestOf(repo.File(t, "charts/web-0.9.0.tgz"))
	forge := func(t *testing.T) {
		t.Helper()
		raw, err := os.ReadFile(cached)
		if err != nil {
			t.Fatal(err)
		}
		forged := strings.Replace(string(raw), genuine.Digest, older, 1)
		forged = strings.Replace(forged, "charts/web-1.0.0.tgz", "charts/web-0.9.0.tgz", 1)
		if forged == string(raw) {
			t.Fatal("nothing forged")
		}
		if err := os.WriteFile(cached, []byte(forged), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	check := func(t *testing.T, what string, r *Repositories) {
		t.Helper()
		out, err := r.Resolve(ctx, src)
		if err != nil {
			t.Errorf("%s: %v", what, err)
			return
		}
		if out.Chart.Metadata.Version != "1.0.0" || out.Digest != genuine.Digest {
			t.Errorf("%s: resolved the archive of %s (digest %s), want 1.0.0's", what, out.Chart.Metadata.Version, out.Digest)
		}
	}

	forge(t)
	downloads := repo.IndexDownloads.Load()
	check(t, "forged index, the repository answering 304", repos(key))
	if repo.IndexDownloads.Load() == downloads {
		t.Error("the forged index was revalidated, not downloaded again")
	}

	// The validators rewritten for the forged content: their proof fails.
	forge(t)
	meta := strings.TrimSuffix(cached, ".yaml") + ".json"
	raw, err := os.ReadFile(cached)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := os.ReadFile(meta)
	var rewritten bytes.Buffer
	rewritten.WriteString(strings.Replace(string(v), `"digest":"`, `"digest":"`+digestOf(raw)+`","was":"`, 1))
	if err := os.WriteFile(meta, rewritten.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	check(t, "forged index with validators rewritten", repos(key))

	// The repository down: a forged copy is no stale index.
	forge(t)
	repo.FailWith(http.StatusServiceUnavailable)
	if out, err := repos(key).Resolve(ctx, src); err == nil {
		t.Errorf("repository down, forged index: resolved %s from the cache", out.Chart.Metadata.Version)
	}
	repo.FailWith(0)
	check(t, "repository back", repos(key))
	repo.FailWith(http.StatusServiceUnavailable)
	if out, err := repos(key).Resolve(ctx, src); err != nil || out.StaleIndex == nil {
		t.Errorf("repository down, genuine index: %v, stale %v; want the cached index, stale", err, out != nil && out.StaleIndex != nil)
	}
	repo.FailWith(0)

	// Written in place after the scan, before the chart's entries are read.
	r := repos(key)
	idx, err := r.Index(ctx, repo.URL, src.Auth)
	if err != nil {
		t.Fatal(err)
	}
	forge(t)
	if _, err := idx.Versions("web"); err == nil || !strings.Contains(err.Error(), "changed") {
		t.Errorf("entries read after the cached file was written in place: %v", err)
	}

	// Another machine's cache: downloaded again, then revalidated.
	check(t, "genuine again", repos(key))
	downloads = repo.IndexDownloads.Load()
	check(t, "cache from another machine", repos(filepath.Join(keys, "other")))
	if repo.IndexDownloads.Load() != downloads+1 {
		t.Errorf("a cache written under another key: %d downloads, want 1", repo.IndexDownloads.Load()-downloads)
	}
	downloads = repo.IndexDownloads.Load()
	check(t, "same machine", repos(filepath.Join(keys, "other")))
	if repo.IndexDownloads.Load() != downloads {
		t.Error("a cache written under the same key was downloaded again, not revalidated")
	}
	// A key file inside the cache directory would travel with it: unused.
	inCache := repos(filepath.Join(cacheDir, "key"))
	inCache.integrityKey()
	if _, err := os.Stat(filepath.Join(cacheDir, "key")); err == nil {
		t.Error("the integrity key was written into the cache directory")
	}
}
