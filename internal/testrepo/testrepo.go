// Package testrepo serves charts for tests: a Helm repository over HTTP (or
// HTTPS) and a real OCI registry (distribution), both on loopback, with basic
// authentication. Only tests and planbench import it. It writes charts,
// indexes and registry artifacts with Helm's own packages, one of the three
// that may (see internal/helm).
package testrepo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	"github.com/sirupsen/logrus"
	"golang.org/x/crypto/bcrypt"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/provenance"
	"helm.sh/helm/v4/pkg/registry"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	"sigs.k8s.io/yaml"

	_ "github.com/distribution/distribution/v3/registry/auth/htpasswd"           // htpasswd authentication
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory" // in-memory storage
)

// Credentials both servers require.
const (
	Username = "bot"
	Password = "s3cret"
)

// LoadChart loads the chart directory dir with its version set to version.
func LoadChart(t testing.TB, dir, version string) *chart.Chart {
	t.Helper()
	c, err := loader.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	c.Metadata.Version = version
	return c
}

// Package returns the .tgz of c and its file name (<name>-<version>.tgz).
func Package(t testing.TB, c *chart.Chart) ([]byte, string) {
	t.Helper()
	path, err := chartutil.Save(c, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b, filepath.Base(path)
}

// HTTP is a Helm repository: index.yaml and archives under charts/.
type HTTP struct {
	*httptest.Server
	// Password is the password it requires of Username (Password at
	// first); empty serves anyone.
	Password string
	// IndexDownloads counts index bodies sent (conditional requests
	// answered 304 excluded).
	IndexDownloads atomic.Int64

	mu      sync.Mutex
	index   *repo.IndexFile
	files   map[string][]byte // path → content
	failing int               // status every request answers when not 0
	garbage bool              // index.yaml answers something that is no index
	agents  map[string]bool   // User-Agents of the requests answered
}

// File is the content the repository serves at path (e.g.
// "charts/web-1.0.0.tgz").
func (h *HTTP) File(t testing.TB, path string) []byte {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	b, ok := h.files[path]
	if !ok {
		t.Fatalf("the repository serves nothing at %s", path)
	}
	return b
}

// UserAgents returns the User-Agents of the requests answered so far,
// each once, sorted.
func (h *HTTP) UserAgents() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	agents := make([]string, 0, len(h.agents))
	for a := range h.agents {
		agents = append(agents, a)
	}
	slices.Sort(agents)
	return agents
}

// FailWith makes every request answer the HTTP status code, as a
// repository in trouble does; 0 serves normally again.
func (h *HTTP) FailWith(code int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failing = code
}

// ServeGarbage makes index.yaml answer 200 with a page that is no index
// (a proxy's maintenance page); false serves the index again.
func (h *HTTP) ServeGarbage(on bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.garbage = on
}

// NewHTTP starts an empty repository requiring Username and Password.
func NewHTTP(t testing.TB) *HTTP {
	t.Helper()
	h := &HTTP{Password: Password, index: repo.NewIndexFile(), files: map[string][]byte{}, agents: map[string]bool{}}
	h.Server = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.Close)
	return h
}

func (h *HTTP) serve(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.agents[r.UserAgent()] = true
	h.mu.Unlock()
	if user, pass, ok := r.BasicAuth(); h.Password != "" && (!ok || user != Username || pass != h.Password) {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	h.mu.Lock()
	body, ok := h.files[strings.TrimPrefix(r.URL.Path, "/")]
	failing, garbage := h.failing, h.garbage
	h.mu.Unlock()
	if failing != 0 {
		http.Error(w, "failing on purpose", failing)
		return
	}
	if garbage && r.URL.Path == "/index.yaml" {
		body = []byte("<html><body>Down for maintenance: [</body></html>\n")
	}
	if !ok {
		http.NotFound(w, r)
		return
	}
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	if r.URL.Path == "/index.yaml" && r.Header.Get("If-None-Match") != etag {
		h.IndexDownloads.Add(1)
	}
	w.Header().Set("ETag", etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

// Add publishes c, with a provenance file when signer is not nil, and
// regenerates the index. A version published already is published again:
// its archive and index entry are replaced.
func (h *HTTP) Add(t testing.TB, c *chart.Chart, signer *Signer) {
	t.Helper()
	archive, name := Package(t, c)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.files["charts/"+name] = archive
	if signer != nil {
		h.files["charts/"+name+".prov"] = signer.Sign(t, archive, name)
	}
	digest, err := provenance.Digest(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	h.index.Entries[c.Name()] = slices.DeleteFunc(h.index.Entries[c.Name()], func(v *repo.ChartVersion) bool { return v.Version == c.Metadata.Version })
	if err := h.index.MustAdd(c.Metadata, "charts/"+name, "", digest); err != nil {
		t.Fatal(err)
	}
	h.index.SortEntries()
	index, err := yaml.Marshal(h.index)
	if err != nil {
		t.Fatal(err)
	}
	h.files["index.yaml"] = index
}

// OCI is a real OCI registry on loopback with TLS and basic authentication,
// or over plain HTTP for anyone (NewOCIPlainHTTP).
type OCI struct {
	// URL is the repository to name in configurations: oci://<host>/charts.
	URL string
	// CAFile is the PEM file of the registry's certificate; empty over
	// plain HTTP.
	CAFile   string
	client   *registry.Client
	htpasswd string
	// transport trusts the registry's certificate; password is the one
	// the registry was started with.
	transport http.RoundTripper
	password  string
	plainHTTP bool
}

// Rotate makes the registry accept password alone for Username, as a
// cloud registry does once a token expires. The registry reads its
// htpasswd file again when the file's time changes.
func (o *OCI) Rotate(t testing.TB, password string) {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(o.htpasswd, []byte(Username+":"+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := os.Chtimes(o.htpasswd, now, now); err != nil {
		t.Fatal(err)
	}
}

// NewOCI starts an empty registry requiring Username and Password.
func NewOCI(t testing.TB) *OCI { return NewOCIWithPassword(t, Password) }

// NewOCIWithPassword starts an empty registry requiring Username and
// password; an empty password serves anyone.
func NewOCIWithPassword(t testing.TB, password string) *OCI {
	return newOCI(t, password, false)
}

// NewOCIPlainHTTP starts an empty registry serving anyone over plain HTTP,
// as kind's local registry does.
func NewOCIPlainHTTP(t testing.TB) *OCI { return newOCI(t, "", true) }

func newOCI(t testing.TB, password string, plainHTTP bool) *OCI {
	t.Helper()
	dir := t.TempDir()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	htpasswd := filepath.Join(dir, "htpasswd")
	if err := os.WriteFile(htpasswd, []byte(Username+":"+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := &configuration.Configuration{}
	cfg.Storage = configuration.Storage{"inmemory": configuration.Parameters{}}
	if password != "" {
		cfg.Auth = configuration.Auth{"htpasswd": configuration.Parameters{"realm": "test", "path": htpasswd}}
	}
	cfg.Log.AccessLog.Disabled = true
	logrus.SetOutput(io.Discard) // the registry logs through logrus' standard logger
	srv := httptest.NewUnstartedServer(handlers.NewApp(context.Background(), cfg))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	opts := []registry.ClientOption{
		registry.ClientOptBasicAuth(Username, password),
		registry.ClientOptCredentialsFile(filepath.Join(dir, "credentials.json")),
	}
	ca := ""
	if plainHTTP {
		srv.Start()
		opts = append(opts, registry.ClientOptPlainHTTP())
	} else {
		srv.StartTLS()
		ca = filepath.Join(dir, "ca.pem")
		if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(srv.Close)
	client, err := registry.NewClient(append(opts, registry.ClientOptHTTPClient(srv.Client()))...)
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(strings.TrimPrefix(srv.URL, "https://"), "http://")
	return &OCI{URL: "oci://" + host + "/charts", CAFile: ca, client: client, htpasswd: htpasswd,
		transport: srv.Client().Transport, password: password, plainHTTP: plainHTTP}
}

// Push pushes c under the tag of its version (+ written _, as Helm does),
// with a provenance file when signer is not nil.
func (o *OCI) Push(t testing.TB, c *chart.Chart, signer *Signer) {
	t.Helper()
	archive, name := Package(t, c)
	ref := strings.TrimPrefix(o.URL, "oci://") + "/" + c.Name() + ":" + strings.ReplaceAll(c.Metadata.Version, "+", "_")
	var opts []registry.PushOption
	if signer != nil {
		opts = append(opts, registry.PushOptProvData(signer.Sign(t, archive, name)))
	}
	if _, err := o.client.Push(archive, ref, opts...); err != nil {
		t.Fatal(err)
	}
}

// Signer signs charts as `helm package --sign` does.
type Signer struct {
	// Keyring is the file of the signer's public key, for chart.verify.
	Keyring   string
	signatory *provenance.Signatory
}

// NewSigner makes a signing key.
func NewSigner(t testing.TB, name string) *Signer {
	t.Helper()
	entity, err := openpgp.NewEntity(name, "", name+"@example.com", nil)
	if err != nil {
		t.Fatal(err)
	}
	var keyring bytes.Buffer
	if err := entity.Serialize(&keyring); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name+".gpg")
	if err := os.WriteFile(path, keyring.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return &Signer{Keyring: path, signatory: &provenance.Signatory{Entity: entity, KeyRing: openpgp.EntityList{entity}}}
}

// Sign returns the provenance file of archive, named name, as `helm
// package --sign` writes it: the chart's metadata, then the archive's
// digest, signed.
func (s *Signer) Sign(t testing.TB, archive []byte, name string) []byte {
	t.Helper()
	c, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	metadata, err := yaml.Marshal(c.Metadata)
	if err != nil {
		t.Fatal(err)
	}
	prov, err := s.signatory.ClearSign(archive, name, metadata)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(prov)
}
