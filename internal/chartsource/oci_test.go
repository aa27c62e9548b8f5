package chartsource

import (
	"context"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	"github.com/sirupsen/logrus"
	"golang.org/x/crypto/bcrypt"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/registry"

	_ "github.com/distribution/distribution/v3/registry/auth/htpasswd"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory"
)

// ociRegistry is a real OCI registry (distribution) on loopback, with TLS
// and basic authentication.
type ociRegistry struct {
	url      string // oci://127.0.0.1:port/charts
	host     string
	auth     Auth
	agents   *userAgents
	htpasswd string
}

// rotate makes the registry accept password alone for its user: the
// registry reads its htpasswd file again when the file's time changes.
func (o *ociRegistry) rotate(t *testing.T, password string) {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(o.htpasswd, []byte(o.auth.Username+":"+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := os.Chtimes(o.htpasswd, now, now); err != nil {
		t.Fatal(err)
	}
}

func newOCIRegistry(t *testing.T) *ociRegistry {
	t.Helper()
	dir := t.TempDir()
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	htpasswd := filepath.Join(dir, "htpasswd")
	if err := os.WriteFile(htpasswd, []byte("bot:"+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := &configuration.Configuration{}
	cfg.Storage = configuration.Storage{"inmemory": configuration.Parameters{}}
	cfg.Auth = configuration.Auth{"htpasswd": configuration.Parameters{"realm": "test", "path": htpasswd}}
	cfg.Log.AccessLog.Disabled = true
	// The registry logs through logrus' standard logger.
	logrus.SetOutput(io.Discard)
	agents := &userAgents{}
	srv := httptest.NewUnstartedServer(agents.wrap(handlers.NewApp(context.Background(), cfg)))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // handshakes the tests make fail on purpose
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(srv.URL, "https://")
	return &ociRegistry{url: "oci://" + host + "/charts", host: host, auth: Auth{Username: "bot", Password: "s3cret", CAFile: ca}, agents: agents, htpasswd: htpasswd}
}

// push pushes chart web at version, with description as content.
func (o *ociRegistry) push(t *testing.T, version, description string) {
	const name = "web"
	t.Helper()
	c := &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: name, Version: version, Description: description}}
	tgz, err := chartutil.Save(c, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(tgz)
	if err != nil {
		t.Fatal(err)
	}
	repos := NewRepositories(t.TempDir(), 0)
	client, err := repos.registryClient(o.auth)
	if err != nil {
		t.Fatal(err)
	}
	ref := strings.TrimPrefix(o.url, "oci://") + "/" + name + ":" + strings.ReplaceAll(version, "+", "_")
	if _, err := client.Push(data, ref, registry.PushOptStrictMode(true)); err != nil {
		t.Fatal(err)
	}
}

func TestOCI(t *testing.T) {
	reg := newOCIRegistry(t)
	for _, v := range []string{"1.0.0", "1.1.0", "1.2.0-rc.1", "2.0.0"} {
		reg.push(t, v, "first push")
	}
	ctx := context.Background()
	repos := NewRepositories(t.TempDir(), 0)
	for _, tc := range []struct{ constraint, want string }{
		{"*", "2.0.0"},
		{"~1.0", "1.0.0"},
		{"1.x", "1.1.0"},
		{">=1.2.0-0 <2.0.0", "1.2.0-rc.1"},
	} {
		got, err := repos.OCI(ctx, Source{Repository: reg.url, Name: "web", Version: tc.constraint, Auth: reg.auth})
		if err != nil {
			t.Fatalf("%s: %v", tc.constraint, err)
		}
		version, digest, _ := strings.Cut(got.Version, "+")
		if version != tc.want || len(digest) != 12 || !strings.Contains(got.Digest, digest) || got.Chart.Metadata.Version != tc.want {
			t.Errorf("%s: version %s digest %s chart %s, want %s+<12 hex>", tc.constraint, got.Version, got.Digest, got.Chart.Metadata.Version, tc.want)
		}
	}
	first, err := repos.OCI(ctx, Source{Repository: reg.url, Name: "web", Version: "2.0.0", Auth: reg.auth})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(first.Versions, ",") != "2.0.0,1.2.0-rc.1,1.1.0,1.0.0" {
		t.Errorf("versions %v", first.Versions)
	}

	// The same tag pushed again with other content: a new digest, so a new
	// version string — which plans an upgrade.
	reg.push(t, "2.0.0", "second push")
	second, err := repos.OCI(ctx, Source{Repository: reg.url, Name: "web", Version: "2.0.0", Auth: reg.auth})
	if err != nil {
		t.Fatal(err)
	}
	if second.Version == first.Version || second.Chart.Metadata.Description != "second push" {
		t.Errorf("re-pushed tag: %s (%s) after %s", second.Version, second.Chart.Metadata.Description, first.Version)
	}
	// The first push named by its digest: the chart it was, with a cache
	// of its own (another machine), whatever the tag names now; a digest
	// given with another version than its chart's is refused.
	byDigest, err := NewRepositories(t.TempDir(), 0).OCI(ctx, Source{Repository: reg.url, Name: "web", Version: "2.0.0@" + first.Digest, Auth: reg.auth})
	if err != nil {
		t.Fatal(err)
	}
	if byDigest.Version != first.Version || byDigest.Digest != first.Digest || byDigest.Chart.Metadata.Description == "second push" {
		t.Errorf("by digest: %s (%s, %q), want the first push %s", byDigest.Version, byDigest.Digest, byDigest.Chart.Metadata.Description, first.Version)
	}
	if _, err := repos.OCI(ctx, Source{Repository: reg.url, Name: "web", Version: "1.1.0@" + first.Digest, Auth: reg.auth}); err == nil || !strings.Contains(err.Error(), "is version 2.0.0 of chart web, not 1.1.0") {
		t.Errorf("a digest with another version: %v", err)
	}

	if _, err := repos.OCI(ctx, Source{Repository: reg.url, Name: "web", Version: ">=3", Auth: reg.auth}); !errors.Is(err, ErrNoMatchingVersion) || !strings.Contains(err.Error(), "newest: 2.0.0") {
		t.Errorf("no match: %v", err)
	}
	wrong := reg.auth
	wrong.Password = "nope"
	if _, err := repos.OCI(ctx, Source{Repository: reg.url, Name: "web", Version: "*", Auth: wrong}); err == nil || !strings.Contains(err.Error(), "check the registry credentials") || strings.Contains(err.Error(), "nope") {
		t.Errorf("wrong credentials: %v", err)
	}
	untrusted := reg.auth
	untrusted.CAFile = ""
	if _, err := repos.OCI(ctx, Source{Repository: reg.url, Name: "web", Version: "*", Auth: untrusted}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("untrusted registry certificate: %v", err)
	}
	if _, err := repos.OCI(ctx, Source{Repository: reg.url, Name: "absent", Version: "*", Auth: reg.auth}); err == nil || !strings.Contains(err.Error(), "absent") {
		t.Errorf("unknown chart: %v", err)
	}
}

// TestOCIConcurrent: resolutions in parallel share one registry client
// (one login, one token cache) safely.
func TestOCIConcurrent(t *testing.T) {
	reg := newOCIRegistry(t)
	reg.push(t, "1.0.0", "only")
	repos := NewRepositories(t.TempDir(), 0)
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			got, err := repos.OCI(context.Background(), Source{Repository: reg.url, Name: "web", Auth: reg.auth})
			if err == nil && !strings.HasPrefix(got.Version, "1.0.0+") {
				err = errors.New("resolved " + got.Version)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := len(repos.registryClients); n != 1 {
		t.Errorf("%d registry clients for one set of credentials", n)
	}
}

// TestOCIRegistryThatNeverAnswers: a registry that accepts connections and
// never answers fails the resolution within the repositories' timeout,
// even for a caller whose context has no deadline: the registry client
// takes no context, its requests are bounded by its HTTP client.
func TestOCIRegistryThatNeverAnswers(t *testing.T) {
	release := make(chan struct{})
	// The handler waits for the test's end only: returning when the client
	// gives up would send an empty 200 that can reach the client between its
	// TLS close_notify and the socket's close, on loopback.
	hung := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
	}))
	t.Cleanup(func() { close(release); hung.Close() })
	repos := NewRepositories(t.TempDir(), time.Second)
	done := make(chan error, 1)
	go func() {
		_, err := repos.OCI(context.Background(), Source{Repository: "oci://" + strings.TrimPrefix(hung.URL, "https://") + "/charts", Name: "web",
			Auth: Auth{InsecureSkipTLSVerify: true}})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "registry oci://") || !strings.Contains(err.Error(), "no answer within the request timeout of 1s") {
			t.Errorf("resolution of a hung registry: %v, want an error naming it", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the resolution of a registry that never answers never ended")
	}
}
