package chartsource

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	repo "helm.sh/helm/v4/pkg/repo/v1"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// Environment of the child process BenchmarkResolveConcurrent measures.
const (
	benchRepositoryEnv  = "HELMRELEASE_BENCH_REPOSITORY"
	benchResolutionsEnv = "HELMRELEASE_BENCH_RESOLUTIONS"
	benchCacheDirEnv    = "HELMRELEASE_BENCH_CACHE_DIR"
	benchHelmEnv        = "HELMRELEASE_BENCH_HELM"
)

// BenchmarkResolveConcurrent: N releases of one chart from one repository
// with a ≈20 MB index (and 20 releases from 20 such repositories),
// resolved concurrently in one process, as the N resources of one
// `terraform plan` do. Each iteration runs a fresh process
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
	many := []*testrepo.IndexServer{srv}
	for range 19 {
		many = append(many, newBenchRepository(b))
	}
	for _, n := range []int{0, 1, 10, 50, 20} { // 0: the process alone; 20: from 20 repositories
		servers := []*testrepo.IndexServer{srv}
		if n == 20 {
			servers = many
		}
		for _, cache := range []string{"cold", "warm", "helm"} {
			if cache == "helm" && n > 10 {
				continue // gigabytes
			}
			b.Run(fmt.Sprintf("N=%d/repositories=%d/%s", n, len(servers), cache), func(b *testing.B) {
				var urls []string
				for _, s := range servers {
					urls = append(urls, s.URL)
				}
				warmDir := b.TempDir()
				if cache == "warm" {
					for _, u := range urls {
						if _, err := NewRepositories(warmDir, 0).Resolve(context.Background(), Source{Name: "web", Repository: u}); err != nil {
							b.Fatal(err)
						}
					}
				}
				downloads := func() (indexes, archives int64) {
					for _, s := range servers {
						indexes += s.IndexDownloads.Load()
						archives += s.ArchiveDownloads.Load()
					}
					return indexes, archives
				}
				indexes, archives := downloads()
				var peak int64
				for b.Loop() {
					dir := warmDir
					if cache != "warm" {
						dir = b.TempDir()
					}
					cmd := exec.Command(os.Args[0], "-test.run=^TestResolveInChildProcess$", "-test.count=1")
					cmd.Env = append(os.Environ(), benchRepositoryEnv+"="+strings.Join(urls, " "), benchResolutionsEnv+"="+strconv.Itoa(n), benchCacheDirEnv+"="+dir, benchHelmEnv+"="+strconv.FormatBool(cache == "helm"))
					out, err := cmd.CombinedOutput()
					if err != nil {
						b.Fatalf("%v: %s", err, out)
					}
					// Not the rusage of the child: Linux keeps its maxrss across
					// exec, from the moment it shared this process's memory.
					if _, line, ok := bytes.Cut(out, []byte("peak-rss ")); ok {
						rss, _ := strconv.ParseInt(string(bytes.Fields(line)[0]), 10, 64)
						peak = max(peak, rss)
					}
				}
				indexesAfter, archivesAfter := downloads()
				b.ReportMetric(float64(indexesAfter-indexes)/float64(b.N), "index-downloads/op")
				b.ReportMetric(float64(archivesAfter-archives)/float64(b.N), "archive-downloads/op")
				b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MB")
			})
		}
	}
}

// TestResolveInChildProcess is the process BenchmarkResolveConcurrent
// measures; it does nothing otherwise.
func TestResolveInChildProcess(t *testing.T) {
	urls := strings.Fields(os.Getenv(benchRepositoryEnv))
	if len(urls) == 0 {
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
			url := urls[i%len(urls)]
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
	fmt.Printf("peak-rss %d\n", testrepo.PeakRSS("/proc/self/status"))
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

// newBenchRepository serves the synthetic index with one real chart, web
// 1.2.3.
func newBenchRepository(b *testing.B) *testrepo.IndexServer {
	b.Helper()
	tgz, err := chartutil.Save(&chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "web", Version: "1.2.3"}}, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	archive, err := os.ReadFile(tgz)
	if err != nil {
		b.Fatal(err)
	}
	index := testrepo.WithChart(benchIndex(), "web", "1.2.3", "charts/web-1.2.3.tgz", digestOf(archive))
	s := testrepo.NewIndexServer(index, "charts/web-1.2.3.tgz", archive)
	b.Cleanup(s.Close)
	return s
}
