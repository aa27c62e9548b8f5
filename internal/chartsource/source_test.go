package chartsource

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
)

// writeChart writes a chart directory with extra files.
func writeChart(t *testing.T, dir, name, version string, deps []*chart.Dependency, files map[string]string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	c := &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: name, Version: version, Dependencies: deps}}
	if err := chartutil.SaveDir(c, dir); err != nil {
		t.Fatal(err)
	}
	for f, data := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(path, f)), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(path, f), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func TestResolveLocalAndValuesFiles(t *testing.T) {
	dir := t.TempDir()
	path := writeChart(t, dir, "app", "1.2.3", nil, map[string]string{
		"values.yaml":      "a: default\nb: default\nnested: {one: 1, two: 1}\n",
		"values-prod.yaml": "b: prod\nnested: {two: 2}\n",
		"values-eu.yaml":   "nested: {three: 3}\n",
	})
	repos := NewRepositories(t.TempDir(), 0)
	ctx := context.Background()
	got, err := repos.Resolve(ctx, Source{Name: path, Version: "~1.2", ValuesFiles: []string{"values.yaml", "values-prod.yaml", "values-eu.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	v := got.Chart.Values
	nested := v["nested"].(map[string]any)
	if v["a"] != "default" || v["b"] != "prod" || nested["one"] != float64(1) || nested["two"] != float64(2) || nested["three"] != float64(3) {
		t.Errorf("merged values %v", v)
	}
	only, err := repos.Resolve(ctx, Source{Name: path, ValuesFiles: []string{"values-prod.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := only.Chart.Values["a"]; ok {
		t.Errorf("values.yaml used though not listed: %v", only.Chart.Values)
	}
	if _, err := repos.Resolve(ctx, Source{Name: path, ValuesFiles: []string{"values-absent.yaml"}}); err == nil || !strings.Contains(err.Error(), `no values file "values-absent.yaml"`) {
		t.Errorf("missing values file: %v", err)
	}
	if _, err := repos.Resolve(ctx, Source{Name: path, Version: ">=2"}); !errors.Is(err, ErrNoMatchingVersion) {
		t.Errorf("version mismatch: %v", err)
	}
	if _, err := repos.Resolve(ctx, Source{Name: filepath.Join(dir, "absent")}); err == nil || !strings.Contains(err.Error(), "local chart") {
		t.Errorf("missing chart: %v", err)
	}
	if _, err := repos.Resolve(ctx, Source{Name: "x", Repository: "ftp://example.com"}); err == nil || !strings.Contains(err.Error(), "use https://") {
		t.Errorf("unsupported repository: %v", err)
	}
}

func TestResolveDependencies(t *testing.T) {
	s := newRepoServer(t, false, relative) // serves chart web 1.2.3
	dir := t.TempDir()
	writeChart(t, dir, "lib", "0.1.0", nil, nil)
	parent := writeChart(t, dir, "parent", "1.0.0", []*chart.Dependency{
		{Name: "web", Version: "~1.2", Repository: s.URL},
		{Name: "lib", Version: "0.1.x", Repository: "file://../lib"},
	}, nil)
	repos := NewRepositories(t.TempDir(), 0)
	got, err := repos.Resolve(context.Background(), Source{Name: parent})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range got.Chart.Dependencies() {
		names = append(names, d.Name()+"@"+d.Metadata.Version)
	}
	if strings.Join(names, ",") != "web@1.2.3,lib@0.1.0" {
		t.Errorf("dependencies %v", names)
	}

	broken := writeChart(t, dir, "broken", "1.0.0", []*chart.Dependency{{Name: "web", Version: ">=9", Repository: s.URL}}, nil)
	_, err = repos.Resolve(context.Background(), Source{Name: broken})
	if err == nil || !strings.Contains(err.Error(), `dependency web >=9 from "`+s.URL+`" cannot be resolved`) || !errors.Is(err, ErrNoMatchingVersion) {
		t.Errorf("unresolvable dependency: %v", err)
	}
}

func TestResolveHTTPAndOCI(t *testing.T) {
	ctx := context.Background()
	s := newRepoServer(t, false, relative)
	repos := NewRepositories(t.TempDir(), 0)
	got, err := repos.Resolve(ctx, Source{Name: "web", Repository: s.URL, Version: "1.x"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != "1.2.3" || got.AppVersion != "4.5" || got.Digest != digestOf(s.archive) || len(got.Versions) != 1 {
		t.Errorf("resolved %+v", got)
	}
	// The version alone, from the index: no chart, the same answer.
	version, err := repos.Version(ctx, Source{Name: "web", Repository: s.URL, Version: "1.x"})
	if err != nil {
		t.Fatal(err)
	}
	if version.Chart != nil || version.Version != got.Version || version.AppVersion != got.AppVersion || version.Digest != got.Digest {
		t.Errorf("version only: %+v, want %+v without the chart", version, got)
	}
	reg := newOCIRegistry(t)
	reg.push(t, "3.0.0", "oci")
	oci, err := repos.Resolve(ctx, Source{Name: "web", Repository: reg.url, Auth: reg.auth})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(oci.Version, "3.0.0+") || !strings.HasPrefix(oci.Digest, "sha256:") || oci.Chart.Metadata.Version != oci.Version {
		t.Errorf("OCI resolved %s %s", oci.Version, oci.Digest)
	}
}
