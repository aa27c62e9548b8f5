//go:build unix

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

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
	sub := func(version string) *chart.Chart {
		return &chart.Chart{
			Metadata:  &chart.Metadata{APIVersion: "v2", Name: "sub", Version: version},
			Templates: []*common.File{{Name: "templates/cm.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-sub\ndata:\n  version: " + version + "\n")}},
		}
	}
	repo.Add(t, sub("1.0.0"), nil)
	repo.Add(t, sub("1.1.0"), nil)
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
		if err := chartutil.SaveDir(sub("1.0.0"), filepath.Join(w.dir, "app", "charts")); err != nil {
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

	repo.Add(t, sub("1.2.0"), nil)
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
