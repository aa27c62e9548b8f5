package chartsource

import (
	"context"
	"errors"
	"strings"
	"testing"

	chart "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// TestPinFindsTheChartAgain: a source resolved, then pinned, resolves to
// the same chart however the source moved meanwhile, in a new process
// (a new Repositories) on the same cache and on an empty one: a range
// past a version published since, an OCI tag pushed again. What the
// source can no longer give fails with ErrChangedSincePlan, naming both
// revisions; a fresh resolve without the pin sees the new chart.
func TestPinFindsTheChartAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	chartOf := func(name, version, description string) *chart.Chart {
		return &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: name, Version: version, Description: description}}
	}
	web := testrepo.NewHTTP(t)
	web.Add(t, chartOf("web", "1.0.0", "first"), nil)
	reg := testrepo.NewOCI(t)
	reg.Push(t, chartOf("api", "1.0.0", "first"), nil)
	httpSrc := Source{Repository: web.URL, Name: "web", Version: "1.*", Auth: Auth{Username: testrepo.Username, Password: testrepo.Password}}
	ociSrc := Source{Repository: reg.URL, Name: "api", Version: "1.*", Auth: Auth{Username: testrepo.Username, Password: testrepo.Password, CAFile: reg.CAFile}}

	cache := t.TempDir()
	resolve := func(t *testing.T, cacheDir string, src Source, versionOnly bool) (*Resolved, error) {
		t.Helper()
		repos := NewRepositories(cacheDir, 0)
		if versionOnly {
			return repos.Version(ctx, src)
		}
		return repos.Resolve(ctx, src)
	}
	pinOf := func(t *testing.T, src Source) *Pin {
		t.Helper()
		out, err := resolve(t, cache, src, false)
		if err != nil {
			t.Fatal(err)
		}
		return PinOf(out)
	}
	httpPin, ociPin := pinOf(t, httpSrc), pinOf(t, ociSrc)

	// Published since: a newer version in the range, a tag pushed again.
	web.Add(t, chartOf("web", "1.1.0", "newer"), nil)
	reg.Push(t, chartOf("api", "1.0.0", "pushed again"), nil)
	for _, tc := range []struct {
		name string
		src  Source
		pin  *Pin
	}{{"http", httpSrc, httpPin}, {"oci", ociSrc, ociPin}} {
		fresh, err := resolve(t, t.TempDir(), tc.src, false)
		if err != nil {
			t.Fatal(err)
		}
		if fresh.Version == tc.pin.Version || fresh.Digest == tc.pin.Digest {
			t.Fatalf("%s: a fresh resolve finds the pinned chart %s again: the source did not move", tc.name, tc.pin)
		}
		pinned := tc.src
		pinned.Pin = tc.pin
		for _, where := range []struct {
			name     string
			cacheDir string
		}{{"same cache", cache}, {"empty cache", t.TempDir()}} {
			for _, versionOnly := range []bool{false, true} {
				out, err := resolve(t, where.cacheDir, pinned, versionOnly)
				if err != nil {
					t.Errorf("%s, %s, version only %v: %v", tc.name, where.name, versionOnly, err)
					continue
				}
				if out.Version != tc.pin.Version || out.Digest != tc.pin.Digest {
					t.Errorf("%s, %s, version only %v: resolved %s (%s), want the pinned %s", tc.name, where.name, versionOnly, out.Version, out.Digest, tc.pin)
				}
				if out.Chart != nil && out.Chart.Metadata.Description != "first" {
					t.Errorf("%s, %s: loaded the chart %q, want the one pinned", tc.name, where.name, out.Chart.Metadata.Description)
				}
			}
		}
	}

	// The version pinned published again: the archive pinned comes from
	// the cache that holds it, checked against the pinned digest; without
	// it, the resolve fails naming both digests.
	web.Add(t, chartOf("web", "1.0.0", "published again"), nil)
	pinned := httpSrc
	pinned.Pin = httpPin
	out, err := resolve(t, cache, pinned, true)
	if err != nil || out.Digest != httpPin.Digest {
		t.Errorf("published again, same cache: %v, %+v; want the pinned archive from the cache", err, out)
	}
	_, err = resolve(t, t.TempDir(), pinned, true)
	if !errors.Is(err, ErrChangedSincePlan) || !strings.Contains(err.Error(), httpPin.Digest) || !strings.Contains(err.Error(), "published again") {
		t.Errorf("published again, empty cache: %v; want ErrChangedSincePlan naming the pinned digest %s", err, httpPin.Digest)
	}
	// A cached archive that does not match the pinned digest is not it.
	if n := replaceCached(t, cache, "charts/*.tgz", web.File(t, "charts/web-1.1.0.tgz")); n == 0 {
		t.Fatal("no archive cached")
	}
	if _, err := resolve(t, cache, pinned, false); !errors.Is(err, ErrChangedSincePlan) {
		t.Errorf("published again, cache tampered: %v; want ErrChangedSincePlan", err)
	}
}

func TestReproducible(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		src  Source
		want bool
	}{
		{Source{Repository: "https://charts.example.com", Version: "1.2.3"}, true},
		{Source{Repository: "https://charts.example.com", Version: "=1.2.3"}, true},
		// An OCI tag can be pushed again; its manifest's digest names one.
		{Source{Repository: "oci://registry.example.com/charts", Version: "v1.2.3"}, false},
		{Source{Repository: "oci://registry.example.com/charts", Version: "1.2.3"}, false},
		{Source{Repository: "oci://registry.example.com/charts", Version: "1.2.3@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}, true},
		{Source{Repository: "oci://registry.example.com/charts", Version: "1.*@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}, false},
		{Source{Repository: "https://charts.example.com", Version: "1.2.3-rc.1+build.5"}, true},
		{Source{Repository: "https://charts.example.com", Version: ""}, false},
		{Source{Repository: "https://charts.example.com", Version: "1.*"}, false},
		{Source{Repository: "https://charts.example.com", Version: "1.2"}, false},
		{Source{Repository: "https://charts.example.com", Version: "1.2.x"}, false},
		{Source{Repository: "https://charts.example.com", Version: "~1.2.3"}, false},
		{Source{Repository: "https://charts.example.com", Version: ">=1.2.3 <2.0.0"}, false},
		{Source{Repository: "https://charts.example.com", Version: "1.2.3 || 1.2.4"}, false},
		{Source{Name: "./chart"}, true},
		{Source{Name: "./chart", DependencyUpdate: true}, false},
		{Source{Name: "app", Git: &Git{Ref: GitRef{Commit: strings.Repeat("a", 40)}}}, true},
		{Source{Name: "app", Git: &Git{Ref: GitRef{Tag: "v1.0.0"}}}, true},
		{Source{Name: "app", Git: &Git{Ref: GitRef{Branch: "main"}}}, false},
		{Source{Name: "app", Git: &Git{Ref: GitRef{SemVer: "1.x"}}}, false},
		{Source{Name: "app", Git: &Git{}}, false},
		{Source{Name: "app", Bucket: &Bucket{}}, false},
		{Source{ChartRef: &ChartRef{Kind: KindHelmChart, Name: "app"}}, false},
	} {
		if got := tc.src.Reproducible(); got != tc.want {
			t.Errorf("%+v: reproducible %v, want %v", tc.src, got, tc.want)
		}
	}
}

// TestDeployed: a source that would resolve anew takes the chart
// deployed where it admits it; sources that name one chart, or whose
// record says too little, are left as they are.
func TestDeployed(t *testing.T) {
	t.Parallel()
	const repo, registry = "https://charts.example.com", "oci://registry.example.com/charts"
	digest := "sha256:" + strings.Repeat("ab", 32)
	commit := "main@sha1:" + strings.Repeat("c", 40)
	for _, tc := range []struct {
		name     string
		src      Source
		deployed *Pin
		want     string // the version the source names after, or its pin; "" when left as it is
	}{
		{"a range", Source{Repository: repo, Version: "1.*"}, &Pin{Version: "1.2.3"}, "1.2.3"},
		{"no version", Source{Repository: repo}, &Pin{Version: "1.2.3"}, "1.2.3"},
		{"a revision's parts", Source{Repository: repo, Version: ">=1.0.0 <2.0.0"}, &Pin{Version: "1.2.3+values.abc"}, "1.2.3"},
		{"outside the range", Source{Repository: repo, Version: "2.*"}, &Pin{Version: "1.2.3"}, ""},
		{"no version deployed", Source{Repository: repo, Version: "1.*"}, &Pin{Version: "not-a-version"}, ""},
		{"one version named", Source{Repository: repo, Version: "1.2.4"}, &Pin{Version: "1.2.3"}, ""},
		{"an OCI range", Source{Repository: registry, Version: "1.*"}, &Pin{Version: "1.2.3+abababababab", Digest: digest}, "pin 1.2.3+abababababab (digest " + digest + ")"},
		{"an OCI tag", Source{Repository: registry, Version: "1.2.3"}, &Pin{Version: "1.2.3+abababababab", Digest: digest}, "pin 1.2.3+abababababab (digest " + digest + ")"},
		{"an OCI tag of another version", Source{Repository: registry, Version: "1.2.4"}, &Pin{Version: "1.2.3+abababababab", Digest: digest}, ""},
		{"an OCI release recording no digest", Source{Repository: registry, Version: "1.*"}, &Pin{Version: "1.2.3"}, ""},
		{"a Git branch", Source{Name: "app", Git: &Git{Ref: GitRef{Branch: "main"}}}, &Pin{Version: "1.2.3", SourceRevision: commit}, "pin 1.2.3 from " + commit},
		{"a Git branch, no commit recorded", Source{Name: "app", Git: &Git{Ref: GitRef{Branch: "main"}}}, &Pin{Version: "1.2.3"}, ""},
		{"a bucket", Source{Name: "app", Bucket: &Bucket{}}, &Pin{Version: "1.2.3", SourceRevision: "sha256:" + strings.Repeat("d", 64)}, "pin 1.2.3 from sha256:" + strings.Repeat("d", 64)},
		{"dependency_update", Source{Repository: repo, Version: "1.*", DependencyUpdate: true}, &Pin{Version: "1.2.3"}, ""},
		{"a chart reference", Source{ChartRef: &ChartRef{Kind: KindHelmChart, Name: "app"}}, &Pin{Version: "1.2.3"}, "pin 1.2.3"},
		{"a local chart", Source{Name: "./chart"}, &Pin{Version: "1.2.3"}, ""},
	} {
		got, ok := tc.src.Deployed(tc.deployed)
		named := got.Version
		if got.Pin != nil {
			named = "pin " + got.Pin.String()
		}
		switch {
		case ok != (tc.want != ""):
			t.Errorf("%s: taken %v, want %v", tc.name, ok, tc.want != "")
		case ok && named != tc.want:
			t.Errorf("%s: names %q, want %q", tc.name, named, tc.want)
		case ok && got.Pin == nil && !got.Reproducible():
			t.Errorf("%s: names %q, which is not one chart", tc.name, named)
		case !ok && (got.Version != tc.src.Version || got.Pin != nil):
			t.Errorf("%s: changed to %q though not taken", tc.name, named)
		}
	}
}

func TestOCIDigestVersion(t *testing.T) {
	t.Parallel()
	digest := "sha256:" + strings.Repeat("0123456789abcdef", 4)
	for _, tc := range []struct {
		in, version, digest string
		ok                  bool
	}{
		{"1.2.3@" + digest, "1.2.3", digest, true},
		{" v1.2.3-rc.1@" + digest + " ", "v1.2.3-rc.1", digest, true},
		{"1.2.3", "", "", false},
		{"1.*@" + digest, "", "", false},
		{"1.2@" + digest, "", "", false},
		{"1.2.3@" + strings.ToUpper(digest), "", "", false},
		{"1.2.3@" + digest[:70], "", "", false},
		{"1.2.3@sha512:" + strings.Repeat("ab", 64), "", "", false},
		{"@" + digest, "", "", false},
	} {
		v, d, ok := OCIDigestVersion(tc.in)
		if v != tc.version || d != tc.digest || ok != tc.ok {
			t.Errorf("OCIDigestVersion(%q) = %q, %q, %v; want %q, %q, %v", tc.in, v, d, ok, tc.version, tc.digest, tc.ok)
		}
	}
}

// TestFingerprintOfChartRef: a chart reference's fingerprint is the
// object's, whatever its artifact names now (a HelmChart's version,
// repository and values files come from it), so that a refresh's pin
// holds for the apply's plan after the artifact moved; another object's
// differs.
func TestFingerprintOfChartRef(t *testing.T) {
	t.Parallel()
	ref := &ChartRef{Kind: KindHelmChart, Name: "app", Namespace: "apps"}
	at := func(ref *ChartRef, version, revision string) Source {
		return Source{ChartRef: ref, Name: "app", Repository: "https://charts.example.com", Version: "=" + version, Artifact: &Artifact{Revision: revision}}
	}
	if at(ref, "1.0.2", "1.0.2").Fingerprint() != at(ref, "1.0.3", "1.0.3").Fingerprint() {
		t.Error("the fingerprint of a chart reference moved with its artifact")
	}
	other := &ChartRef{Kind: KindHelmChart, Name: "other", Namespace: "apps"}
	if at(ref, "1.0.2", "1.0.2").Fingerprint() == at(other, "1.0.2", "1.0.2").Fingerprint() {
		t.Error("two chart references of one fingerprint")
	}
	if at(nil, "1.0.2", "").Fingerprint() == at(nil, "1.0.3", "").Fingerprint() {
		t.Error("two version constraints of one fingerprint")
	}
}
