//go:build unix

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testenv"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// certManagerChart is the directory of cert-manager's Helm chart in the
// module cache, at the version tools/certmanager pins.
func certManagerChart(t *testing.T) string {
	t.Helper()
	return filepath.Join(moduleDir(t, "certmanager", "github.com/cert-manager/cert-manager"), "deploy", "charts", "cert-manager")
}

// moduleDir is the directory in the module cache of module, at the
// version the module tools/<tools> pins; the test skips (fails under CI)
// without it.
func moduleDir(t *testing.T, tools, module string) string {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module)
	cmd.Dir = filepath.Join(repoRoot, "tools", tools)
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		testenv.SkipUnlessRequired(t, fmt.Sprintf("needs %s in the module cache (go mod download in tools/%s): %v", module, tools, err))
	}
	return strings.TrimSpace(string(out))
}

// contractOperator: an operator and its custom resources in one apply.
// cert-manager (its CRDs among its templates) and a chart of a
// ClusterIssuer and a Certificate that depends on it: from a cluster
// without cert-manager's kinds, the plan succeeds, warning that those
// objects are validated at apply and showing them under the keys their
// CRDs' scope gives (the ClusterIssuer without a namespace); one apply
// installs both; the next plan is empty. cert-manager's webhooks cannot
// answer in the test cluster (its pods do not run), so a post-renderer
// drops their configurations.
//
// The in-process engine also plans a release of a kind no release
// brings: the plan warns, its objects known after apply, and the apply
// fails after waiting for the kind, naming it, with nothing written.
func contractOperator(t *testing.T, env *engineEnv) {
	chartDir := certManagerChart(t)
	repo := testrepo.NewHTTP(t)
	repo.Add(t, testrepo.LoadChart(t, chartDir, "1.21.2"), nil)
	repo.Add(t, testrepo.LoadChart(t, testdataPath("charts", "issuers"), "1.0.0"), nil)
	c := env.c
	// One version each: the plan of a create from a range shows its
	// objects as known after apply.
	versions := map[string]string{"cert-manager": "1.21.2", "issuers": "1.0.0"}
	release := func(name, chart, body string) string {
		return fmt.Sprintf(`
resource "helmrelease_release" %[1]q {
  name      = %[2]q
  namespace = %[3]q
  engine    = %[4]q
  chart     = { name = %[5]q, repository = %[6]q, version = %[10]q, username = %[7]q, password = %[8]q }
  timeout   = "5m"
%[9]s
}
`, strings.ReplaceAll(name, "-", "_"), name, env.ns, env.engine, chart, repo.URL, testrepo.Username, testrepo.Password, body, versions[chart])
	}
	webhookDeleted := func(kind string) string {
		return fmt.Sprintf(`{ patch = yamlencode({ "$patch" = "delete", apiVersion = "admissionregistration.k8s.io/v1", kind = %q, metadata = { name = "cert-manager-webhook" } }) }`, kind)
	}
	// crds.keep (the chart's default) leaves the CRDs on uninstall: the
	// API server may hold a CRD deleted moments after its creation in
	// Terminating ("storage is (re)initializing").
	config := c.hcl(nil) + release("cert-manager", "cert-manager", `  values    = { crds = { enabled = true } }
  post_renderers = [{ kustomize = { patches = [
    `+webhookDeleted("ValidatingWebhookConfiguration")+`,
    `+webhookDeleted("MutatingWebhookConfiguration")+`,
  ] } }]`) + release("issuers", "issuers", `  depends_on = [helmrelease_release.cert_manager]`)
	w := newWorkspace(t, "operator")
	w.write(config)
	t.Cleanup(func() { w.run("destroy", "-auto-approve", "-input=false", "-no-color") })

	issuerKey := "cert-manager.io/v1/ClusterIssuer/" + env.ns + "-selfsigned"
	certificateKey := "cert-manager.io/v1/Certificate/" + env.ns + "/web-tls"
	_, err := discovery.NewDiscoveryClientForConfigOrDie(env.rest).ServerResourcesForGroupVersion("cert-manager.io/v1")
	fresh := apierrors.IsNotFound(err)
	if !fresh {
		// A run before left cert-manager's CRDs (crds.keep): the plan
		// below is the usual one.
		t.Logf("the cluster serves cert-manager.io/v1 already (%v): the plan validates the objects", err)
	}
	res := w.must(0, "plan", "-input=false", "-no-color", "-out=operator.tfplan")
	for _, want := range []string{"Objects validated at apply", "cert-manager.io/v1 ClusterIssuer (" + env.ns + "-selfsigned)", "cert-manager.io/v1 Certificate (web-tls)", "defined by the CRDs of release " + env.ns + "/cert-manager, planned before this one"} {
		if fresh && !has(res.stdout+res.stderr, want) {
			t.Errorf("the plan's output lacks %q:\n%s", want, res.stdout+res.stderr)
		}
	}
	show := w.must(0, "show", "-json", "operator.tfplan")
	var plan struct {
		ResourceChanges []struct {
			Address string `json:"address"`
			Change  struct {
				After map[string]any `json:"after"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal([]byte(show.stdout), &plan); err != nil {
		t.Fatal(err)
	}
	for _, rc := range plan.ResourceChanges {
		if rc.Address != "helmrelease_release.issuers" {
			continue
		}
		resources, _ := rc.Change.After["resources"].(map[string]any)
		for _, key := range []string{issuerKey, certificateKey} {
			if y, _ := resources[key].(string); !strings.Contains(y, "kind: ") {
				t.Errorf("the plan does not show %s as rendered: %v", key, keys(resources))
			}
		}
	}

	w.must(0, "apply", "-auto-approve", "-input=false", "-no-color", "operator.tfplan")
	dyn := dynamic.NewForConfigOrDie(env.rest)
	ctx := context.Background()
	issuers := schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "clusterissuers"}
	if _, err := dyn.Resource(issuers).Get(ctx, env.ns+"-selfsigned", metav1.GetOptions{}); err != nil {
		t.Errorf("ClusterIssuer after the apply: %v", err)
	}
	certificates := schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "certificates"}
	if _, err := dyn.Resource(certificates).Namespace(env.ns).Get(ctx, "web-tls", metav1.GetOptions{}); err != nil {
		t.Errorf("Certificate after the apply: %v", err)
	}
	w.planIsEmpty()

	if env.flux() {
		return
	}
	// A kind no release brings: planned, known after apply; the apply
	// refuses it, writing nothing.
	widgets := newWorkspace(t, "widgets")
	widgets.write(c.hcl(nil) + fmt.Sprintf(`
resource "helmrelease_release" "widgets" {
  name      = "widgets"
  namespace = %q
  chart     = { name = "./widgets" }
}
`, env.ns))
	writeChartDir(t, filepath.Join(widgets.dir, "widgets"), "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w1\n")
	res = widgets.must(0, "plan", "-input=false", "-no-color")
	if !has(res.stdout+res.stderr, "example.com/v1 Widget (w1): no release planned before this one defines it") || !has(res.stdout, "resources") {
		t.Errorf("the plan of an unknown kind:\n%s", res.stdout+res.stderr)
	}
	res = widgets.must(1, "apply", "-auto-approve", "-input=false", "-no-color")
	if !has(res.stderr, "Kinds not served") || !has(res.stderr, "does not serve example.com/v1 Widget") || !has(res.stderr, "depends_on") {
		t.Errorf("the apply of an unknown kind:\n%s", res.stderr)
	}
	if rel := env.st.latest("widgets"); rel != nil || len(widgets.releases()) != 0 {
		t.Errorf("release widgets written: %s", env.st.describe("widgets"))
	}
}

// writeChartDir writes a chart directory whose one template is objects.
func writeChartDir(t *testing.T, dir, objects string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "templates"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte("apiVersion: v2\nname: "+filepath.Base(dir)+"\nversion: 1.0.0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "templates", "objects.yaml"), []byte(objects), 0o600); err != nil {
		t.Fatal(err)
	}
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
