//go:build unix

package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/v2/loader"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// TestTamperedCache: the chart archives cached in cache_dir replaced by
// charts of the same names and versions whose ConfigMap says "tampered",
// as another job restoring a shared cache could: the next apply deploys
// the published charts (an OCI chart, one verified with cosign, one with
// pgp provenance, a repository's), warns that the cache was repaired,
// and the plan after it is empty.
func TestTamperedCache(t *testing.T) {
	parallelMatrix(t)
	ns := newNamespace(t)
	chartDir := testdataPath("charts", "svc")
	oci := testrepo.NewOCI(t)
	key := testrepo.NewCosignKey(t)
	signer := testrepo.NewSigner(t, "release-team")
	for name, s := range map[string]*testrepo.Signer{"plain": nil, "cosigned": nil, "provenance": signer} {
		c := testrepo.LoadChart(t, chartDir, "1.0.0")
		c.Metadata.Name = name
		oci.Push(t, c, s)
	}
	oci.CosignSign(t, "cosigned", "1.0.0", key)
	c := config{namespace: ns, repo: newRepository(t), cacheDir: t.TempDir()}

	release := func(name, chart, verify, message string) string {
		return fmt.Sprintf(`
resource "helmrelease_release" %[1]q {
  name      = %[1]q
  namespace = %[2]q
  chart = {
    name       = %[3]q
    repository = %[4]q
    version    = "1.0.0"
    username   = %[5]q
    password   = %[6]q
    ca_file    = %[7]q
    %[8]s
  }
  values = { message = %[9]q }
}
`, name, ns, chart, oci.URL, testrepo.Username, testrepo.Password, oci.CAFile, verify, message)
	}
	configFor := func(message string) string {
		return c.hcl(map[string]string{"repository": fmt.Sprintf("values = { message = %q }", message)}) +
			release("oci", "plain", "", message) +
			release("cosign", "cosigned", fmt.Sprintf("verify = { provider = \"cosign\", public_keys = [%q] }", key.PublicPEM), message) +
			release("pgp", "provenance", fmt.Sprintf("verify = { keyring = %q }", signer.Keyring), message)
	}
	w := newWorkspace(t, "cache")
	w.write(configFor("before"))
	w.apply()
	w.write(configFor("after"))

	// Every cached archive replaced by a chart of its name and version
	// that renders "tampered" whatever the values.
	archives, err := filepath.Glob(filepath.Join(c.cacheDir, "*", "*.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	if len(archives) != 4 {
		t.Fatalf("cached archives %v, want the 4 charts'", archives)
	}
	for _, path := range archives {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		cached, err := loader.LoadArchive(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		tampered := testrepo.LoadChart(t, chartDir, "1.0.0")
		tampered.Metadata.Name = cached.Metadata.Name
		for _, tpl := range tampered.Templates {
			if tpl.Name == "templates/configmap.yaml" {
				tpl.Data = []byte(strings.ReplaceAll(string(tpl.Data), "{{ .Values.message | quote }}", `"tampered"`))
			}
		}
		archive, _ := testrepo.Package(t, tampered)
		if err := os.WriteFile(path, archive, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	res := w.apply()
	out := res.stdout + res.stderr
	for _, name := range []string{"repository", "oci", "cosign", "pgp"} {
		if got := configMessage(t, ns, name); got != "after" {
			t.Errorf("release %s deployed message %q, want after: the chart replaced in the cache was used", name, got)
		}
	}
	// Terraform folds warnings of one summary into the first.
	if n := strings.Count(out, "Chart cache entry replaced"); n == 0 || n < 4 && !has(out, fmt.Sprintf("(and %d more similar warnings elsewhere)", 4-n)) {
		t.Errorf("%d warnings that the cache was repaired, want one per release (4):\n%s", n, out)
	}
	w.planIsEmpty()
	w.must(0, "destroy", "-auto-approve", "-input=false", "-no-color")
}

// TestForgedCachedIndex: the repository index kept in cache_dir edited to
// map the version configured to another archive the repository genuinely
// serves (an older chart that renders "planted"), with its digest, while
// the repository answers 304 Not Modified to the validators cached beside
// it: the next apply deploys the chart the repository publishes, because
// the edit breaks the index's proof and the index is downloaded again. The
// cache copied to a second machine (another integrity key) is downloaded
// again too, never revalidated, and plans no change.
func TestForgedCachedIndex(t *testing.T) {
	parallelMatrix(t)
	ns := newNamespace(t)
	planted := testrepo.LoadChart(t, testdataPath("charts", "svc"), "0.9.0")
	for _, tpl := range planted.Templates {
		if tpl.Name == "templates/configmap.yaml" {
			tpl.Data = []byte(strings.ReplaceAll(string(tpl.Data), "{{ .Values.message | quote }}", `"planted"`))
		}
	}
	c := config{namespace: ns, repo: newRepository(t), cacheDir: t.TempDir()}
	c.repo.Add(t, planted, nil)
	w := newWorkspace(t, "forged")
	w.env = append(w.env, "XDG_CONFIG_HOME="+t.TempDir())
	w.write(c.hcl(map[string]string{"svc": `values = { message = "one" }`}))
	w.apply()

	indexes, err := filepath.Glob(filepath.Join(c.cacheDir, "indexes", "*.yaml"))
	if err != nil || len(indexes) != 1 {
		t.Fatalf("cached indexes %v: %v", indexes, err)
	}
	raw, err := os.ReadFile(indexes[0])
	if err != nil {
		t.Fatal(err)
	}
	forged := strings.Replace(string(raw), digestHex(c.repo.File(t, "charts/svc-1.0.0.tgz")), digestHex(c.repo.File(t, "charts/svc-0.9.0.tgz")), 1)
	forged = strings.Replace(forged, "charts/svc-1.0.0.tgz", "charts/svc-0.9.0.tgz", 1)
	if forged == string(raw) || strings.Count(forged, "charts/svc-0.9.0.tgz") != 2 {
		t.Fatalf("the cached index was not forged:\n%s", forged)
	}
	if err := os.WriteFile(indexes[0], []byte(forged), 0o600); err != nil {
		t.Fatal(err)
	}

	downloads := c.repo.IndexDownloads.Load()
	w.write(c.hcl(map[string]string{"svc": `values = { message = "two" }`}))
	res := w.apply()
	if got := configMessage(t, ns, "svc"); got != "two" {
		t.Errorf("message %q after the apply over the forged index, want two: the planted chart was deployed\n%s", got, res)
	}
	if c.repo.IndexDownloads.Load() == downloads {
		t.Error("the forged index was revalidated (304), not downloaded again")
	}
	w.planIsEmpty()

	// A second machine: the cache restored there, under another key.
	second := newWorkspace(t, "second")
	second.env = append(second.env, "XDG_CONFIG_HOME="+t.TempDir())
	for _, name := range []string{"main.tf", "terraform.tfstate"} {
		b, err := os.ReadFile(filepath.Join(w.dir, name))
		if err == nil {
			err = os.WriteFile(filepath.Join(second.dir, name), b, 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	downloads = c.repo.IndexDownloads.Load()
	second.planIsEmpty()
	if c.repo.IndexDownloads.Load() == downloads {
		t.Error("the cache restored on a second machine was revalidated (304), not downloaded again")
	}
}

// digestHex is the SHA-256 of b, in hex, as a repository index names it.
func digestHex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
