package chartsource

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// subchart is chart sub at version, whose ConfigMap says where it came
// from.
func subchart(version, origin string) *chart.Chart {
	return &chart.Chart{
		Metadata:  &chart.Metadata{APIVersion: "v2", Name: "sub", Version: version},
		Templates: []*common.File{{Name: "templates/cm.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sub\ndata:\n  origin: " + origin + "\n")}},
	}
}

// appChart writes chart app, whose Chart.yaml asks for sub ^1.0.0 of
// repository, with lock as its Chart.lock (none when nil) and, when
// vendored, a sub 1.0.0 of its own in charts/. It returns the chart's
// directory.
func appChart(t *testing.T, repository string, lock *chart.Lock, vendored bool) string {
	t.Helper()
	dir := t.TempDir()
	c := &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "app", Version: "0.1.0",
		Dependencies: []*chart.Dependency{{Name: "sub", Version: "^1.0.0", Repository: repository}}}}
	if err := chartutil.SaveDir(c, dir); err != nil {
		t.Fatal(err)
	}
	if vendored {
		if err := chartutil.SaveDir(subchart("1.0.0", "vendored"), filepath.Join(dir, "app", "charts")); err != nil {
			t.Fatal(err)
		}
	}
	if lock != nil {
		b := "generated: \"2026-01-01T00:00:00Z\"\ndigest: sha256:0\ndependencies:\n"
		for _, d := range lock.Dependencies {
			b += "- name: " + d.Name + "\n  version: " + d.Version + "\n  repository: " + d.Repository + "\n"
		}
		if err := os.WriteFile(filepath.Join(dir, "app", "Chart.lock"), []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "app")
}

// TestDependencyUpdate: dependency_update makes charts/ match Chart.yaml
// and Chart.lock as helm dependency update does, from a repository that
// needs a login, which only DependencyAuth gives; without it the copy in
// charts/ wins.
func TestDependencyUpdate(t *testing.T) {
	repo := testrepo.NewHTTP(t)
	for _, v := range []string{"1.0.0", "1.1.0", "2.0.0"} {
		repo.Add(t, subchart(v, "repository-"+v), nil)
	}
	login := func(repository string) Auth {
		if repository == repo.URL {
			return Auth{Username: testrepo.Username, Password: testrepo.Password}
		}
		return Auth{}
	}
	// app: Chart.yaml asks for sub ^1.0.0, charts/ holds a 1.0.0 of its
	// own, Chart.lock as the case writes it.
	app := func(t *testing.T, lock *chart.Lock) string { return appChart(t, repo.URL, lock, true) }
	lock := func(version, repository string) *chart.Lock {
		return &chart.Lock{Dependencies: []*chart.Dependency{{Name: "sub", Version: version, Repository: repository}}}
	}
	for _, tc := range []struct {
		name       string
		lock       *chart.Lock
		update     bool
		auth       func(string) Auth
		wantOrigin string
		err        string
	}{
		{name: "without update, charts/ wins", update: false, wantOrigin: "vendored"},
		{name: "no lock: the newest version the constraint allows", update: true, auth: login, wantOrigin: "repository-1.1.0"},
		{name: "a lock in step: its version, from the repository", lock: lock("1.0.0", repo.URL), update: true, auth: login, wantOrigin: "repository-1.0.0"},
		{name: "a lock the constraint refuses: the newest", lock: lock("2.0.0", repo.URL), update: true, auth: login, wantOrigin: "repository-1.1.0"},
		{name: "a lock of another repository: the newest", lock: lock("1.0.0", "https://charts.example.com"), update: true, auth: login, wantOrigin: "repository-1.1.0"},
		{name: "no login for the repository", update: true, auth: nil, err: "401"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repos := NewRepositories(t.TempDir(), 0)
			got, err := repos.Resolve(context.Background(), Source{Name: app(t, tc.lock), DependencyUpdate: tc.update, DependencyAuth: tc.auth})
			if tc.err != "" {
				if !errors.Is(err, ErrDependency) || !strings.Contains(err.Error(), "dependency sub ^1.0.0") || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want a dependency error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			deps := got.Chart.Dependencies()
			if len(deps) != 1 {
				t.Fatalf("%d subcharts, want one sub", len(deps))
			}
			if origin := string(deps[0].Templates[0].Data); !strings.Contains(origin, "origin: "+tc.wantOrigin) {
				t.Errorf("sub renders\n%s\nwant origin %s", origin, tc.wantOrigin)
			}
			wantVersion := strings.TrimPrefix(tc.wantOrigin, "repository-")
			if tc.wantOrigin == "vendored" {
				wantVersion = "1.0.0"
			}
			if len(got.Dependencies) != 1 || got.Dependencies[0] != (Dependency{Name: "sub", Version: wantVersion}) {
				t.Errorf("Dependencies = %v, want sub %s", got.Dependencies, wantVersion)
			}
		})
	}

	// The revision of a local chart follows its dependencies.
	repos := NewRepositories(t.TempDir(), 0)
	dir := app(t, nil)
	vendored, err := repos.Resolve(context.Background(), Source{Name: dir})
	if err != nil {
		t.Fatal(err)
	}
	updated, err := repos.Resolve(context.Background(), Source{Name: dir, DependencyUpdate: true, DependencyAuth: login})
	if err != nil {
		t.Fatal(err)
	}
	if vendored.Version == updated.Version || !strings.HasPrefix(updated.Version, "0.1.0+") {
		t.Errorf("revisions %s (charts/) and %s (updated): want two revisions of 0.1.0", vendored.Version, updated.Version)
	}

	// A dependency in an OCI registry, with the registry's login.
	reg := testrepo.NewOCI(t)
	reg.Push(t, subchart("1.3.0", "registry-1.3.0"), nil)
	ociDir := t.TempDir()
	oci := &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "app", Version: "0.1.0",
		Dependencies: []*chart.Dependency{{Name: "sub", Version: "^1.0.0", Repository: reg.URL}}}}
	if err := chartutil.SaveDir(oci, ociDir); err != nil {
		t.Fatal(err)
	}
	got, err := repos.Resolve(context.Background(), Source{Name: filepath.Join(ociDir, "app"), DependencyUpdate: true, DependencyAuth: func(repository string) Auth {
		if repository == reg.URL {
			return Auth{Username: testrepo.Username, Password: testrepo.Password, CAFile: reg.CAFile}
		}
		return Auth{}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Dependencies) != 1 || got.Dependencies[0] != (Dependency{Name: "sub", Version: "1.3.0"}) {
		t.Errorf("a dependency from an OCI registry: %v, want sub 1.3.0", got.Dependencies)
	}

	// A packaged chart carries its dependencies: no update.
	if _, err := repos.Resolve(context.Background(), Source{Name: "sub", Repository: repo.URL, Auth: login(repo.URL), DependencyUpdate: true}); !errors.Is(err, ErrDependency) || !strings.Contains(err.Error(), "needs the chart's directory") {
		t.Errorf("a dependency update of a repository's chart: %v", err)
	}
}

// TestDependencyBuild: a dependency charts/ lacks is built as
// source-controller and `helm dependency build` build it: at the version
// Chart.lock pins when the lock is in step with Chart.yaml, else at the
// newest the constraint allows, which the resolve reports as ranged (a
// later resolve may build another).
func TestDependencyBuild(t *testing.T) {
	repo := testrepo.NewHTTP(t)
	for _, v := range []string{"1.0.0", "1.1.0", "2.0.0"} {
		repo.Add(t, subchart(v, "repository-"+v), nil)
	}
	login := func(string) Auth { return Auth{Username: testrepo.Username, Password: testrepo.Password} }
	lock := func(version, repository string) *chart.Lock {
		return &chart.Lock{Dependencies: []*chart.Dependency{{Name: "sub", Version: version, Repository: repository}}}
	}
	for _, tc := range []struct {
		name        string
		lock        *chart.Lock
		vendored    bool
		wantVersion string
		wantRanged  bool
	}{
		{name: "a lock in step: its version", lock: lock("1.0.0", repo.URL), wantVersion: "1.0.0"},
		{name: "no lock: the newest the constraint allows, ranged", wantVersion: "1.1.0", wantRanged: true},
		{name: "a lock the constraint refuses: the newest, ranged", lock: lock("2.0.0", repo.URL), wantVersion: "1.1.0", wantRanged: true},
		{name: "a lock of another repository: the newest, ranged", lock: lock("1.0.0", "https://charts.example.com"), wantVersion: "1.1.0", wantRanged: true},
		{name: "charts/ has it: the copy there, whatever the lock", lock: lock("1.1.0", repo.URL), vendored: true, wantVersion: "1.0.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repos := NewRepositories(t.TempDir(), 0)
			got, err := repos.Resolve(context.Background(), Source{Name: appChart(t, repo.URL, tc.lock, tc.vendored), DependencyAuth: login})
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Dependencies) != 1 || got.Dependencies[0] != (Dependency{Name: "sub", Version: tc.wantVersion}) {
				t.Errorf("Dependencies = %v, want sub %s", got.Dependencies, tc.wantVersion)
			}
			if ranged := slices.Equal(got.RangedDependencies, []string{"sub"}); ranged != tc.wantRanged || (!ranged && len(got.RangedDependencies) > 0) {
				t.Errorf("RangedDependencies = %v, want ranged %v", got.RangedDependencies, tc.wantRanged)
			}
		})
	}
}
