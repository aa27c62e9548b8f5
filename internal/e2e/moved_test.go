//go:build unix

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/hashicorp/go-version"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testenv"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// TestMovedFromHelmProvider: releases HashiCorp's helm provider installed,
// one from a repository and one from a local chart, move into
// helmrelease_release with the configuration the migration guide shows
// (examples/guides/moving_from_helm_release), and a third with the helm
// provider's options (set, set_sensitive, atomic, timeout, max_history,
// postrender) with their counterparts: the plan of the move changes nothing, the apply
// neither reinstalls nor upgrades, the next plan is empty, and a values
// change then upgrades the release, client-side as it was installed.
func TestMovedFromHelmProvider(t *testing.T) {
	testenv.FullSuiteOnly(t, "moved blocks from HashiCorp's helm provider, past make test's time budget")
	parallelMatrix(t)
	podinfo := testdataPath("charts", "podinfo")

	repo := testrepo.NewHTTP(t)
	repo.Password = ""
	repo.Add(t, testrepo.LoadChart(t, podinfo, "6.7.1"), nil)
	ns := newNamespace(t)
	store := newStorage(t, ns)
	revision := func(name string) int {
		if r := store.latest(name); r != nil {
			return r.Version
		}
		return 0
	}

	w := helmProviderWorkspace(t, "moved", cluster.Kubeconfig)
	if err := os.MkdirAll(filepath.Join(w.dir, "charts", "app"), 0o750); err != nil {
		t.Fatal(err)
	}
	copyDir(t, podinfo, filepath.Join(w.dir, "charts", "app"))
	vars := []string{"-var", "chart_repository=" + repo.URL}

	// Installed by the helm provider, as the guide's comment says.
	w.write(fmt.Sprintf(`terraform {
  required_providers {
    helm = { source = "hashicorp/helm", version = "3.1.2" }
  }
}

provider "helm" {
  kubernetes = { config_path = %[1]q }
}

variable "chart_repository" {
  type = string
}

resource "helm_release" "podinfo" {
  name       = "podinfo"
  namespace  = %[2]q
  repository = var.chart_repository
  chart      = "podinfo"
  version    = "6.7.1"
  values     = [yamlencode({ replicaCount = 2 })]
}

resource "helm_release" "app" {
  name      = "app"
  namespace = %[2]q
  chart     = "./charts/app"
}

resource "helm_release" "options" {
  name          = "options"
  namespace     = %[2]q
  repository    = var.chart_repository
  chart         = "podinfo"
  version       = "6.7.1"
  values        = [yamlencode({ replicaCount = 2 })]
  set           = [{ name = "ui.message", value = "from set" }]
  set_sensitive = [{ name = "ui.token", value = "moved-secret" }]
  atomic        = true
  timeout       = 120
  max_history   = 3
  postrender    = { binary_path = "sed", args = ["-e", "s/replicas: 2/replicas: 3/"] }
}
`, cluster.Kubeconfig, ns))
	w.must(0, "init", "-input=false", "-no-color")
	w.must(0, append([]string{"apply", "-auto-approve", "-input=false", "-no-color"}, vars...)...)
	releases := []string{"podinfo", "app", "options"}
	for _, name := range releases {
		if rev := revision(name); rev != 1 {
			t.Fatalf("release %s at revision %d after the helm provider's install, want 1", name, rev)
		}
	}

	// The guide's configuration, in the test's namespace.
	if err := os.Remove(filepath.Join(w.dir, "main.tf")); err != nil {
		t.Fatal(err)
	}
	guide := filepath.Join(repoRoot, "examples", "guides", "moving_from_helm_release")
	for _, name := range []string{"main.tf", "terraform.tf"} {
		b, err := os.ReadFile(filepath.Join(guide, name))
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(string(b), `namespace = "apps"`, fmt.Sprintf("namespace = %q", ns))
		if err := os.WriteFile(filepath.Join(w.dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The helm provider's options, each said again as its counterpart
	// (the guide's table).
	options := func(message string) string {
		return fmt.Sprintf(`moved {
  from = helm_release.options
  to   = helmrelease_release.options
}

resource "helmrelease_release" "options" {
  name             = "options"
  namespace        = %q
  chart            = { repository = var.chart_repository, name = "podinfo", version = "6.7.1" }
  values           = { replicaCount = 2, ui = { message = %q } }
  sensitive_values = jsonencode({ ui = { token = "moved-secret" } })
  install          = { remediation = { remediate_last_failure = true } }
  upgrade          = { remediation = { remediate_last_failure = true } }
  timeout          = "2m0s"
  max_history      = 3
  post_renderers   = [{ exec = { command = "sed", args = ["-e", "s/replicas: 2/replicas: 3/"] } }]
}
`, ns, message)
	}
	writeOptions := func(message string) {
		if err := os.WriteFile(filepath.Join(w.dir, "options.tf"), []byte(options(message)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeOptions("from set")
	// No second init: the helm provider is installed and locked already,
	// and init refuses a provider that dev_overrides replaces.
	w.must(0, append([]string{"plan", "-input=false", "-no-color", "-out=moved.tfplan"}, vars...)...)
	show := w.must(0, "show", "-json", "-no-color", "moved.tfplan")
	var plan struct {
		ResourceChanges []struct {
			Address         string `json:"address"`
			PreviousAddress string `json:"previous_address"`
			Change          struct {
				Actions []string `json:"actions"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal([]byte(show.stdout), &plan); err != nil {
		t.Fatalf("terraform show -json: %v", err)
	}
	moved := map[string]bool{}
	for _, rc := range plan.ResourceChanges {
		if len(rc.Change.Actions) != 1 || rc.Change.Actions[0] != "no-op" {
			t.Errorf("%s (from %s): planned %v, want no-op", rc.Address, rc.PreviousAddress, rc.Change.Actions)
		}
		moved[rc.PreviousAddress+" -> "+rc.Address] = true
	}
	for _, want := range []string{"helm_release.podinfo -> helmrelease_release.podinfo", "helm_release.app -> helmrelease_release.app", "helm_release.options -> helmrelease_release.options"} {
		if !moved[want] {
			t.Errorf("the plan does not move %s: %v", want, moved)
		}
	}
	if t.Failed() {
		t.Fatalf("the plan of the move:\n%s", w.must(0, "show", "-no-color", "moved.tfplan").stdout)
	}
	w.must(0, "apply", "-auto-approve", "-input=false", "-no-color", "moved.tfplan")
	for _, name := range releases {
		if rev := revision(name); rev != 1 {
			t.Errorf("release %s at revision %d after the move, want 1 (neither reinstalled nor upgraded)", name, rev)
		}
	}
	w.must(0, append([]string{"plan", "-input=false", "-no-color", "-detailed-exitcode"}, vars...)...)

	// Managed from now on: a values change upgrades the release.
	writeOptions("from helmrelease")
	w.must(0, append([]string{"apply", "-auto-approve", "-input=false", "-no-color"}, vars...)...)
	if rev := revision("options"); rev != 2 {
		t.Errorf("release options at revision %d after a values change, want 2", rev)
	}
	if got := store.latest("options").Config["ui"]; !reflect.DeepEqual(got, map[string]any{"message": "from helmrelease", "token": "moved-secret"}) {
		t.Errorf("release options upgraded with ui values %v", got)
	}
	// postrender moved as a command post-renderer: the upgrade ran it.
	if !strings.Contains(store.latest("options").Manifest, "replicas: 3") {
		t.Errorf("release options upgraded without the post-renderer command the helm provider ran:\n%s", store.latest("options").Manifest)
	}
	// The helm provider (Helm 3) wrote client-side: the upgrade too.
	if got := store.latest("options").ApplyMethod; got != "csa" {
		t.Errorf("release options upgraded with apply_method %q, want csa (as the helm provider installed it)", got)
	}
	w.must(0, append([]string{"plan", "-input=false", "-no-color", "-detailed-exitcode"}, vars...)...)
	w.must(0, append([]string{"destroy", "-auto-approve", "-input=false", "-no-color"}, vars...)...)
}

// helmProviderWorkspace is a workspace whose Terraform (>= 1.8) installs
// HashiCorp's helm provider v3.1.2 from a filesystem mirror, as `terraform
// init` does, and this build of helmrelease by dev_overrides, against the
// cluster of kubeconfig. It skips without them (fails in CI, unless
// allowed).
func helmProviderWorkspace(t *testing.T, name, kubeconfig string) *workspace {
	t.Helper()
	helmProvider := os.Getenv("HELMRELEASE_TEST_HELM_PROVIDER")
	if helmProvider == "" {
		testenv.SkipUnlessRequired(t, "needs HashiCorp's helm provider: set HELMRELEASE_TEST_HELM_PROVIDER to its binary (v3.x)")
	}
	bin := movedTerraform(t)
	mirror := t.TempDir()
	dir := filepath.Join(mirror, "registry.terraform.io", "hashicorp", "helm", "3.1.2", runtime.GOOS+"_"+runtime.GOARCH)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(helmProvider, filepath.Join(dir, "terraform-provider-helm_v3.1.2")); err != nil {
		t.Fatal(err)
	}
	overrides, err := os.ReadFile(cliConfig)
	if err != nil {
		t.Fatal(err)
	}
	rc := filepath.Join(t.TempDir(), "terraformrc")
	config := strings.Replace(string(overrides), "  direct {}\n", fmt.Sprintf("  filesystem_mirror {\n    path = %q\n  }\n", mirror), 1)
	if err := os.WriteFile(rc, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	w := newWorkspace(t, name)
	w.bin, w.cliConfig = bin, rc
	w.env = []string{"KUBECONFIG=" + kubeconfig}
	return w
}

// movedTerraform is a Terraform that moves resources across types (≥ 1.8):
// the one on PATH, else the newer one.
func movedTerraform(t *testing.T) string {
	t.Helper()
	for _, bin := range []string{terraform, os.Getenv("HELMRELEASE_TEST_TERRAFORM_NEWER")} {
		if bin == "" {
			continue
		}
		out, err := exec.Command(bin, "version", "-json").Output()
		if err != nil {
			t.Fatalf("%s version: %v", bin, err)
		}
		var v struct {
			Version string `json:"terraform_version"`
		}
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatal(err)
		}
		if version.Must(version.NewVersion(v.Version)).GreaterThanOrEqual(version.Must(version.NewVersion("1.8.0"))) {
			return bin
		}
	}
	testenv.SkipUnlessRequired(t, "moved blocks across resource types need Terraform >= 1.8: set HELMRELEASE_TEST_TERRAFORM_NEWER")
	return ""
}
