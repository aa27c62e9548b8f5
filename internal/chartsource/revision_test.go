package chartsource

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	chart "helm.sh/helm/v4/pkg/chart/v2"
)

var revisionPattern = regexp.MustCompile(`^0\.3\.0\+[0-9a-f]{12}$`)

// TestLocalChartRevision: a local chart's revision follows its content
// (Revision strategy, the default there), so that every edit that changes
// what it deploys is a new revision, and nothing else is.
func TestLocalChartRevision(t *testing.T) {
	dir := t.TempDir()
	sub := writeChart(t, filepath.Join(dir, "sub"), "db", "1.0.0", nil, map[string]string{
		"templates/cm.yaml": "kind: ConfigMap\n",
	})
	path := writeChart(t, dir, "app", "0.3.0", []*chart.Dependency{{Name: "db", Version: "1.0.0", Repository: "file://../sub/db"}}, map[string]string{
		"templates/cm.yaml": "kind: ConfigMap\nmetadata: {name: a}\n",
		"values.yaml":       "a: 1\n",
		"values-prod.yaml":  "a: 2\n",
		".helmignore":       "notes-*.txt\n",
	})
	repos := NewRepositories(t.TempDir(), 0)
	ctx := context.Background()
	resolve := func(src Source) *Resolved {
		t.Helper()
		src.Name = path
		got, err := repos.Resolve(ctx, src)
		if err != nil {
			t.Fatal(err)
		}
		if got.Chart.Metadata.Version != got.Version {
			t.Errorf("chart metadata version %s, revision %s", got.Chart.Metadata.Version, got.Version)
		}
		return got
	}
	write := func(p, data string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	first := resolve(Source{})
	if !revisionPattern.MatchString(first.Version) {
		t.Fatalf("revision %q, want 0.3.0+<12 hex>", first.Version)
	}
	if again := resolve(Source{}); again.Version != first.Version {
		t.Errorf("same content, revisions %s and %s", first.Version, again.Version)
	}
	if plain := resolve(Source{ReconcileStrategy: StrategyChartVersion}); plain.Version != "0.3.0" {
		t.Errorf("ChartVersion strategy: %s", plain.Version)
	}

	// Ignored files are not content.
	write(filepath.Join(path, "notes-local.txt"), "scratch")
	if got := resolve(Source{}); got.Version != first.Version {
		t.Errorf("a .helmignore'd file changed the revision: %s", got.Version)
	}

	write(filepath.Join(path, "templates", "cm.yaml"), "kind: ConfigMap\nmetadata: {name: b}\n")
	edited := resolve(Source{})
	if edited.Version == first.Version || !revisionPattern.MatchString(edited.Version) {
		t.Errorf("template edit: revision %s", edited.Version)
	}
	if got := edited.RevisionChanges(first.Version); !slices.Equal(got, []string{changeContent}) {
		t.Errorf("changes %q", got)
	}

	// A dependency of the chart is content too.
	write(filepath.Join(sub, "templates", "cm.yaml"), "kind: ConfigMap\nmetadata: {name: db}\n")
	if got := resolve(Source{}); got.Version == edited.Version {
		t.Error("a dependency's edit kept the revision")
	}

	// Values files in use have a part of their own.
	withFiles := resolve(Source{ValuesFiles: []string{"values.yaml", "values-prod.yaml"}})
	write(filepath.Join(path, "values-prod.yaml"), "a: 3\n")
	changed := resolve(Source{ValuesFiles: []string{"values.yaml", "values-prod.yaml"}})
	if got := changed.RevisionChanges(withFiles.Version); !slices.Equal(got, []string{changeValuesFiles}) {
		t.Errorf("values file edit: %s → %s, changes %q", withFiles.Version, changed.Version, got)
	}
	reordered := resolve(Source{ValuesFiles: []string{"values-prod.yaml", "values.yaml"}})
	if got := reordered.RevisionChanges(changed.Version); !slices.Equal(got, []string{changeValuesFiles}) {
		t.Errorf("values files reordered: changes %q", got)
	}
	// With ChartVersion, the values files still make a part: the version
	// alone would not show them.
	plain := resolve(Source{ReconcileStrategy: StrategyChartVersion, ValuesFiles: []string{"values.yaml"}})
	if !revisionPattern.MatchString(plain.Version) {
		t.Errorf("ChartVersion with values files: %s", plain.Version)
	}
}

func TestIgnoreMissingValuesFiles(t *testing.T) {
	path := writeChart(t, t.TempDir(), "app", "0.3.0", nil, map[string]string{"values.yaml": "a: 1\n", "values-eu.yaml": "a: 2\n"})
	repos := NewRepositories(t.TempDir(), 0)
	ctx := context.Background()
	files := []string{"values.yaml", "values-us.yaml", "values-eu.yaml"}
	if _, err := repos.Resolve(ctx, Source{Name: path, ValuesFiles: files}); err == nil {
		t.Fatal("a missing values file was accepted")
	}
	got, err := repos.Resolve(ctx, Source{Name: path, ValuesFiles: files, IgnoreMissingValuesFiles: true})
	if err != nil {
		t.Fatal(err)
	}
	if got.Chart.Values["a"] != float64(2) {
		t.Errorf("values %v", got.Chart.Values)
	}
	// The file appearing later is a new revision.
	if err := os.WriteFile(filepath.Join(path, "values-us.yaml"), []byte("b: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	later, err := repos.Resolve(ctx, Source{Name: path, ValuesFiles: files, IgnoreMissingValuesFiles: true})
	if err != nil {
		t.Fatal(err)
	}
	if later.Version == got.Version {
		t.Error("a values file that appeared kept the revision")
	}
}

func TestRevisionChanges(t *testing.T) {
	r := &Resolved{Version: "1.0.0+aaaaaaaaaaaa.bbbbbbbbbbbb", Parts: []RevisionPart{{changeContent, "aaaaaaaaaaaa"}, {changeValuesFiles, "bbbbbbbbbbbb"}}}
	for _, tc := range []struct {
		from string
		want []string
	}{
		{"1.0.0+aaaaaaaaaaaa.bbbbbbbbbbbb", nil},
		{"0.9.0", []string{`chart version "0.9.0" → "1.0.0+aaaaaaaaaaaa.bbbbbbbbbbbb"`}},
		{"", []string{`chart version "" → "1.0.0+aaaaaaaaaaaa.bbbbbbbbbbbb"`}},
		{"1.0.0+cccccccccccc.bbbbbbbbbbbb", []string{changeContent}},
		{"1.0.0+cccccccccccc.dddddddddddd", []string{changeContent, changeValuesFiles}},
		{"1.0.0", []string{`chart revision "1.0.0" → "1.0.0+aaaaaaaaaaaa.bbbbbbbbbbbb"`}},
	} {
		if got := r.RevisionChanges(tc.from); !slices.Equal(got, tc.want) {
			t.Errorf("from %q: %q, want %q", tc.from, got, tc.want)
		}
	}
}
