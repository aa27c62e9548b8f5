//go:build unix

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testenv"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// TestQueryGeneratesConfig: `terraform query -generate-config-out` writes,
// for releases this provider installed (a repository chart named by a
// version constraint, a local chart), a configuration applied unchanged:
// its plan imports them with no change, and the plan after the import is
// empty. For a release the Helm CLI installed, the generated file says
// what to fill in, and the plan refuses it until then.
func TestQueryGeneratesConfig(t *testing.T) {
	testenv.FullSuiteOnly(t, "terraform query on the newer Terraform, past make test's time budget")
	parallelMatrix(t)
	newer := os.Getenv("HELMRELEASE_TEST_TERRAFORM_NEWER")
	if newer == "" {
		testenv.SkipUnlessRequired(t, "terraform query needs Terraform >= 1.14: set HELMRELEASE_TEST_TERRAFORM_NEWER")
	}
	charts := testdataPath("charts")
	repo := testrepo.NewHTTP(t)
	repo.Password = "" // the generated configuration holds no credentials
	repo.Add(t, testrepo.LoadChart(t, filepath.Join(charts, "svc"), "1.0.0"), nil)
	ns := newNamespace(t)
	cacheDir := t.TempDir()
	provider := fmt.Sprintf(`terraform {
  required_providers {
    helmrelease = { source = "helmrelease/helmrelease" }
  }
}

provider "helmrelease" {
  kubernetes = { config_path = %q }
  cache_dir  = %q
}
`, cluster.Kubeconfig, cacheDir)

	installed := newWorkspace(t, "installed")
	installed.bin = newer
	installed.write(provider + fmt.Sprintf(`
resource "helmrelease_release" "remote" {
  name      = "remote"
  namespace = %[1]q
  chart     = { repository = %[2]q, name = "svc", version = "1.*" }
  values    = { message = "from a repository" }
}

resource "helmrelease_release" "local" {
  name      = "local"
  namespace = %[1]q
  chart     = { name = %[3]q, reconcile_strategy = "ChartVersion" }
  values    = { message = "from a directory" }
}
`, ns, repo.URL, filepath.Join(charts, "svc")))
	installed.apply()

	// Another workspace adopts them from what the query writes.
	generate := func(namespace string) (*workspace, string) {
		w := newWorkspace(t, "query-"+namespace)
		w.bin = newer
		w.write(provider)
		list := fmt.Sprintf("list \"helmrelease_release\" \"found\" {\n  provider         = helmrelease\n  include_resource = true\n  config {\n    namespace = %q\n  }\n}\n", namespace)
		if err := os.WriteFile(filepath.Join(w.dir, "list.tfquery.hcl"), []byte(list), 0o600); err != nil {
			t.Fatal(err)
		}
		w.must(0, "query", "-no-color", "-generate-config-out=generated.tf")
		b, err := os.ReadFile(filepath.Join(w.dir, "generated.tf"))
		if err != nil {
			t.Fatal(err)
		}
		return w, string(b)
	}
	adopter, generated := generate(ns)
	for _, want := range []string{`repository = "` + repo.URL + `"`, `version = "1.*"`, `name = "` + filepath.Join(charts, "svc") + `"`, `reconcile_strategy = "ChartVersion"`} {
		if !strings.Contains(strings.Join(strings.Fields(generated), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("the generated configuration lacks %s:\n%s", want, generated)
		}
	}
	adopter.must(0, "plan", "-input=false", "-no-color", "-out=adopt.tfplan")
	var plan struct {
		ResourceChanges []struct {
			Address string `json:"address"`
			Change  struct {
				Actions   []string        `json:"actions"`
				Importing json.RawMessage `json:"importing"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal([]byte(adopter.must(0, "show", "-json", "adopt.tfplan").stdout), &plan); err != nil {
		t.Fatal(err)
	}
	if len(plan.ResourceChanges) != 2 {
		t.Errorf("the plan has %d resource changes, want the two releases", len(plan.ResourceChanges))
	}
	for _, rc := range plan.ResourceChanges {
		if len(rc.Change.Actions) != 1 || rc.Change.Actions[0] != "no-op" || len(rc.Change.Importing) == 0 {
			t.Errorf("%s: planned %v (importing: %s), want an import with no change", rc.Address, rc.Change.Actions, rc.Change.Importing)
		}
	}
	if t.Failed() {
		t.Fatalf("generated:\n%s\nplan:\n%s", generated, adopter.must(0, "show", "-no-color", "adopt.tfplan").stdout)
	}
	adopter.must(0, "apply", "-auto-approve", "-input=false", "-no-color", "adopt.tfplan")
	adopter.planIsEmpty()
	for _, name := range []string{"remote", "local"} {
		if rev := newStorage(t, ns).latest(name).Version; rev != 1 {
			t.Errorf("release %s at revision %d after the import, want 1", name, rev)
		}
	}

	// A release of the Helm CLI: its source is not recorded.
	cli := ns + "-cli"
	namespaces(t, cli)
	helmInstall(t, filepath.Join(charts, "podinfo"), cli, "podinfo")
	other, generated := generate(cli)
	if !strings.Contains(generated, "FILL IN: the https:// or oci:// repository serving chart podinfo 6.7.1") {
		t.Errorf("the generated configuration of a Helm CLI release does not ask for the repository:\n%s", generated)
	}
	if res := other.must(1, "plan", "-input=false", "-no-color"); !strings.Contains(res.stderr, "chart.repository") {
		t.Errorf("the plan of the unfilled configuration fails without naming chart.repository:\n%s", res)
	}
}
