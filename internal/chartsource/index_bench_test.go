package chartsource

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	repo "helm.sh/helm/v4/pkg/repo/v1"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// benchIndex is a repository index of about 20 MB: 1,250 charts of 18
// versions each, built on first use.
var benchIndex = sync.OnceValue(func() []byte { return testrepo.SyntheticIndex(1250, 18) })

// BenchmarkResolveOneChart: what a release pays per process for a chart of
// a large index: one scan, one chart decoded.
func BenchmarkResolveOneChart(b *testing.B) {
	benchIndex := benchIndex()
	b.SetBytes(int64(len(benchIndex)))
	b.ReportAllocs()
	for b.Loop() {
		idx, err := ParseIndex(benchIndex)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := idx.Resolve("chart-500", "*"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHelmLoadIndex: what decoding the whole index costs, as Helm's
// loader (and the providers built on it) does for every release.
func BenchmarkHelmLoadIndex(b *testing.B) {
	benchIndex := benchIndex()
	path := filepath.Join(b.TempDir(), "index.yaml")
	if err := os.WriteFile(path, benchIndex, 0o600); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(benchIndex)))
	b.ReportAllocs()
	for b.Loop() {
		idx, err := repo.LoadIndexFile(path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := idx.Get("chart-500", "*"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenCachedIndex: what a process pays to use the index cached on
// disk (a 304 revalidation, or the stale copy): one scan of the file,
// which also takes its digest and each chart section's, and one chart
// decoded, checked against its section's digest.
func BenchmarkOpenCachedIndex(b *testing.B) {
	benchIndex := benchIndex()
	path := filepath.Join(b.TempDir(), "index.yaml")
	if err := os.WriteFile(path, benchIndex, 0o600); err != nil {
		b.Fatal(err)
	}
	first, digest, err := scanIndex(path)
	if err != nil {
		b.Fatal(err)
	}
	first.close()
	b.SetBytes(int64(len(benchIndex)))
	b.ReportAllocs()
	for b.Loop() {
		idx, err := openIndex(path, digest)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := idx.Resolve("chart-500", "*"); err != nil {
			b.Fatal(err)
		}
		idx.close()
	}
}
