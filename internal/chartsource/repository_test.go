package chartsource

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
)

// repoServer is a Helm repository on loopback serving one chart.
type repoServer struct {
	*httptest.Server
	index       atomic.Value // []byte
	archive     []byte
	fullIndexes atomic.Int64 // index bodies sent
	conditional atomic.Int64 // requests answered 304
	auth        atomic.Value // string "user:password" required when set
	sawAuth     atomic.Value // Authorization header of the last archive request
	prov        atomic.Value // []byte: provenance file served next to the archive
	failWith    atomic.Int32 // HTTP status every request answers when set
	agents      userAgents
}

func newRepoServer(t *testing.T, tlsServer bool, chartURL func(base string) string) *repoServer {
	t.Helper()
	c := &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "web", Version: "1.2.3", AppVersion: "4.5"}}
	tgz, err := chartutil.Save(c, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	archive, err := os.ReadFile(tgz)
	if err != nil {
		t.Fatal(err)
	}
	s := &repoServer{archive: archive}
	s.sawAuth.Store("")
	s.auth.Store("")
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if code := s.failWith.Load(); code != 0 {
			http.Error(w, "failing on purpose", int(code))
			return
		}
		if want := s.auth.Load().(string); want != "" {
			user, pass, ok := r.BasicAuth()
			if !ok || user+":"+pass != want {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		switch r.URL.Path {
		case "/index.yaml":
			body := s.index.Load().([]byte)
			etag := fmt.Sprintf(`"%s"`, digestOf(body)[:16])
			if r.Header.Get("If-None-Match") == etag {
				s.conditional.Add(1)
				w.WriteHeader(http.StatusNotModified)
				return
			}
			s.fullIndexes.Add(1)
			w.Header().Set("ETag", etag)
			_, _ = w.Write(body)
		case "/charts/web-1.2.3.tgz":
			s.sawAuth.Store(r.Header.Get("Authorization"))
			_, _ = w.Write(s.archive)
		case "/charts/web-1.2.3.tgz.prov":
			if prov, _ := s.prov.Load().([]byte); prov != nil {
				_, _ = w.Write(prov)
				return
			}
			http.NotFound(w, r)
		default:
			http.NotFound(w, r)
		}
	})
	if tlsServer {
		s.Server = httptest.NewUnstartedServer(s.agents.wrap(handler))
		s.Config.ErrorLog = log.New(io.Discard, "", 0) // handshakes the tests make fail on purpose
		s.StartTLS()
	} else {
		s.Server = httptest.NewServer(s.agents.wrap(handler))
	}
	t.Cleanup(s.Close)
	s.setIndex(chartURL(s.URL), digestOf(archive))
	return s
}

func (s *repoServer) setIndex(chartURL, digest string) {
	s.index.Store([]byte(fmt.Sprintf(`apiVersion: v1
entries:
  web:
  - apiVersion: v2
    name: web
    version: 1.2.3
    appVersion: "4.5"
    digest: %s
    urls:
    - %s
generated: "2026-11-01T00:00:00Z"
`, digest, chartURL)))
}

func relative(string) string { return "charts/web-1.2.3.tgz" }

func TestRepositoryResolveAndDownload(t *testing.T) {
	s := newRepoServer(t, false, relative)
	repos := NewRepositories(t.TempDir(), 0)
	ctx := context.Background()
	idx, err := repos.Index(ctx, s.URL, Auth{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := idx.Resolve("web", "~1.2")
	if err != nil {
		t.Fatal(err)
	}
	c, err := repos.Chart(ctx, s.URL, v, Auth{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Metadata.Version != "1.2.3" || c.Metadata.AppVersion != "4.5" {
		t.Errorf("chart %s %s", c.Metadata.Version, c.Metadata.AppVersion)
	}
}

// TestIndexDownloadedOnce: 50 concurrent resolutions cost one download; a
// second process (another Repositories on the same cache) revalidates and
// downloads nothing unchanged; a changed index is downloaded again.
func TestIndexDownloadedOnce(t *testing.T) {
	s := newRepoServer(t, false, relative)
	cache := t.TempDir()
	repos := NewRepositories(cache, 0)
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			idx, err := repos.Index(context.Background(), s.URL, Auth{})
			if err == nil {
				_, err = idx.Resolve("web", "*")
			}
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := s.fullIndexes.Load(); n != 1 || repos.IndexDownloads() != 1 {
		t.Fatalf("%d index downloads for 50 concurrent resolutions, want 1", n)
	}
	second := NewRepositories(cache, 0)
	if _, err := second.Index(context.Background(), s.URL, Auth{}); err != nil {
		t.Fatal(err)
	}
	if s.fullIndexes.Load() != 1 || s.conditional.Load() != 1 || second.IndexDownloads() != 0 {
		t.Errorf("second process: %d downloads, %d revalidations; want 1 and 1", s.fullIndexes.Load(), s.conditional.Load())
	}
	s.setIndex("charts/web-1.2.3.tgz", "0000")
	third := NewRepositories(cache, 0)
	if _, err := third.Index(context.Background(), s.URL, Auth{}); err != nil {
		t.Fatal(err)
	}
	if s.fullIndexes.Load() != 2 {
		t.Errorf("a changed index was not downloaded again")
	}
}

func TestRepositoryErrors(t *testing.T) {
	ctx := context.Background()
	s := newRepoServer(t, false, relative)
	s.auth.Store("bot:right")
	repos := NewRepositories(t.TempDir(), 0)
	_, err := repos.Index(ctx, s.URL, Auth{Username: "bot", Password: "wrong"})
	if err == nil || !strings.Contains(err.Error(), "401 Unauthorized: check the repository credentials") || strings.Contains(err.Error(), "wrong") {
		t.Errorf("wrong credentials: %v", err)
	}
	// Errors are not cached: right credentials work at once.
	if _, err := repos.Index(ctx, s.URL, Auth{Username: "bot", Password: "right"}); err != nil {
		t.Errorf("after a failure: %v", err)
	}
	if _, err := repos.Index(ctx, s.URL+"/missing", Auth{Username: "bot", Password: "right"}); err == nil || !strings.Contains(err.Error(), "check the repository URL") {
		t.Errorf("unknown repository path: %v", err)
	}
	if _, err := repos.Index(ctx, "http://127.0.0.1:1", Auth{}); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("unreachable: %v", err)
	}
	s.auth.Store("")
	s.index.Store([]byte("this is: [not an index"))
	fresh := NewRepositories(t.TempDir(), 0)
	if _, err := fresh.Index(ctx, s.URL, Auth{}); err == nil || !strings.Contains(err.Error(), "repository "+s.URL) {
		t.Errorf("corrupt index: %v", err)
	}
	// A wrong archive digest is refused.
	s.setIndex("charts/web-1.2.3.tgz", strings.Repeat("0", 64))
	idx, err := NewRepositories(t.TempDir(), 0).Index(ctx, s.URL, Auth{})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := idx.Resolve("web", "*")
	if _, err := fresh.Chart(ctx, s.URL, v, Auth{}); err == nil || !strings.Contains(err.Error(), "does not match the digest") {
		t.Errorf("digest mismatch: %v", err)
	}
	if _, err := idx.Resolve("web", ">=2"); !errors.Is(err, ErrNoMatchingVersion) {
		t.Errorf("no matching version: %v", err)
	}
}

// TestStaleIndexWhenRepositoryFails: a repository that is down, answers a
// server error or serves garbage resolves from the index cached on disk,
// marked stale; without a cache, or when the answer says the
// configuration is wrong, it is an error naming the repository.
func TestStaleIndexWhenRepositoryFails(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		fail  func(s *repoServer)
		stale bool
		want  string
	}{
		{"500", func(s *repoServer) { s.failWith.Store(http.StatusInternalServerError) }, true, "500 Internal Server Error"},
		{"429", func(s *repoServer) { s.failWith.Store(http.StatusTooManyRequests) }, true, "429 Too Many Requests"},
		{"garbage", func(s *repoServer) { s.index.Store([]byte("<html>maintenance</html>: [")) }, true, "repository"},
		{"down", func(s *repoServer) { s.Close() }, true, "unreachable"},
		{"401", func(s *repoServer) { s.failWith.Store(http.StatusUnauthorized) }, false, "check the repository credentials"},
		{"404", func(s *repoServer) { s.failWith.Store(http.StatusNotFound) }, false, "check the repository URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newRepoServer(t, false, relative)
			cache := t.TempDir()
			if _, err := NewRepositories(cache, 0).Index(ctx, s.URL, Auth{}); err != nil {
				t.Fatal(err)
			}
			tc.fail(s)
			if _, err := NewRepositories(t.TempDir(), 0).Index(ctx, s.URL, Auth{}); err == nil || !strings.Contains(err.Error(), s.URL) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("without a cache: %v, want an error naming %s and %q", err, s.URL, tc.want)
			}
			idx, err := NewRepositories(cache, 0).Index(ctx, s.URL, Auth{})
			if !tc.stale {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("with a cache: %v, want %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("with a cache: %v", err)
			}
			if idx.Stale == nil || !strings.Contains(idx.Stale.Err.Error(), tc.want) || time.Since(idx.Stale.CachedAt) > time.Minute {
				t.Errorf("stale %+v, want the failure %q and when the copy was cached", idx.Stale, tc.want)
			}
			if v, err := idx.Resolve("web", "~1.2"); err != nil || v.Version != "1.2.3" {
				t.Errorf("resolved from the cached index: %v %v", v, err)
			}
		})
	}
}

// TestCredentialsStayWithTheRepository: a chart hosted elsewhere gets the
// repository's credentials only with pass_credentials.
func TestCredentialsStayWithTheRepository(t *testing.T) {
	ctx := context.Background()
	archiveHost := newRepoServer(t, false, relative)
	// Same port, other host name: 127.0.0.1 vs localhost.
	elsewhere := strings.Replace(archiveHost.URL, "127.0.0.1", "localhost", 1) + "/charts/web-1.2.3.tgz"
	repo := newRepoServer(t, false, func(string) string { return elsewhere })
	repo.setIndex(elsewhere, digestOf(archiveHost.archive))
	for _, pass := range []bool{false, true} {
		auth := Auth{Username: "bot", Password: "secret", PassCredentials: pass}
		idx, err := NewRepositories(t.TempDir(), 0).Index(ctx, repo.URL, auth)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := idx.Resolve("web", "*")
		if _, err := NewRepositories(t.TempDir(), 0).Chart(ctx, repo.URL, v, auth); err != nil {
			t.Fatal(err)
		}
		if sent := archiveHost.sawAuth.Load().(string) != ""; sent != pass {
			t.Errorf("pass_credentials=%v: credentials sent to the other host: %v", pass, sent)
		}
	}
}

func TestRepositoryTLS(t *testing.T) {
	ctx := context.Background()
	s := newRepoServer(t, true, relative)
	if _, err := NewRepositories(t.TempDir(), 0).Index(ctx, s.URL, Auth{}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("untrusted certificate accepted: %v", err)
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := NewRepositories(t.TempDir(), 0).Index(ctx, s.URL, Auth{CAFile: ca}); err != nil {
		t.Errorf("with the CA: %v", err)
	}
	if _, err := NewRepositories(t.TempDir(), 0).Index(ctx, s.URL, Auth{InsecureSkipTLSVerify: true}); err != nil {
		t.Errorf("insecure: %v", err)
	}
}

// TestIndexCachedPerCredentials: what one set of credentials downloaded
// never serves a caller with other or no credentials: in the process, or
// on disk when the repository is down (the stale copy), while the right
// credentials still get both.
func TestIndexCachedPerCredentials(t *testing.T) {
	ctx := context.Background()
	s := newRepoServer(t, false, relative)
	s.auth.Store("bot:right")
	right := Auth{Username: "bot", Password: "right"}
	cache := t.TempDir()
	repos := NewRepositories(cache, 0)
	if _, err := repos.Index(ctx, s.URL, right); err != nil {
		t.Fatal(err)
	}
	for name, auth := range map[string]Auth{"wrong password": {Username: "bot", Password: "wrong"}, "no credentials": {}} {
		if _, err := repos.Index(ctx, s.URL, auth); err == nil || !strings.Contains(err.Error(), "401") {
			t.Errorf("%s, same process: %v, want the repository's 401", name, err)
		}
	}
	s.Close()
	for name, auth := range map[string]Auth{"wrong password": {Username: "bot", Password: "wrong"}, "no credentials": {}} {
		if idx, err := NewRepositories(cache, 0).Index(ctx, s.URL, auth); err == nil {
			t.Errorf("%s, repository down: the index cached for other credentials was used (stale: %+v)", name, idx.Stale)
		}
	}
	idx, err := NewRepositories(cache, 0).Index(ctx, s.URL, right)
	if err != nil || idx.Stale == nil {
		t.Errorf("right credentials, repository down: %v, want the stale copy", err)
	}
}
