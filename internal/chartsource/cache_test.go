package chartsource

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	chart "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// replaceCached replaces every file of the cache directory matching
// pattern (a glob under cacheDir) by with, and reports how many it
// replaced.
func replaceCached(t *testing.T, cacheDir, pattern string, with []byte) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(cacheDir, pattern))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := os.WriteFile(f, with, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return len(files)
}

// TestCacheTampered: a chart archive replaced in the cache directory by
// another valid chart of the same name and version is never loaded, in a
// later process (a new Repositories on the same directory) as in the
// same: each archive is checked against the digest naming it, pulled
// again, the cache repaired, and the repair reported. Signed charts
// (cosign, pgp provenance) stay the charts that were verified.
func TestCacheTampered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reg := testrepo.NewOCI(t)
	auth := Auth{Username: testrepo.Username, Password: testrepo.Password, CAFile: reg.CAFile}
	signer := testrepo.NewSigner(t, "trusted")
	key := testrepo.NewCosignKey(t)
	chartOf := func(name, description string) *chart.Chart {
		return &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: name, Version: "1.0.0", Description: description}}
	}
	reg.Push(t, chartOf("plain", "published"), nil)
	reg.Push(t, chartOf("cosigned", "published"), nil)
	reg.CosignSign(t, "cosigned", "1.0.0", key)
	reg.Push(t, chartOf("provenance", "published"), signer)
	http := newRepoServer(t, false, relative)

	for _, tc := range []struct {
		name    string
		src     Source
		pattern string
		replace *chart.Chart
	}{
		{"oci", Source{Repository: reg.URL, Name: "plain", Version: "1.0.0", Auth: auth}, "oci/*.tgz", chartOf("plain", "replaced")},
		{"oci, cosign", Source{Repository: reg.URL, Name: "cosigned", Version: "1.0.0", Auth: auth,
			Verify: &Verification{Provider: ProviderCosign, PublicKeys: [][]byte{key.PublicPEM}}}, "oci/*.tgz", chartOf("cosigned", "replaced")},
		{"oci, pgp provenance", Source{Repository: reg.URL, Name: "provenance", Version: "1.0.0", Auth: auth, Keyring: signer.Keyring}, "oci/*.tgz", chartOf("provenance", "replaced")},
		{"oci artifact (chart_ref)", Source{Repository: reg.URL, Name: "plain", Auth: auth,
			Artifact: &Artifact{Revision: "1.0.0@" + reg.Digest(t, "plain", "1.0.0")}}, "oci/*.tgz", chartOf("plain", "replaced")},
		{"repository", Source{Repository: http.URL, Name: "web", Version: "1.2.3"}, "charts/*.tgz",
			&chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "web", Version: "1.2.3", AppVersion: "4.5", Description: "replaced"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cacheDir := t.TempDir()
			first, err := NewRepositories(cacheDir, 0).Resolve(ctx, tc.src)
			if err != nil {
				t.Fatal(err)
			}
			if len(first.CacheRepaired) > 0 {
				t.Errorf("first resolve repaired %v", first.CacheRepaired)
			}
			replacement, _ := testrepo.Package(t, tc.replace)
			if n := replaceCached(t, cacheDir, tc.pattern, replacement); n != 1 {
				t.Fatalf("%d cached archives match %s, want 1", n, tc.pattern)
			}
			for _, repos := range []*Repositories{NewRepositories(cacheDir, 0), NewRepositories(cacheDir, 0)} {
				got, err := repos.Resolve(ctx, tc.src)
				if err != nil {
					t.Fatal(err)
				}
				if got.Chart.Metadata.Description == "replaced" {
					t.Fatal("the chart replaced in the cache was loaded")
				}
				if got.Chart.Metadata.Version != first.Chart.Metadata.Version || got.Digest != first.Digest {
					t.Errorf("resolved %s (%s), first %s (%s)", got.Chart.Metadata.Version, got.Digest, first.Chart.Metadata.Version, first.Digest)
				}
				if tc.src.Verify != nil && (got.Verified == nil || got.Verified.Digest != got.Digest) {
					t.Errorf("verified %+v for digest %s", got.Verified, got.Digest)
				}
				// Repaired by the first resolve after the replacement; the
				// second finds the cache whole.
				if len(replacement) > 0 && len(got.CacheRepaired) == 1 {
					r := got.CacheRepaired[0]
					if !strings.HasPrefix(r.Path, cacheDir) || !strings.Contains(r.Why, "digest") {
						t.Errorf("repair %+v names no cached file or digest", r)
					}
					replacement = nil
					continue
				}
				if len(got.CacheRepaired) != 0 || replacement != nil {
					t.Errorf("repairs %v (first resolve after the replacement: %t)", got.CacheRepaired, replacement != nil)
				}
			}
		})
	}
}

// TestCheckoutsNotTrustedAcrossRuns: a Git checkout changed in the cache
// directory is not read by a later process, which checks out anew.
func TestCheckoutsNotTrustedAcrossRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := testrepo.NewGit(t)
	srv.Commit(t, "charts", "main", map[string]string{
		"app/Chart.yaml":        "apiVersion: v2\nname: app\nversion: 0.1.0\n",
		"app/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  value: committed\n",
	})
	cacheDir := t.TempDir()
	src := Source{Name: "app", Git: &Git{URL: srv.HTTPURL("charts"), Ref: GitRef{Branch: "main"}}, Auth: Auth{Username: testrepo.Username, Password: testrepo.Password}}
	if _, err := NewRepositories(cacheDir, 0).Resolve(ctx, src); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(cacheDir, "git", "*", "*", "app", "templates", "cm.yaml"))
	if err != nil || len(files) != 1 {
		t.Fatalf("checkouts %v (%v), want 1", files, err)
	}
	if err := os.WriteFile(files[0], []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  value: replaced\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := NewRepositories(cacheDir, 0).Resolve(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range got.Chart.Templates {
		if strings.Contains(string(f.Data), "replaced") {
			t.Fatalf("the checkout changed in the cache was loaded: %s", f.Data)
		}
	}
}

// TestCacheProvenanceLater: a chart cached without its provenance layer
// (pulled before verification was asked) is pulled again for it, silently:
// nothing in the cache was wrong.
func TestCacheProvenanceLater(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reg := testrepo.NewOCI(t)
	signer := testrepo.NewSigner(t, "trusted")
	reg.Push(t, &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "signed", Version: "1.0.0"}}, signer)
	src := Source{Repository: reg.URL, Name: "signed", Version: "1.0.0", Auth: Auth{Username: testrepo.Username, Password: testrepo.Password, CAFile: reg.CAFile}}
	cacheDir := t.TempDir()
	if _, err := NewRepositories(cacheDir, 0).Resolve(ctx, src); err != nil {
		t.Fatal(err)
	}
	src.Keyring = signer.Keyring
	got, err := NewRepositories(cacheDir, 0).Resolve(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.CacheRepaired) > 0 {
		t.Errorf("repairs %v of a cache that only lacked the provenance", got.CacheRepaired)
	}
}
