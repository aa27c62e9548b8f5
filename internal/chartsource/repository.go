package chartsource

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/registry"
)

// Auth is how to reach a repository: credentials and TLS.
type Auth struct {
	Username, Password string
	// PassCredentials sends the credentials to chart URLs on other hosts
	// than the repository's too; by default they go to its host only.
	PassCredentials bool
	// CAFile, CertFile and KeyFile are PEM files: a CA to trust and a
	// client certificate.
	CAFile, CertFile, KeyFile string
	// CAPEM, CertPEM and KeyPEM are the same as PEM text, read from a
	// Secret of the cluster (a Flux source's certSecretRef); each is used
	// instead of its file when set.
	CAPEM, CertPEM, KeyPEM string
	// InsecureSkipTLSVerify turns TLS verification off.
	InsecureSkipTLSVerify bool
	// PlainHTTP reaches an OCI registry over plain HTTP instead of HTTPS
	// (helm --plain-http; a Flux OCI source's spec.insecure).
	PlainHTTP bool
	// Login gives Password when it is first needed and a new one when the
	// repository refuses it (a command's token); Username goes with it.
	// Caches are keyed by the login, not its passwords.
	Login Login
	// DockerConfig takes an OCI registry's credentials from Docker's
	// configuration (DOCKER_CONFIG, else ~/.docker/config.json: auths,
	// credsStore, credHelpers) when Username and Password are empty.
	// Without it no credential file of the machine is read.
	DockerConfig bool
}

// Repositories fetches repository indexes and chart archives. Within a
// process each index is downloaded at most once (concurrent callers share
// one download); on disk, indexes are kept with their validators (ETag,
// Last-Modified) and revalidated, so that another process downloads nothing
// unchanged; archives are kept by digest. Failures are never cached. Safe
// for concurrent use.
type Repositories struct {
	cacheDir  string
	timeout   time.Duration
	userAgent string

	group singleflight.Group
	mu    sync.Mutex
	// indexes are keyed by URL and credentials (indexCacheKey).
	indexes map[string]*Index
	keyOnce sync.Once
	key     []byte // credentialKey
	// One HTTP client (connection pool) and one registry client (token
	// cache) per set of credentials, for the process's life.
	httpClients     map[Auth]*http.Client
	registryClients map[Auth]*registry.Client
	// verified are the signature verifications passed, by
	// Verification.cacheKey.
	verified map[string]*Verified
	// run names this process's checkouts in the cache (runDir).
	run string
	// integrityFile keeps the key that proves what r wrote to the cache
	// (integrityKey).
	integrityFile string
	integrityOnce sync.Once
	integrity     []byte

	downloads atomic.Int64
}

// NewRepositories caches in cacheDir (created when missing); timeout bounds
// each HTTP request (0: one minute).
func NewRepositories(cacheDir string, timeout time.Duration) *Repositories {
	if timeout <= 0 {
		timeout = time.Minute
	}
	return &Repositories{
		cacheDir: cacheDir, timeout: timeout, indexes: map[string]*Index{},
		httpClients: map[Auth]*http.Client{}, registryClients: map[Auth]*registry.Client{}, verified: map[string]*Verified{},
		run: rand.Text()[:16], integrityFile: DefaultIntegrityKeyFile(),
	}
}

// DefaultUserAgent names the provider in requests when WithUserAgent was
// not called.
const DefaultUserAgent = "terraform-provider-helmrelease"

// WithUserAgent makes every request of r, to repositories and registries,
// send agent as its User-Agent (followed by the agent of the library that
// makes it, if any). Call it before r's first request.
func (r *Repositories) WithUserAgent(agent string) *Repositories {
	r.userAgent = agent
	return r
}

// IndexDownloads is how many index bodies were downloaded (not revalidated).
func (r *Repositories) IndexDownloads() int64 { return r.downloads.Load() }

// indexURL is the index of repoURL.
func indexURL(repoURL string) string {
	return strings.TrimSuffix(repoURL, "/") + "/index.yaml"
}

// Index returns the index of the repository at repoURL. A login of auth
// gives its password first, and a new one when the repository refuses it.
func (r *Repositories) Index(ctx context.Context, repoURL string, auth Auth) (*Index, error) {
	return withLogin(ctx, auth, func(auth Auth) (*Index, error) { return r.index(ctx, repoURL, auth) })
}

func (r *Repositories) index(ctx context.Context, repoURL string, auth Auth) (*Index, error) {
	key := r.indexCacheKey(repoURL, auth)
	r.mu.Lock()
	idx, ok := r.indexes[key]
	r.mu.Unlock()
	if ok {
		return idx, nil
	}
	v, err, _ := r.group.Do("index\x00"+key, func() (any, error) {
		r.mu.Lock()
		idx, ok := r.indexes[key]
		r.mu.Unlock()
		if ok {
			return idx, nil
		}
		idx, err := r.fetchIndex(ctx, repoURL, auth)
		if err != nil {
			return nil, err
		}
		r.mu.Lock()
		r.indexes[key] = idx
		r.mu.Unlock()
		return idx, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*Index), nil
}

// validators are what revalidates a cached index, the digest of its
// content, and their proof (indexProof).
type validators struct {
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"lastModified,omitempty"`
	Digest       string `json:"digest,omitempty"`
	Proof        string `json:"proof,omitempty"`
}

func (r *Repositories) cachePath(kind, key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(r.cacheDir, kind, hex.EncodeToString(sum[:16]))
}

// StaleIndex says that a repository failed to serve its index and the copy
// cached on disk was used instead.
type StaleIndex struct {
	// CachedAt is when the cached copy was downloaded or last revalidated.
	CachedAt time.Time
	// Err is why the repository's index was not used.
	Err error
}

// fetchIndex downloads or revalidates the index of repoURL. When the
// repository is unreachable, answers a server error (5xx, 429) or serves
// something that is not an index, the copy cached on disk, if any, is used
// whatever its age (Index.Stale says so): a plan keeps working from what
// the last successful download saw, as Flux keeps serving a repository's
// last artifact while fetching fails. Answers that mean the configuration
// is wrong (401, 403, 404) are errors.
func (r *Repositories) fetchIndex(ctx context.Context, repoURL string, auth Auth) (*Index, error) {
	idx, err := r.fetchIndexOnce(ctx, repoURL, auth)
	var status *StatusError
	if err == nil || (errors.As(err, &status) && status.Code < 500 && status.Code != http.StatusTooManyRequests) {
		return idx, err
	}
	key := r.indexCacheKey(repoURL, auth)
	path := r.cachePath("indexes", key)
	v, ok := r.cachedValidators(key, path)
	fi, statErr := os.Stat(path + ".yaml")
	if !ok || statErr != nil {
		return nil, err
	}
	cached, cacheErr := openIndex(path+".yaml", v.Digest)
	if cacheErr != nil {
		return nil, err
	}
	cached.Stale = &StaleIndex{CachedAt: fi.ModTime(), Err: err}
	return cached, nil
}

// cachedValidators are the validators of the index cached at path (the
// index of key) when they carry their proof.
func (r *Repositories) cachedValidators(key, path string) (validators, bool) {
	var v validators
	b, err := os.ReadFile(path + ".json")
	if err != nil || json.Unmarshal(b, &v) != nil || !r.proven(key, v) {
		return validators{}, false
	}
	return v, true
}

func (r *Repositories) fetchIndexOnce(ctx context.Context, repoURL string, auth Auth) (*Index, error) {
	key := r.indexCacheKey(repoURL, auth)
	path := r.cachePath("indexes", key)
	cached, ok := r.cachedValidators(key, path)
	idx, err := r.requestIndex(ctx, repoURL, auth, key, path, cached, ok)
	if errors.Is(err, errCachedIndexChanged) {
		// Revalidated, but the index on disk is not the one proven:
		// downloaded whole.
		return r.requestIndex(ctx, repoURL, auth, key, path, validators{}, false)
	}
	return idx, err
}

// errCachedIndexChanged: the cached index's content is not the digest its
// proven validators name.
var errCachedIndexChanged = errors.New("the cached index is not the one its validators were proven for")

// requestIndex asks the repository for its index, conditionally on the
// cached validators when proven.
func (r *Repositories) requestIndex(ctx context.Context, repoURL string, auth Auth, key, path string, cached validators, proven bool) (*Index, error) {
	u := indexURL(repoURL)
	client, err := r.httpClient(auth)
	if err != nil {
		return nil, fmt.Errorf("repository %s: %w", repoURL, err)
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("repository %s: %w", repoURL, err)
	}
	if auth.Username != "" || auth.Password != "" {
		req.SetBasicAuth(auth.Username, auth.Password)
	}
	if _, err := os.Stat(path + ".yaml"); err == nil && proven {
		if cached.ETag != "" {
			req.Header.Set("If-None-Match", cached.ETag)
		}
		if cached.LastModified != "" {
			req.Header.Set("If-Modified-Since", cached.LastModified)
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("repository %s is unreachable: %w", repoURL, err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusNotModified:
		if !proven {
			return nil, fmt.Errorf("repository %s: the index answered %s to a request with no validators", repoURL, resp.Status)
		}
		idx, err := openIndex(path+".yaml", cached.Digest)
		if errors.Is(err, errCachedIndexChanged) {
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("repository %s: %w", repoURL, err)
		}
		// Revalidated: the cached copy is as fresh as a download.
		now := time.Now()
		_ = os.Chtimes(path+".yaml", now, now)
		return idx, nil
	case http.StatusOK:
	default:
		return nil, httpError(repoURL, "index", resp)
	}
	v := validators{ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified")}
	if idx, ok, err := r.downloadIndex(key, path, resp, v); ok {
		if err != nil {
			return nil, fmt.Errorf("repository %s: %w", repoURL, err)
		}
		r.downloads.Add(1)
		return idx, nil
	}
	// No cache to write to: the index is read into memory.
	raw, err := readBody(resp)
	if err != nil {
		return nil, fmt.Errorf("repository %s: reading index: %w", repoURL, err)
	}
	r.downloads.Add(1)
	idx, err := ParseIndex(raw)
	if err != nil {
		return nil, fmt.Errorf("repository %s: %w", repoURL, err)
	}
	return idx, nil
}

// maxIndexSize bounds a downloaded index.
const maxIndexSize = 1 << 30

// downloadIndex streams the index in resp into the cache at path, checks
// it is an index and keeps it with its validators; the index is never in
// memory whole, so that many repositories fetched at once cost little more
// than their buffers. ok is false when the cache directory cannot be
// written to (nothing was read from resp then).
func (r *Repositories) downloadIndex(key, path string, resp *http.Response, v validators) (idx *Index, ok bool, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, false, nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-")
	if err != nil {
		return nil, false, nil
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	n, err := io.Copy(tmp, io.LimitReader(resp.Body, maxIndexSize+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		return nil, true, fmt.Errorf("reading index: %w", err)
	case n > maxIndexSize:
		return nil, true, fmt.Errorf("index larger than %d MiB", maxIndexSize>>20)
	}
	// Only a valid index replaces the cached one. Closed before it is
	// renamed (which an open file cannot be on every system) and opened
	// again: one more scan, from the page cache.
	check, digest, err := scanIndex(tmp.Name())
	if err != nil {
		return nil, true, err
	}
	check.close()
	v.Digest = digest
	if err := os.Rename(tmp.Name(), path+".yaml"); err != nil {
		// Not cached (e.g. the cached copy is held open elsewhere): read
		// into memory, as without a cache.
		raw, err := os.ReadFile(tmp.Name())
		if err != nil {
			return nil, true, fmt.Errorf("reading index: %w", err)
		}
		idx, err := ParseIndex(raw)
		return idx, true, err
	}
	v.Proof = r.indexProof(key, v)
	meta, _ := json.Marshal(v)
	r.store(path+".json", meta)
	idx, err = openIndex(path+".yaml", v.Digest)
	return idx, true, err
}

// openIndex opens a cached index whose content must have the SHA-256
// digest (hex); errCachedIndexChanged when it has not. The file stays
// open for the process's life: a later write of the cache replaces the
// file by renaming, which leaves what this one reads unchanged, and the
// chart entries read from it later are checked against the digests of
// the scan (Index.Versions), should it be written in place.
func openIndex(path, digest string) (*Index, error) {
	idx, got, err := scanIndex(path)
	if err == nil && got != digest {
		idx.close()
		err = errCachedIndexChanged
	}
	return idx, err
}

// scanIndex opens the index at path, and returns its digest
// (parseIndexFile).
func scanIndex(path string) (*Index, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", fmt.Errorf("opening the cached index: %w", err)
	}
	idx, digest, err := parseIndexFile(f)
	if err != nil || idx.src == nil {
		// Decoded whole, or not an index: the file is no longer needed.
		_ = f.Close()
	}
	return idx, digest, err
}

// readBody reads a response body into a buffer of its announced size, or
// with io.ReadAll (which keeps little more than the body) when unannounced.
func readBody(resp *http.Response) ([]byte, error) {
	if resp.ContentLength <= 0 || resp.ContentLength > 1<<30 {
		return io.ReadAll(resp.Body)
	}
	buf := make([]byte, resp.ContentLength)
	_, err := io.ReadFull(resp.Body, buf)
	return buf, err
}

// store writes a file of the cache atomically; a cache that cannot be
// written only costs a download next time.
func (r *Repositories) store(path string, data []byte) {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-")
	if err != nil {
		return
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		_ = os.Remove(tmp.Name())
	}
}

// StatusError is a repository request answered with an HTTP error status.
type StatusError struct {
	Code int
	msg  string
}

func (e *StatusError) Error() string { return e.msg }

func httpError(repoURL, what string, resp *http.Response) error {
	remedy := ""
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		remedy = ": check the repository credentials (chart.username, chart.password)"
	case http.StatusNotFound:
		remedy = ": check the repository URL (chart.repository)"
	}
	return &StatusError{Code: resp.StatusCode, msg: fmt.Sprintf("repository %s: fetching the %s answered %s%s", repoURL, what, resp.Status, remedy)}
}

func (r *Repositories) httpClient(auth Auth) (*http.Client, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.httpClients[auth]; ok {
		return c, nil
	}
	agent := r.userAgent
	if agent == "" {
		agent = DefaultUserAgent
	}
	c, err := newHTTPClient(auth, r.timeout, agent)
	if err == nil {
		r.httpClients[auth] = c
	}
	return c, err
}

// tlsConfig is the TLS configuration of auth: its CA over the system's
// roots, its client certificate, verification off if asked.
func tlsConfig(auth Auth) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: auth.InsecureSkipTLSVerify} //nolint:gosec // only when the user turns verification off
	ca, cert, key, err := auth.tlsPEM()
	if err != nil {
		return nil, err
	}
	if ca != nil {
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(ca) {
			return nil, errors.New("the CA holds no PEM certificate")
		}
		cfg.RootCAs = pool
	}
	if cert != nil || key != nil {
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("loading client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// tlsPEM is auth's CA, client certificate and key as PEM, each nil when
// not set: the text given, else the file's content.
func (a Auth) tlsPEM() (ca, cert, key []byte, err error) {
	read := func(text, file, what string) []byte {
		switch {
		case err != nil:
			return nil
		case text != "":
			return []byte(text)
		case file == "":
			return nil
		}
		var b []byte
		if b, err = os.ReadFile(file); err != nil {
			err = fmt.Errorf("reading %s file: %w", what, err)
		}
		return b
	}
	ca, cert, key = read(a.CAPEM, a.CAFile, "CA"), read(a.CertPEM, a.CertFile, "client certificate"), read(a.KeyPEM, a.KeyFile, "client key")
	return ca, cert, key, err
}

// hasTLS reports whether auth sets a CA or a client certificate.
func (a Auth) hasTLS() bool {
	return a.CAFile != "" || a.CertFile != "" || a.KeyFile != "" || a.CAPEM != "" || a.CertPEM != "" || a.KeyPEM != ""
}

// newHTTPClient is a client of auth whose every request, body included,
// ends within timeout (the registry client takes no context, so its
// requests are bounded here) and names userAgent.
func newHTTPClient(auth Auth, timeout time.Duration, userAgent string) (*http.Client, error) {
	cfg, err := tlsConfig(auth)
	if err != nil {
		return nil, err
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = cfg
	transport.ResponseHeaderTimeout = timeout
	return &http.Client{Transport: requestTransport{next: transport, agent: userAgent, timeout: timeout}}, nil
}

// requestTransport bounds each request, body included, by timeout, and
// sends agent as its User-Agent; the agent a library set (Helm's registry
// client names Helm) follows it, as in "terraform-provider-helmrelease/1.2.0
// Terraform/1.11.0 Helm/3.22.0". (http.Client.Timeout would bound the
// requests too, but around a RoundTripper other than http.Transport it
// reports a timeout as a bare "context deadline exceeded" now and then.)
type requestTransport struct {
	next    http.RoundTripper
	agent   string
	timeout time.Duration
}

func (t requestTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	agent := t.agent
	if own := req.Header.Get("User-Agent"); own != "" {
		agent += " " + own
	}
	ctx, cancel := context.WithTimeout(req.Context(), t.timeout)
	// A RoundTripper must not change the request it is given.
	out := req.Clone(ctx)
	out.Header.Set("User-Agent", agent)
	resp, err := t.next.RoundTrip(out)
	if err != nil {
		cancel()
		if errors.Is(err, context.DeadlineExceeded) && req.Context().Err() == nil {
			return nil, fmt.Errorf("%w: no answer within the request timeout of %s", err, t.timeout)
		}
		return nil, err
	}
	resp.Body = cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose ends a response's request context when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// Chart downloads (or takes from the cache) the archive of v and loads it.
// The archive is checked against the index digest when there is one.
func (r *Repositories) Chart(ctx context.Context, repoURL string, v *ChartVersion, auth Auth) (*chart.Chart, error) {
	b, _, _, err := r.archive(ctx, repoURL, v, auth)
	if err != nil {
		return nil, err
	}
	return load(repoURL, v, b)
}

// chartURLs are the repository's base URL and the archive URL of v.
func chartURLs(repoURL string, v *ChartVersion) (base, target *url.URL, err error) {
	if len(v.URLs) == 0 {
		return nil, nil, fmt.Errorf("repository %s: chart %s %s has no download URL", repoURL, v.Name, v.Version)
	}
	if base, err = url.Parse(strings.TrimSuffix(repoURL, "/") + "/"); err != nil {
		return nil, nil, fmt.Errorf("repository URL %s: %w", repoURL, err)
	}
	ref, err := url.Parse(v.URLs[0])
	if err != nil {
		return nil, nil, fmt.Errorf("repository %s: chart URL %s: %w", repoURL, v.URLs[0], err)
	}
	return base, base.ResolveReference(ref), nil
}

// archivePath is where the archive of digest, fetched with auth, is
// cached.
func (r *Repositories) archivePath(digest string, auth Auth) string {
	cacheKey := digest
	// An archive downloaded with credentials is only handed to the same
	// credentials: a repository may serve its index to anyone and its
	// archives to some.
	if id := r.credentialID(auth); id != "" {
		cacheKey += "\x00" + id
	}
	return r.cachePath("charts", cacheKey) + ".tgz"
}

// cachedArchive is the archive of digest that the cache holds, checked
// against it; nil when it holds none that matches.
func (r *Repositories) cachedArchive(digest string, auth Auth) []byte {
	b, err := os.ReadFile(r.archivePath(digest, auth))
	if err != nil || digestOf(b) != digest {
		return nil
	}
	return b
}

// archive returns the archive of v and its URL, and the cache entry that
// did not match the index's digest, if any. The archive is cached only
// when the index gives its digest, and checked against it when read.
func (r *Repositories) archive(ctx context.Context, repoURL string, v *ChartVersion, auth Auth) ([]byte, *url.URL, *CacheRepair, error) {
	base, target, err := chartURLs(repoURL, v)
	if err != nil {
		return nil, nil, nil, err
	}
	cacheKey := v.Digest
	if cacheKey == "" {
		cacheKey = target.String()
	}
	path := r.archivePath(cacheKey, auth)
	// Without a digest in the index, nothing is cached: nothing could
	// check it.
	var repaired *CacheRepair
	cached := func() []byte {
		if v.Digest == "" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		if got := digestOf(b); got != v.Digest {
			repaired = &CacheRepair{Path: path, What: fmt.Sprintf("chart %s %s of %s", v.Name, v.Version, repoURL), Why: fmt.Sprintf("content has digest sha256:%s, not the index's sha256:%s", got, v.Digest)}
			return nil
		}
		return b
	}
	if b := cached(); b != nil {
		return b, target, nil, nil
	}
	// Looked up again, verified and cached inside the flight, so that a
	// caller arriving as another flight ends downloads nothing.
	out, err, _ := r.group.Do("chart\x00"+path, func() (any, error) {
		if b := cached(); b != nil {
			return b, nil
		}
		b, err := r.download(ctx, repoURL, base, target, auth, "chart archive")
		if err != nil {
			return nil, err
		}
		if v.Digest == "" {
			return b, nil
		}
		if got := digestOf(b); got != v.Digest {
			return nil, fmt.Errorf("repository %s: the archive of chart %s %s does not match the digest of the index (got sha256 %s, want %s)", repoURL, v.Name, v.Version, got, v.Digest)
		}
		// A cache that cannot be written only costs a download next time.
		if os.MkdirAll(filepath.Dir(path), 0o750) == nil {
			r.store(path, b)
		}
		return b, nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return out.([]byte), target, repaired, nil
}

// provenance downloads the provenance file of the archive at target
// (<archive URL>.prov); a missing one is empty, not an error.
func (r *Repositories) provenance(ctx context.Context, repoURL string, target *url.URL, auth Auth) ([]byte, error) {
	base, err := url.Parse(strings.TrimSuffix(repoURL, "/") + "/")
	if err != nil {
		return nil, fmt.Errorf("repository URL %s: %w", repoURL, err)
	}
	prov := *target
	prov.Path += ".prov"
	b, err := r.download(ctx, repoURL, base, &prov, auth, "provenance file")
	if status := (*StatusError)(nil); errors.As(err, &status) && status.Code == http.StatusNotFound {
		return nil, nil
	}
	return b, err
}

func (r *Repositories) download(ctx context.Context, repoURL string, base, target *url.URL, auth Auth, what string) ([]byte, error) {
	client, err := r.httpClient(auth)
	if err != nil {
		return nil, fmt.Errorf("repository %s: %w", repoURL, err)
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("repository %s: %w", repoURL, err)
	}
	// Credentials go to the repository's own host only, unless passed on.
	if (auth.Username != "" || auth.Password != "") && (auth.PassCredentials || target.Host == base.Host) {
		req.SetBasicAuth(auth.Username, auth.Password)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("repository %s: downloading %s: %w", repoURL, target.Redacted(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, httpError(repoURL, what+" "+target.Redacted(), resp)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("repository %s: downloading %s: %w", repoURL, target.Redacted(), err)
	}
	return b, nil
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func load(repoURL string, v *ChartVersion, b []byte) (*chart.Chart, error) {
	c, err := loader.LoadArchive(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("repository %s: chart %s %s is not a valid chart archive: %w", repoURL, v.Name, v.Version, err)
	}
	return c, nil
}
