package chartsource

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/Masterminds/semver/v3"
	chartutil "helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/registry"
	orasauth "oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
)

// OCIChart is a chart resolved in an OCI registry.
type OCIChart struct {
	// Version is the chart version with the first 12 hex digits of the
	// manifest digest appended as build metadata (<version>+<12 hex>), as
	// Flux does: a tag pushed again with other content is a new version.
	Version string
	// Digest is the manifest digest (sha256:…).
	Digest string
	// Versions are the semver tags of the repository, newest first.
	Versions []string
	Chart    *chart.Chart
	// Verified is the signature verification the chart passed, when
	// Source.Verify asked for one.
	Verified *Verified
	// Repaired is the cache entry found not to match, pulled again.
	Repaired *CacheRepair
	// LayerDigest is the chart layer's digest (sha256:…): the archive.
	LayerDigest string
}

// IsOCI reports whether repository is an OCI registry (oci://).
func IsOCI(repository string) bool { return strings.HasPrefix(repository, "oci://") }

// OCI resolves chart src.Name in the OCI repository src.Repository
// (oci://host[:port]/path) against the constraint src.Version among its
// semver tags, pulls it (with its provenance when src.Keyring is set, and
// verifies it) and loads it. Prereleases match only a constraint naming one.
// Archives are cached by manifest digest; the tag is resolved every time, so
// a tag pushed again is seen.
func (r *Repositories) OCI(ctx context.Context, src Source) (*OCIChart, error) {
	return withLogin(ctx, src.Auth, func(auth Auth) (*OCIChart, error) {
		src.Auth = auth
		return r.oci(ctx, src)
	})
}

func (r *Repositories) oci(ctx context.Context, src Source) (*OCIChart, error) {
	repository, name, constraint, auth := src.Repository, src.Name, src.Version, src.Auth
	if constraint == "" {
		constraint = "*"
	}
	var c *semver.Constraints
	if _, _, ok := OCIDigestVersion(constraint); !ok {
		var err error
		if c, err = semver.NewConstraint(constraint); err != nil {
			return nil, fmt.Errorf("version constraint %q: %w", constraint, err)
		}
	}
	ref := strings.TrimSuffix(strings.TrimPrefix(repository, "oci://"), "/") + "/" + name
	client, err := r.registryClient(auth)
	if err != nil {
		return nil, fmt.Errorf("registry %s: %w", repository, err)
	}
	type result struct {
		out *OCIChart
		err error
	}
	done := make(chan result, 1)
	// The registry client takes no context: run it aside and stop waiting
	// when ctx ends. Each of its requests ends within the client's timeout,
	// and no request starts once ctx has ended.
	go func() {
		out, err := r.pullOCI(ctx, client, src, ref, c, constraint)
		done <- result{out, err}
	}()
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("registry %s: %w", repository, ctx.Err())
	case res := <-done:
		return res.out, res.err
	}
}

func (r *Repositories) pullOCI(ctx context.Context, client *registry.Client, src Source, ref string, c *semver.Constraints, constraint string) (*OCIChart, error) {
	repository, name, keyring := src.Repository, src.Name, src.Keyring
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if src.ociArtifact() {
		return r.pullOCIArtifact(ctx, client, src, ref)
	}
	var version, digest string
	var tags []string
	var err error
	named, namedDigest, byDigest := OCIDigestVersion(src.Version)
	switch p := src.Pin; {
	case p != nil && p.Digest != "":
		// The manifest pinned, however its tag moved since.
		version, digest = p.baseVersion(1), p.Digest
	case byDigest:
		// The manifest the configuration names, whatever its tag names now.
		version, digest = named, namedDigest
	default:
		if version, digest, tags, err = resolveTag(ctx, client, src, ref, c, constraint); err != nil {
			return nil, err
		}
	}
	tagged := ref + ":" + strings.ReplaceAll(version, "+", "_")
	out := &OCIChart{Version: version + "+" + shortHex(digest), Digest: digest, Versions: tags}
	// The signature is verified before the chart is read, and the digest
	// verified is the one pulled.
	if src.Verify != nil {
		if out.Verified, err = r.verifySignature(ctx, src.Auth, ref, digest, src.Verify); err != nil {
			return nil, err
		}
	}
	data, prov, repaired, err := r.ociArchive(ctx, client, src, ref, digest, keyring != "")
	if err != nil {
		return nil, err
	}
	out.Repaired, out.LayerDigest = repaired, "sha256:"+digestOf(data)
	if keyring != "" {
		// Helm signs the archive as packaged: <name>-<version>.tgz.
		if err := verifyProvenance(keyring, name+"-"+version+".tgz", data, prov); err != nil {
			return nil, fmt.Errorf("registry %s: %w", repository, err)
		}
	}
	if out.Chart, err = loader.LoadArchive(bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("registry %s: %s is not a valid chart: %w", repository, tagged, err)
	}
	if byDigest {
		if v, err := semver.NewVersion(out.Chart.Metadata.Version); err != nil || !v.Equal(semver.MustParse(named)) {
			return nil, fmt.Errorf("registry %s: the manifest %s@%s is version %s of chart %s, not %s: write the version the manifest holds with its digest", repository, ref, digest, out.Chart.Metadata.Version, name, named)
		}
	}
	return out, nil
}

// OCIDigestVersion splits a chart version naming an OCI manifest by its
// digest, "1.2.3@sha256:<64 hex>" (as Helm and Flux's OCIRepository name
// one), into the version and the digest; ok is false for a constraint.
// A tag can be pushed again, a digest cannot: the chart it names is the
// same on any machine at any time.
func OCIDigestVersion(s string) (version, digest string, ok bool) {
	v, d, found := strings.Cut(strings.TrimSpace(s), "@")
	if !found || !strings.HasPrefix(d, "sha256:") {
		return "", "", false
	}
	if hex := strings.TrimPrefix(d, "sha256:"); len(hex) != 64 || strings.Trim(hex, "0123456789abcdef") != "" {
		return "", "", false
	}
	if _, err := semver.StrictNewVersion(strings.TrimPrefix(v, "v")); err != nil {
		return "", "", false
	}
	return v, d, true
}

// resolveTag finds the newest semver tag of ref that c allows, and the
// manifest digest it names; tags are the repository's, newest first.
func resolveTag(ctx context.Context, client *registry.Client, src Source, ref string, c *semver.Constraints, constraint string) (version, digest string, tags []string, err error) {
	repository, name := src.Repository, src.Name
	if tags, err = client.Tags(ref); err != nil {
		return "", "", nil, fmt.Errorf("registry %s: listing the tags of chart %s: %w%s", repository, name, err, ociRemedy(err))
	}
	for _, t := range tags {
		if v, err := semver.NewVersion(t); err == nil && c.Check(v) {
			version = t
			break
		}
	}
	if version == "" {
		newestTag := "none"
		if len(tags) > 0 {
			newestTag = tags[0]
		}
		return "", "", nil, marked{fmt.Errorf("chart %s in registry %s has no tag matching %q (newest: %s)", name, repository, constraint, newestTag), ErrNoMatchingVersion}
	}
	tagged := ref + ":" + strings.ReplaceAll(version, "+", "_")
	if err := ctx.Err(); err != nil {
		return "", "", nil, err
	}
	desc, err := client.Resolve(tagged)
	if err != nil {
		return "", "", nil, fmt.Errorf("registry %s: resolving %s: %w%s", repository, tagged, err, ociRemedy(err))
	}
	return version, desc.Digest.String(), tags, nil
}

// pullOCIArtifact pulls the manifest of an OCIRepository's artifact by
// its digest, which the registry client checks the content against: the
// chart source-controller fetched. Its version is the chart's with the
// digest's first 12 hex digits, as helm-controller makes it.
func (r *Repositories) pullOCIArtifact(ctx context.Context, client *registry.Client, src Source, ref string) (*OCIChart, error) {
	repository := src.Repository
	tag, digest, err := src.Artifact.ociPin()
	if err != nil {
		return nil, err
	}
	var verified *Verified
	if src.Verify != nil {
		if verified, err = r.verifySignature(ctx, src.Auth, ref, digest, src.Verify); err != nil {
			return nil, err
		}
	}
	data, _, repaired, err := r.ociArchive(ctx, client, src, ref, digest, false)
	if err != nil {
		return nil, err
	}
	c, err := loader.LoadArchive(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("registry %s: %s@%s is not a valid chart: %w", repository, ref, digest, err)
	}
	if err := checkOCITag(tag, c.Metadata.Version); err != nil {
		return nil, err
	}
	hex := strings.TrimPrefix(digest, "sha256:")
	return &OCIChart{Version: c.Metadata.Version + "+" + hex[:12], Digest: digest, Chart: c, Verified: verified, Repaired: repaired, LayerDigest: "sha256:" + digestOf(data)}, nil
}

// ociArchive is the chart archive (and provenance file, with withProv) of
// the manifest digest: from the cache when what it holds matches the
// manifest's digests, else pulled by digest, checked and cached. A cached
// entry that does not match is returned as repaired.
func (r *Repositories) ociArchive(ctx context.Context, client *registry.Client, src Source, ref, digest string, withProv bool) (data, prov []byte, repaired *CacheRepair, err error) {
	entry := r.ociCache(digest)
	data, prov, err = entry.read(withProv)
	if err == nil {
		return data, prov, nil, nil
	}
	if !errors.Is(err, errCacheMissing) {
		repaired = &CacheRepair{Path: entry.path, What: fmt.Sprintf("chart %s@%s", ref, digest), Why: err.Error()}
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, nil, err
	}
	pulled, err := client.Pull(ref+"@"+digest, registry.PullOptWithChart(true), registry.PullOptWithProv(withProv), registry.PullOptIgnoreMissingProv(true))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("registry %s: pulling %s@%s: %w%s", src.Repository, ref, digest, err, ociRemedy(err))
	}
	if err := checkPulled(digest, pulled); err != nil {
		return nil, nil, nil, fmt.Errorf("registry %s: %s@%s: %w", src.Repository, ref, digest, err)
	}
	r.writeOCI(entry, pulled)
	if pulled.Prov != nil {
		prov = pulled.Prov.Data
	}
	return pulled.Chart.Data, prov, repaired, nil
}

func ociRemedy(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "server gave HTTP response to HTTPS client"):
		return PlainHTTPRemedy
	case strings.Contains(msg, "401") || strings.Contains(msg, "unauthorized") || strings.Contains(msg, "credential not found"):
		return " (check the registry credentials: chart.username/password or the provider's registries, whose login command or Docker configuration may give none for this host)"
	case strings.Contains(msg, "404") || strings.Contains(msg, "not found"):
		return " (check the repository path and chart name)"
	}
	return ""
}

// PlainHTTPRemedy is what to do when a registry answers HTTPS requests
// in plain HTTP.
const PlainHTTPRemedy = " (the registry serves plain HTTP: set chart.plain_http = true, or plain_http = true on the provider's registries entry for this host)"

// registryClient returns the client for a set of credentials. It logs in
// lazily, on the registry's first 401, and keeps the bearer tokens it is
// given; an expired token is answered 401 and fetched again.
func (r *Repositories) registryClient(auth Auth) (*registry.Client, error) {
	httpClient, err := r.httpClient(auth)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.registryClients[auth]; ok {
		return c, nil
	}
	credential, err := registryCredential(auth)
	if err != nil {
		return nil, err
	}
	// Helm's client would fall back to Docker's credential store for a
	// client without basic auth: its authorizer is replaced by one that
	// sends only what the configuration says.
	authorizer := orasauth.Client{Client: httpClient, Credential: credential, Cache: orasauth.NewCache()}
	authorizer.SetUserAgent(helmUserAgent)
	opts := []registry.ClientOption{
		registry.ClientOptHTTPClient(httpClient),
		registry.ClientOptAuthorizer(authorizer),
		// Read by Helm's client although the authorizer above never asks it.
		registry.ClientOptCredentialsFile(filepath.Join(r.cacheDir, "no-registry-credentials.json")),
	}
	if auth.PlainHTTP {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	c, err := registry.NewClient(opts...)
	if err == nil {
		r.registryClients[auth] = c
	}
	return c, err
}

// helmUserAgent is the agent Helm's registry client sends, which follows
// this provider's.
var helmUserAgent = "Helm/" + strings.TrimPrefix(chartutil.DefaultCapabilities.HelmVersion.Version, "v")

// registryCredential is what the registry client sends to a registry that
// asks: auth's user name and password, else Docker's credentials for the
// host when auth says so, else nothing.
func registryCredential(auth Auth) (orasauth.CredentialFunc, error) {
	switch {
	case auth.Username != "" || auth.Password != "":
		cred := orasauth.Credential{Username: auth.Username, Password: auth.Password}
		return func(context.Context, string) (orasauth.Credential, error) { return cred, nil }, nil
	case auth.DockerConfig:
		store, err := credentials.NewStoreFromDocker(credentials.StoreOptions{DetectDefaultNativeStore: true})
		if err != nil {
			return nil, fmt.Errorf("reading Docker's credential configuration: %w", err)
		}
		return credentials.Credential(store), nil
	}
	return func(context.Context, string) (orasauth.Credential, error) { return orasauth.EmptyCredential, nil }, nil
}
