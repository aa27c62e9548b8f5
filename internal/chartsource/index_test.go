package chartsource

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	repo "helm.sh/helm/v4/pkg/repo/v1"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

const smallIndex = `apiVersion: v1
entries:
  podinfo:
  - apiVersion: v2
    name: podinfo
    version: 6.5.1
    appVersion: 6.5.1
    digest: sha256:aaa
    urls: [https://charts.example.com/podinfo-6.5.1.tgz]
  - apiVersion: v2
    name: podinfo
    version: 6.6.0-rc.1
    urls: [https://charts.example.com/podinfo-6.6.0-rc.1.tgz]
  - apiVersion: v2
    name: podinfo
    version: 6.5.4
    appVersion: 6.5.4
    urls: [https://charts.example.com/podinfo-6.5.4.tgz]
  - apiVersion: v2
    name: podinfo
    version: 7.0.0
    removed: true
    urls: [https://charts.example.com/podinfo-7.0.0.tgz]
  - apiVersion: v2
    name: podinfo
    version: not-semver
    urls: [https://charts.example.com/podinfo-x.tgz]
  "quoted-chart":
  - apiVersion: v2
    version: 1.0.0
    urls: [quoted-chart-1.0.0.tgz]
  redis:
  - apiVersion: v2
    name: redis
    version: 18.0.0
    urls: [redis-18.0.0.tgz]
generated: "2026-11-01T00:00:00Z"
`

func TestResolve(t *testing.T) {
	json := `{"apiVersion": "v1", "entries": {"podinfo": [` +
		`{"name": "podinfo", "version": "6.5.1", "urls": ["a"]},` +
		`{"name": "podinfo", "version": "6.6.0-rc.1", "urls": ["b"]},` +
		`{"name": "podinfo", "version": "6.5.4", "urls": ["c"]}]}}`
	for name, raw := range map[string]string{"helm layout": smallIndex, "json": json} {
		t.Run(name, func(t *testing.T) {
			idx, err := ParseIndex([]byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct{ constraint, want string }{
				{"", "6.5.4"},
				{"*", "6.5.4"},
				{"6.5.*", "6.5.4"},
				{"~6.5.1", "6.5.4"},
				{"6.5.1", "6.5.1"},
				{">=6.0.0 <6.5.4", "6.5.1"},
				{">=6.0.0-0", "6.6.0-rc.1"},
			} {
				v, err := idx.Resolve("podinfo", tc.constraint)
				if err != nil || v.Version != tc.want {
					t.Errorf("Resolve(%q) = %v, %v; want %s", tc.constraint, v, err, tc.want)
				}
			}
			if _, err := idx.Resolve("podinfo", ">=7.0.0"); !errors.Is(err, ErrNoMatchingVersion) || !strings.Contains(err.Error(), "newest: 6.6.0-rc.1") {
				t.Errorf("no match: %v", err)
			}
			if _, err := idx.Resolve("absent", "*"); !errors.Is(err, ErrChartNotFound) {
				t.Errorf("unknown chart: %v", err)
			}
		})
	}
}

func TestIndexSections(t *testing.T) {
	idx, err := ParseIndex([]byte(smallIndex))
	if err != nil {
		t.Fatal(err)
	}
	if idx.sections == nil {
		t.Fatal("a Helm-layout index was decoded whole")
	}
	if got := strings.Join(idx.Names(), ","); got != "podinfo,quoted-chart,redis" {
		t.Errorf("Names = %s", got)
	}
	versions, err := idx.Versions("podinfo")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range versions {
		got = append(got, v.Version)
	}
	if strings.Join(got, ",") != "6.6.0-rc.1,6.5.4,6.5.1" {
		t.Errorf("versions %v: want newest first, removed and invalid left out", got)
	}
	if v, err := idx.Resolve("quoted-chart", "*"); err != nil || v.Name != "quoted-chart" {
		t.Errorf("quoted chart: %v, %v", v, err)
	}
	if len(idx.parsed) != 2 {
		t.Errorf("%d charts decoded, want only the 2 asked for", len(idx.parsed))
	}
	for _, bad := range []string{"entries: {}\n", "not: [an index\n"} {
		if _, err := ParseIndex([]byte(bad)); err == nil {
			t.Errorf("ParseIndex(%q) succeeded", bad)
		}
	}
}

// TestIndexMatchesHelm: on a generated index, every chart's versions are
// those Helm's own loader reads, in Helm's order.
func TestIndexMatchesHelm(t *testing.T) {
	raw := testrepo.SyntheticIndex(40, 15)
	path := filepath.Join(t.TempDir(), "index.yaml")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	helmIdx, err := repo.LoadIndexFile(path)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := ParseIndex(raw)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range helmIdx.Entries {
		got, err := idx.Versions(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d versions, Helm reads %d", name, len(got), len(want))
		}
		for i := range want {
			if got[i].Version != want[i].Version || got[i].Digest != want[i].Digest || got[i].URLs[0] != want[i].URLs[0] {
				t.Fatalf("%s[%d]: %s %s, Helm: %s %s", name, i, got[i].Version, got[i].Digest, want[i].Version, want[i].Digest)
			}
		}
		hv, err := helmIdx.Get(name, "*")
		if err != nil {
			t.Fatal(err)
		}
		if v, err := idx.Resolve(name, "*"); err != nil || v.Version != hv.Version {
			t.Fatalf("%s: Resolve = %v, Helm Get = %s", name, v, hv.Version)
		}
	}
}

func TestIndexConcurrentUse(t *testing.T) {
	idx, err := ParseIndex(testrepo.SyntheticIndex(20, 10))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := idx.Resolve(fmt.Sprintf("chart-%03d", i%20), "*"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}

// TestIndexFile: an index scanned from its file, line by line, resolves as
// the same index in memory; lines longer than the read buffer and indexes
// not laid out as Helm writes them (JSON) work too.
func TestIndexFile(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	for name, raw := range map[string][]byte{
		"helm layout": testrepo.SyntheticIndex(40, 5),
		"long lines":  []byte("apiVersion: v1\nentries:\n  web:\n  - name: web\n    version: 1.0.0\n    description: " + long + "\n    urls: [web-1.0.0.tgz]\n  api:\n  - name: api\n    version: 2.0.0\n    urls: [api-2.0.0.tgz]\n"),
		"json":        []byte(`{"apiVersion":"v1","entries":{"web":[{"name":"web","version":"1.0.0","urls":["web-1.0.0.tgz"]}],"api":[{"name":"api","version":"2.0.0","urls":["api-2.0.0.tgz"]}]}}`),
	} {
		path := filepath.Join(t.TempDir(), "index.yaml")
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		fromFile, _, err := scanIndex(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		inMemory, err := ParseIndex(raw)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !slices.Equal(fromFile.Names(), inMemory.Names()) {
			t.Errorf("%s: charts %v from the file, %v in memory", name, fromFile.Names(), inMemory.Names())
		}
		for _, chart := range inMemory.Names() {
			a, errA := fromFile.Resolve(chart, "*")
			b, errB := inMemory.Resolve(chart, "*")
			if errA != nil || errB != nil || a.Version != b.Version || a.Digest != b.Digest || !slices.Equal(a.URLs, b.URLs) {
				t.Errorf("%s: chart %s resolves to %v (%v) from the file, %v (%v) in memory", name, chart, a, errA, b, errB)
			}
		}
	}
}
