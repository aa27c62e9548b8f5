//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOnlyTerraformOnPath: plan, apply and destroy work with a PATH that
// holds terraform and nothing else: the provider needs no helm, kubectl,
// git or shell (CI images, HCP Terraform agents).
func TestOnlyTerraformOnPath(t *testing.T) {
	parallelMatrix(t)
	bin := t.TempDir()
	if err := os.Symlink(terraform, filepath.Join(bin, "terraform")); err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t)
	c := config{namespace: ns, repo: newRepository(t), cacheDir: t.TempDir()}
	w := newWorkspace(t, "path")
	w.env = []string{"PATH=" + bin}
	store := newStorage(t, ns)
	w.write(c.hcl(map[string]string{"svc": `  values = { message = "v1" }
  test   = { enable = true }`}))
	w.apply()
	store.consistent("svc", w, "svc")
	w.planIsEmpty()
	w.write(c.hcl(map[string]string{"svc": `  values = { message = "v2" }
  test   = { enable = true }`}))
	w.apply()
	if got := configMessage(t, ns, "svc"); got != "v2" {
		t.Errorf("message %q, want v2", got)
	}
	w.must(0, "destroy", "-auto-approve", "-input=false", "-no-color")
	if got := store.latest("svc"); got != nil {
		t.Errorf("after destroy: %s", store.describe("svc"))
	}
}
