package chartsource

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/repo"
)

// Environment of the child process BenchmarkResolveConcurrent measures.
const (
	benchRepositoryEnv  = "HELMRELEASE_BENCH_REPOSITORY"
	benchResolutionsEnv = "HELMRELEASE_BENCH_RESOLUTIONS"
	benchCacheDirEnv    = "HELMRELEASE_BENCH_CACHE_DIR"
	benchHelmEnv        = "HELMRELEASE_BENCH_HELM"
)

// BenchmarkResolveConcurrent: N releases of one chart from one repository
// with a ≈20 MB index, resolved concurrently in one process, as the N
// resources of one `terraform plan` do. Each iteration runs a fresh process
// (this test binary, TestResolveInChildProcess), so that its peak RSS is the
// resolution's alone: "cold" starts with an empty cache directory, "warm"
// with the cache a previous process left (the index is revalidated, nothing
// downloaded); "helm" is the baseline of the providers built on Helm's
// repository code: each release downloads the index and loads it whole. Reported: index and archive downloads per process, and the
// largest peak RSS (VmHWM, Linux) of the processes. Wall time includes the process start.
//
//	go test ./internal/chartsource/ -run '^$' -bench ResolveConcurrent -benchtime 5x
func BenchmarkResolveConcurrent(b *testing.B) {
	srv := newBenchRepository(b)
	for _, n := range []int{0, 1, 10, 50} { // 0: the process alone
		for _, cache := range []string{"cold", "warm", "helm"} {
			if cache == "helm" && n > 10 {
				continue // gigabytes
			}
			b.Run(fmt.Sprintf("N=%d/%s", n, cache), func(b *testing.B) {
				warmDir := b.TempDir()
				if cache == "warm" {
					if _, err := NewRepositories(warmDir, 0).Resolve(context.Background(), Source{Name: "web", Repository: srv.URL}); err != nil {
						b.Fatal(err)
					}
				}
				indexes, archives := srv.indexes.Load(), srv.archives.Load()
				var peak int64
				for b.Loop() {
					dir := warmDir
					if cache != "warm" {
						dir = b.TempDir()
					}
					cmd := exec.Command(os.Args[0], "-test.run=^TestResolveInChildProcess$", "-test.count=1")
					cmd.Env = append(os.Environ(), benchRepositoryEnv+"="+srv.URL, benchResolutionsEnv+"="+strconv.Itoa(n), benchCacheDirEnv+"="+dir, benchHelmEnv+"="+strconv.FormatBool(cache == "helm"))
					out, err := cmd.CombinedOutput()
					if err != nil {
						b.Fatalf("%v: %s", err, out)
					}
					// Not the rusage of the child: Linux keeps its maxrss across
					// exec, from the moment it shared this process's memory.
					if _, line, ok := bytes.Cut(out, []byte("VmHWM:")); ok {
						kb, _ := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.Fields(line)[0], []byte("kB")))), 10, 64)
						peak = max(peak, kb<<10)
					}
				}
				b.ReportMetric(float64(srv.indexes.Load()-indexes)/float64(b.N), "index-downloads/op")
				b.ReportMetric(float64(srv.archives.Load()-archives)/float64(b.N), "archive-downloads/op")
				b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MB")
			})
		}
	}
}

// TestResolveInChildProcess is the process BenchmarkResolveConcurrent
// measures; it does nothing otherwise.
func TestResolveInChildProcess(t *testing.T) {
	url := os.Getenv(benchRepositoryEnv)
	if url == "" {
		t.Skip("run by BenchmarkResolveConcurrent")
	}
	n, err := strconv.Atoi(os.Getenv(benchResolutionsEnv))
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv(benchCacheDirEnv)
	repos := NewRepositories(dir, 0)
	helm := os.Getenv(benchHelmEnv) == "true"
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var err error
			if helm {
				err = helmResolve(url, filepath.Join(dir, strconv.Itoa(i)+".yaml"))
			} else {
				_, err = repos.Resolve(context.Background(), Source{Name: "web", Repository: url, Version: "1.x"})
			}
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	// The peak resident set size of this process (Linux), for the benchmark.
	if status, err := os.ReadFile("/proc/self/status"); err == nil {
		for line := range strings.Lines(string(status)) {
			if strings.HasPrefix(line, "VmHWM:") {
				fmt.Print(line)
			}
		}
	}
}

// helmResolve resolves as Helm's repository code does: download the index
// to a file, load it whole, look the chart up.
func helmResolve(url, path string) error {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url+"/index.yaml", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		return errors.Join(err, f.Close())
	}
	if err := f.Close(); err != nil {
		return err
	}
	idx, err := repo.LoadIndexFile(path)
	if err != nil {
		return err
	}
	_, err = idx.Get("web", "1.x")
	return err
}

// benchRepository serves the synthetic index with one real chart, web 1.2.3,
// answering conditional requests with 304.
type benchRepository struct {
	*httptest.Server
	indexes, archives atomic.Int64
}

func newBenchRepository(b *testing.B) *benchRepository {
	b.Helper()
	tgz, err := chartutil.Save(&chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "web", Version: "1.2.3"}}, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	archive, err := os.ReadFile(tgz)
	if err != nil {
		b.Fatal(err)
	}
	entry := fmt.Sprintf("  web:\n  - apiVersion: v2\n    name: web\n    version: 1.2.3\n    digest: %s\n    urls:\n    - charts/web-1.2.3.tgz\n", digestOf(archive))
	index := bytes.Replace(benchIndex(), []byte("entries:\n"), []byte("entries:\n"+entry), 1)
	const etag = `"bench"`
	s := &benchRepository{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/index.yaml":
			if r.Header.Get("If-None-Match") == etag {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			s.indexes.Add(1)
			w.Header().Set("ETag", etag)
			w.Header().Set("Content-Length", strconv.Itoa(len(index)))
			_, _ = w.Write(index)
		case "/charts/web-1.2.3.tgz":
			s.archives.Add(1)
			_, _ = w.Write(archive)
		default:
			http.NotFound(w, r)
		}
	}))
	b.Cleanup(s.Close)
	return s
}
