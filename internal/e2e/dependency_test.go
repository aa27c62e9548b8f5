//go:build unix

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// subChart is chart sub at version, whose ConfigMap <release>-sub says
// the version.
func subChart(version string) *chart.Chart {
	return &chart.Chart{
		Metadata:  &chart.Metadata{APIVersion: "v2", Name: "sub", Version: version},
		Templates: []*common.File{{Name: "templates/cm.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-sub\ndata:\n  version: " + version + "\n")}},
	}
}

// TestDependencyUpdate: chart.dependency_update through terraform. A
// local chart holds sub 1.0.0 in charts/ while Chart.yaml asks for ^1.0.0
// of a repository that needs the provider's registries login: the plan of
// the create shows the dependencies as known after apply (ranges nothing
// pins), the apply deploys the repository's newest 1.1.0, the next plan is
// empty, and a 1.2.0 published there is planned as an upgrade, shown in
// planned_dependencies. A constraint no version meets fails the plan,
// naming the dependency, with nothing written.
func TestDependencyUpdate(t *testing.T) {
	parallelMatrix(t)
	ns := newNamespace(t)
	store := newStorage(t, ns)
	repo := testrepo.NewHTTP(t)
	repo.Add(t, subChart("1.0.0"), nil)
	repo.Add(t, subChart("1.1.0"), nil)
	w := newWorkspace(t, "deps")
	writeApp := func(constraint string) {
		t.Helper()
		c := &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "app", Version: "0.1.0",
			Dependencies: []*chart.Dependency{{Name: "sub", Version: constraint, Repository: repo.URL}}}}
		if err := os.RemoveAll(filepath.Join(w.dir, "app")); err != nil {
			t.Fatal(err)
		}
		if err := chartutil.SaveDir(c, w.dir); err != nil {
			t.Fatal(err)
		}
		if err := chartutil.SaveDir(subChart("1.0.0"), filepath.Join(w.dir, "app", "charts")); err != nil {
			t.Fatal(err)
		}
	}
	w.write(fmt.Sprintf(`terraform {
  required_providers {
    helmrelease = { source = "helmrelease/helmrelease" }
  }
}

provider "helmrelease" {
  kubernetes = { config_path = %q }
  cache_dir  = %q
  registries = [{ url = %q, username = %q, password = %q }]
}

resource "helmrelease_release" "app" {
  name      = "app"
  namespace = %q
  chart     = { name = "./app", dependency_update = true }
}
`, cluster.Kubeconfig, t.TempDir(), repo.URL, testrepo.Username, testrepo.Password, ns))

	writeApp("^9.0.0")
	res := w.must(1, "plan", "-input=false", "-no-color")
	for _, want := range []string{"Chart dependency not resolvable", "dependency sub ^9.0.0", repo.URL} {
		if !has(res.stderr, want) {
			t.Errorf("the plan's error lacks %q:\n%s", want, res.stderr)
		}
	}
	w.must(1, "apply", "-auto-approve", "-input=false", "-no-color")
	if store.latest("app") != nil {
		t.Fatalf("an unresolvable dependency wrote the release: %s", store.describe("app"))
	}

	// A create whose dependencies resolve from ranges: nothing pins them
	// for the apply's own plan, so the plan says they are known after
	// apply, and the apply fetches the newest the range allows.
	writeApp("^1.0.0")
	res = w.must(0, "plan", "-input=false", "-no-color")
	if !has(res.stdout, "planned_dependencies = (known after apply)") || !has(res.stdout+res.stderr, "Chart known after apply") {
		t.Errorf("the plan of the create does not show its dependencies as known after apply, saying why:\n%s", res)
	}
	w.apply()
	if got := configMapOn(t, clientset, ns, "app-sub").Data["version"]; got != "1.1.0" {
		t.Errorf("sub's ConfigMap says version %q, want 1.1.0 (fetched, not the 1.0.0 of charts/)", got)
	}
	w.planIsEmpty()

	repo.Add(t, subChart("1.2.0"), nil)
	res = w.must(0, "plan", "-input=false", "-no-color")
	if !has(res.stdout, `"sub" = "1.2.0"`) || !has(res.stdout, "upgrade") {
		t.Errorf("a new version of the dependency is not planned as an upgrade:\n%s", res.stdout)
	}
	w.apply()
	if got := configMapOn(t, clientset, ns, "app-sub").Data["version"]; got != "1.2.0" {
		t.Errorf("sub's ConfigMap says version %q after the upgrade, want 1.2.0", got)
	}
	if !strings.HasPrefix(store.latest("app").Chart.Metadata.Version, "0.1.0+") {
		t.Errorf("release chart version %s, want 0.1.0 with the content digest", store.latest("app").Chart.Metadata.Version)
	}
}

// contractChartLock: a chart from a Git commit whose charts/ lacks its
// dependency builds it as source-controller does, at the version
// Chart.lock pins (1.0.0, where the range allows 1.1.0): the create's
// plan shows it, and a saved plan deploys it after the repository
// published a newer one. Another commit of the chart's version is no
// Helm action, applied with the commit deployed kept. A commit of a new
// version without the lock builds the newest the range allows; its plan
// says the chart is known after apply, naming the dependency and what
// keeps it in the plan. On the Flux engine
// source-controller builds the chart, and the provider checks that it
// deploys what the plan showed.
func contractChartLock(t *testing.T, env *engineEnv) {
	deps := testrepo.NewHTTP(t)
	deps.Password = "" // source-controller fetches a dependency without credentials
	deps.Add(t, subChart("1.0.0"), nil)
	deps.Add(t, subChart("1.1.0"), nil)
	srv := testrepo.NewGit(t)
	lock := fmt.Sprintf("dependencies:\n- name: sub\n  repository: %s\n  version: 1.0.0\ndigest: sha256:0\ngenerated: \"2026-01-01T00:00:00Z\"\n", deps.URL)
	locked := srv.Commit(t, "charts", "main", map[string]string{
		"app/Chart.yaml": fmt.Sprintf("apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n- name: sub\n  version: ^1.0.0\n  repository: %s\n", deps.URL),
		"app/Chart.lock": lock,
	})
	w := env.workspace(t, "lock")
	config := func(commit string) string {
		return fmt.Sprintf(`terraform {
  required_providers {
    helmrelease = { source = "helmrelease/helmrelease" }
  }
}

provider "helmrelease" {
  kubernetes = { config_path = %q }
  cache_dir  = %q
}

resource "helmrelease_release" "lock" {
  name      = "lock"
  namespace = %q
  engine    = %q
  chart = {
    name     = "app"
    git      = { url = %q, ref = { commit = %q } }
    username = %q
    password = %q
  }
}
`, env.kubeconfig, env.c.cacheDir, env.ns, env.engine, srv.HTTPURL("charts"), commit, testrepo.Username, testrepo.Password)
	}
	w.write(config(locked))
	res := w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=tfplan")
	if !has(res.stdout, `"sub" = "1.0.0"`) || has(res.stdout+res.stderr, "Chart known after apply") {
		t.Errorf("the create's plan does not show sub 1.0.0, which Chart.lock pins:\n%s", res)
	}
	deps.Add(t, subChart("1.2.0"), nil)
	w.must(0, "apply", "-input=false", "-no-color", "tfplan")
	if got := configMapOn(t, env.cs, env.ns, "lock-sub").Data["version"]; got != "1.0.0" {
		t.Errorf("sub's ConfigMap says version %q, want 1.0.0, which Chart.lock pins", got)
	}
	w.planIsEmpty()

	// Another commit of the same chart version: no Helm action (the
	// ChartVersion strategy, as HelmChart's), and the apply keeps the
	// commit deployed.
	readme := srv.Commit(t, "charts", "main", map[string]string{"README.md": "charts\n"})
	w.write(config(readme))
	res = w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode")
	if regexp.MustCompile(`planned_action\s+=[^\n]*upgrade`).MatchString(res.stdout) {
		t.Errorf("a commit that leaves the chart's version is planned as an upgrade:\n%s", res.stdout)
	}
	w.apply()
	w.planIsEmpty()

	unlocked := srv.Commit(t, "charts", "main", map[string]string{
		"app/Chart.lock": "",
		"app/Chart.yaml": fmt.Sprintf("apiVersion: v2\nname: app\nversion: 0.2.0\ndependencies:\n- name: sub\n  version: ^1.0.0\n  repository: %s\n", deps.URL),
	})
	w.write(config(unlocked))
	res = w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode")
	for _, want := range []string{"Chart known after apply", "dependencies are built from version ranges", "sub 1.2.0", "Chart.lock"} {
		if !has(res.stdout+res.stderr, want) {
			t.Errorf("the plan of a commit without Chart.lock lacks %q:\n%s", want, res)
		}
	}
	w.apply()
	if got := configMapOn(t, env.cs, env.ns, "lock-sub").Data["version"]; got != "1.2.0" {
		t.Errorf("sub's ConfigMap says version %q without Chart.lock, want the newest 1.2.0", got)
	}
	w.planIsEmpty()
}
