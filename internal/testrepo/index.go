package testrepo

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/provenance"
	repo "helm.sh/helm/v4/pkg/repo/v1"
)

// SyntheticIndex is an index of charts × versions laid out as Helm writes
// it, with the descriptions, keywords and maintainers real indexes carry.
func SyntheticIndex(charts, versions int) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nentries:\n")
	for c := range charts {
		fmt.Fprintf(&b, "  chart-%03d:\n", c)
		for v := range versions {
			fmt.Fprintf(&b, `  - annotations:
      category: Infrastructure
      licenses: Apache-2.0
    apiVersion: v2
    appVersion: %d.%d.0
    created: "2026-10-%02dT10:00:00.000000000Z"
    dependencies:
    - name: common
      repository: oci://registry.example.com/charts
      tags:
      - common
      version: 2.x.x
    description: Chart number %d of a synthetic repository, with a description as long as the ones real charts carry in their Chart.yaml files.
    digest: %064x
    home: https://example.com/charts/chart-%03d
    icon: https://example.com/icons/chart-%03d.svg
    keywords:
    - synthetic
    - benchmark
    - chart
    maintainers:
    - name: Example Maintainers
      url: https://example.com
    name: chart-%03d
    sources:
    - https://example.com/src/chart-%03d
    urls:
    - https://charts.example.com/chart-%03d-%d.%d.%d.tgz
    version: %d.%d.%d
`, v/10, v%10, 1+v%28, c, c*1000+v, c, c, c, c, c, v/100, (v/10)%10, v%10, v/100, (v/10)%10, v%10)
		}
	}
	b.WriteString("generated: \"2026-11-01T00:00:00Z\"\n")
	return []byte(b.String())
}

// WithChart is index with one more chart entry listed first: name at
// version, its archive at url (relative to the repository), with digest.
func WithChart(index []byte, name, version, url, digest string) []byte {
	entry := fmt.Sprintf("  %s:\n  - apiVersion: v2\n    name: %s\n    version: %s\n    digest: %s\n    urls:\n    - %s\n", name, name, version, digest, url)
	return bytes.Replace(index, []byte("entries:\n"), []byte("entries:\n"+entry), 1)
}

// IndexServer is a repository serving one index and one archive, with an
// ETag (conditional requests are answered 304) and Content-Length, as
// static hosting does; it counts the bodies it sends. The caller closes it.
type IndexServer struct {
	*httptest.Server
	IndexDownloads, ArchiveDownloads atomic.Int64
}

// NewIndexServer serves index at /index.yaml and archive at /<archivePath>.
func NewIndexServer(index []byte, archivePath string, archive []byte) *IndexServer {
	const etag = `"index"`
	s := &IndexServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/index.yaml":
			if r.Header.Get("If-None-Match") == etag {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			s.IndexDownloads.Add(1)
			w.Header().Set("ETag", etag)
			w.Header().Set("Content-Length", strconv.Itoa(len(index)))
			_, _ = w.Write(index)
		case "/" + archivePath:
			s.ArchiveDownloads.Add(1)
			_, _ = w.Write(archive)
		default:
			http.NotFound(w, r)
		}
	}))
	return s
}

// PeakRSS reads the peak resident set size (VmHWM, in bytes) from a /proc
// status file, e.g. /proc/self/status; 0 where there is none (not Linux).
func PeakRSS(status string) int64 { return StatusBytes(status, "VmHWM") }

// StatusBytes reads a field given in kB (VmHWM, RssAnon, …) of a /proc
// status file, in bytes; 0 where there is none.
func StatusBytes(status, field string) int64 {
	data, err := os.ReadFile(status)
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// Archive packages c as `helm package` does: its .tgz, and the digest an
// index records of it.
func Archive(c *chart.Chart) (archive []byte, digest string, err error) {
	tmp, err := os.MkdirTemp("", "testrepo-chart-")
	if err != nil {
		return nil, "", err
	}
	defer os.RemoveAll(tmp)
	tgz, err := chartutil.Save(c, tmp)
	if err != nil {
		return nil, "", err
	}
	if archive, err = os.ReadFile(tgz); err != nil {
		return nil, "", err
	}
	digest, err = provenance.Digest(bytes.NewReader(archive))
	return archive, digest, err
}

// IndexChartURL is the first URL of the newest version of chart name that
// matches constraint in the index file at path, loaded whole as Helm's
// repo package loads it (as `helm install --repo` does).
func IndexChartURL(path, name, constraint string) (string, error) {
	idx, err := repo.LoadIndexFile(path)
	if err != nil {
		return "", err
	}
	v, err := idx.Get(name, constraint)
	if err != nil {
		return "", err
	}
	if len(v.URLs) == 0 {
		return "", fmt.Errorf("chart %s %s has no URL in %s", name, v.Version, path)
	}
	return v.URLs[0], nil
}
