//go:build unix

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	releasecommon "helm.sh/helm/v4/pkg/release/common"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testcluster"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testenv"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// namedCluster is one of the extra clusters a many-clusters test names.
type namedCluster struct {
	*target
	cluster *testcluster.Cluster
}

// namedClusters starts (or reuses) the extra clusters of names, each an
// API server of its own.
func namedClusters(t *testing.T, names ...string) map[string]namedCluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out := map[string]namedCluster{}
	for _, name := range names {
		k, c, err := clusterFor(ctx, "named-"+name)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = namedCluster{target: k, cluster: c}
	}
	return out
}

// TestManyClusters runs the many-clusters guide's configuration
// (examples/guides/many_clusters) through terraform against clusters of
// its own: each a separate API server that the provider reaches through a
// `clusters` entry whose settings are unknown until the apply that
// "creates" it. The module installs podinfo into every cluster with
// for_each; adding a cluster installs there alone; a cluster that stops
// answering fails only its own release's refresh, with its name, and loses
// nothing from the state; removing a cluster at once is refused at plan
// (its release could not be uninstalled), and the guide's two steps
// (apps = false, then the cluster) uninstall, then remove it.
func TestManyClusters(t *testing.T) {
	testenv.FullSuiteOnly(t, "releases on three clusters of their own, past make test's time budget")
	parallelMatrix(t)
	clusters := namedClusters(t, "east", "west", "north")
	repo := testrepo.NewHTTP(t)
	repo.Password = ""
	repo.Add(t, testrepo.LoadChart(t, testdataPath("charts", "podinfo"), "6.7.1"), nil)

	w := newWorkspace(t, "fleet")
	copyDir(t, filepath.Join(repoRoot, "examples", "guides", "many_clusters"), w.dir)
	fleet := func(apps map[string]bool) {
		t.Helper()
		vars := map[string]any{"chart_repository": repo.URL}
		cs := map[string]any{}
		for name, on := range apps {
			cs[name] = map[string]any{"kubeconfig": clusters[name].kubeconfig, "apps": on}
		}
		vars["clusters"] = cs
		writeJSON(t, filepath.Join(w.dir, "terraform.tfvars.json"), vars)
	}
	// installed checks the podinfo release of each cluster named: revision
	// 1, deployed, with its cluster's message; and none on the others.
	installed := func(names ...string) {
		t.Helper()
		for name, c := range clusters {
			latest := newStorageOn(t, c.rest, "apps").latest("podinfo")
			switch {
			case !slices.Contains(names, name):
				if latest != nil && latest.Info.Status != releasecommon.StatusUninstalled {
					t.Errorf("cluster %s holds release podinfo (revision %d %s), want none", name, latest.Version, latest.Info.Status)
				}
			case latest == nil || latest.Info.Status != releasecommon.StatusDeployed || latest.Version != 1:
				t.Errorf("cluster %s: release podinfo %v, want revision 1 deployed", name, latest)
			default:
				if msg, _, _ := unstructured.NestedString(latest.Config, "ui", "message"); msg != "podinfo on "+name {
					t.Errorf("cluster %s: release podinfo has ui.message %q, want %q", name, msg, "podinfo on "+name)
				}
			}
		}
		if len(names) == 0 {
			return // destroyed: no outputs
		}
		var ids map[string]string
		if err := json.Unmarshal([]byte(w.must(0, "output", "-json", "release_ids").stdout), &ids); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{}
		for _, name := range names {
			want[name] = name + ":apps/podinfo"
		}
		if !maps.Equal(ids, want) {
			t.Errorf("release IDs %v, want %v", ids, want)
		}
	}

	fleet(map[string]bool{"east": true, "west": true})
	w.must(0, "get", "-no-color") // the module, which init would install
	w.must(0, "validate", "-no-color")
	// The clusters are "created" by this apply: their settings are unknown
	// at plan, which only defers looking into them.
	res := w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode")
	if !has(res.stdout, "4 to add") {
		t.Errorf("the first plan does not add two clusters and their releases:\n%s", res.stdout)
	}
	w.apply()
	installed("east", "west")
	w.planIsEmpty()

	// A cluster added: its release alone is installed.
	fleet(map[string]bool{"east": true, "west": true, "north": true})
	res = w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode")
	if !has(res.stdout, "2 to add, 0 to change, 0 to destroy") {
		t.Errorf("adding a cluster does not plan its cluster and release alone:\n%s", res.stdout)
	}
	w.apply()
	installed("east", "west", "north")
	w.planIsEmpty()

	// A cluster that stops answering fails its own release, by name, and
	// the state stands.
	before := string(w.stateBytes())
	if err := clusters["west"].cluster.StopComponent("kube-apiserver"); err != nil {
		t.Fatal(err)
	}
	res = w.must(1, "plan", "-input=false", "-no-color")
	errs := res.stderr
	if !strings.Contains(errs, "west:apps/podinfo") {
		t.Errorf("the plan with cluster west down does not name its release:\n%s", errs)
	}
	for _, ok := range []string{"east:apps/podinfo", "north:apps/podinfo"} {
		if strings.Contains(errs, ok) {
			t.Errorf("the plan with cluster west down reports an error for %s too:\n%s", ok, errs)
		}
	}
	if after := string(w.stateBytes()); after != before {
		t.Error("the state changed while cluster west was down")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := clusters["west"].cluster.StartComponent(ctx, "kube-apiserver"); err != nil {
		t.Fatal(err)
	}
	w.planIsEmpty()

	// A cluster removed with its apps at once: its release could not be
	// uninstalled, which the plan says before anything changes.
	fleet(map[string]bool{"east": true, "west": true})
	res = w.must(1, "plan", "-input=false", "-no-color")
	if !has(res.stderr, "Cluster not configured") || !strings.Contains(res.stderr, "north:apps/podinfo") {
		t.Errorf("removing a cluster and its release at once is not refused at plan with the release named:\n%s", res.stderr)
	}
	// Without the refresh that refuses it first, the plan of the destroy
	// does.
	res = w.must(1, "plan", "-input=false", "-no-color", "-refresh=false")
	if !has(res.stderr, "Cluster not configured") || !strings.Contains(res.stderr, "north:apps/podinfo") {
		t.Errorf("removing a cluster and its release at once is not refused by the plan of the destroy:\n%s", res.stderr)
	}
	// The guide's two steps: the apps go, then the cluster.
	fleet(map[string]bool{"east": true, "west": true, "north": false})
	res = w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode")
	if !has(res.stdout, "0 to add, 0 to change, 1 to destroy") || !strings.Contains(res.stdout, `module.podinfo.helmrelease_release.this["north"] will be destroyed`) {
		t.Errorf("apps = false does not plan the destroy of the cluster's release alone:\n%s", res.stdout)
	}
	w.apply()
	installed("east", "west")
	fleet(map[string]bool{"east": true, "west": true})
	res = w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode")
	if !has(res.stdout, "0 to add, 0 to change, 1 to destroy") || !strings.Contains(res.stdout, `terraform_data.cluster["north"] will be destroyed`) {
		t.Errorf("removing a cluster without apps does not plan its removal alone:\n%s", res.stdout)
	}
	w.apply()
	w.planIsEmpty()
	w.must(0, "destroy", "-auto-approve", "-input=false", "-no-color")
	installed()
}

// TestClusterImport: a release installed by another tool on a named
// cluster is imported by `<cluster>:<storage_namespace>/<release_name>`
// into a resource naming that cluster, and plans no replacement; the same
// ID on another cluster, where the release is not, is refused by name.
func TestClusterImport(t *testing.T) {
	parallelMatrix(t)
	clusters := namedClusters(t, "east", "west")
	podinfo := testdataPath("charts", "podinfo")
	ns := newNamespaceOn(t, clusters["east"].cs)
	newNamespaceOn(t, clusters["west"].cs) // a namespace of another name there
	helmInstallOn(t, clusters["east"].rest, podinfo, ns, "imported")

	repo := testrepo.NewHTTP(t)
	repo.Add(t, testrepo.LoadChart(t, podinfo, "6.7.1"), nil)
	c := config{namespace: ns, repo: repo, cacheDir: t.TempDir(), chart: "podinfo",
		provider: fmt.Sprintf("  clusters = {\n    east = { config_path = %q }\n    west = { config_path = %q }\n  }", clusters["east"].kubeconfig, clusters["west"].kubeconfig)}
	body := func(cluster string) map[string]string {
		return map[string]string{"imported": fmt.Sprintf("  cluster = %q", cluster)}
	}
	w := newWorkspace(t, "import")
	w.write(strings.Replace(c.hcl(body("west")), `version    = "1.0.0"`, `version    = "6.7.1"`, 1))
	res := w.must(1, "import", "-input=false", "-no-color", "helmrelease_release.imported", "west:"+ns+"/imported")
	if !has(res.stderr, "No release imported is installed in namespace "+ns) {
		t.Errorf("importing from a cluster without the release is not refused as not found:\n%s", res.stderr)
	}
	w.write(strings.Replace(c.hcl(body("east")), `version    = "1.0.0"`, `version    = "6.7.1"`, 1))
	w.must(0, "import", "-input=false", "-no-color", "helmrelease_release.imported", "east:"+ns+"/imported")
	if id := w.releaseIDs()["imported"]; id != "east:"+ns+"/imported" {
		t.Fatalf("the imported release's ID is %q, want east:%s/imported", id, ns)
	}
	res = w.run("plan", "-input=false", "-no-color")
	if res.code != 0 || strings.Contains(res.stdout, "must be replaced") || !strings.Contains(res.stdout, " 0 to destroy") {
		t.Errorf("the plan after the import replaces or fails:\n%s", res)
	}
}

// TestFluxNamedCluster: engine = "flux" on a named cluster: the
// HelmRelease is written there (not on the provider's default cluster),
// its helm-controller installs it, and the plan after is empty.
func TestFluxNamedCluster(t *testing.T) {
	withFluxControllers(t, func(t *testing.T, run *fluxRun) {
		c := run.config(t, newRepository(t))
		c.kubernetes = fmt.Sprintf("{ config_path = %q }", cluster.Kubeconfig)
		c.provider = fmt.Sprintf("  clusters = { fleet = { config_path = %q } }", run.kubeconfig)
		w := newWorkspace(t, "flux-named")
		w.write(c.hcl(map[string]string{"app": "  cluster = \"fleet\"\n  engine  = \"flux\"\n  values  = { message = \"on fleet\" }"}))
		w.apply()
		if got := configMessageOn(t, run.cs, run.ns, "app"); got != "on fleet" {
			t.Errorf("message on the named cluster %q, want on fleet", got)
		}
		if _, err := dynamic.NewForConfigOrDie(run.rest).Resource(helmReleases).Namespace(run.ns).Get(context.Background(), "app", metav1.GetOptions{}); err != nil {
			t.Fatalf("no HelmRelease on the named cluster: %v", err)
		}
		if id := w.releaseIDs()["app"]; id != "fleet:"+run.ns+"/app" {
			t.Errorf("ID %q, want fleet:%s/app", id, run.ns)
		}
		w.planIsEmpty()
		w.must(0, "destroy", "-auto-approve", "-input=false", "-no-color")
	})
}

// TestStateBeforeClusters: a state written before releases had a cluster
// (no cluster attribute, an identity of namespace and name alone) plans no
// change, with the Terraform that keeps identities and the one under test.
func TestStateBeforeClusters(t *testing.T) {
	parallelMatrix(t)
	ns := newNamespace(t)
	c := config{namespace: ns, repo: newRepository(t), cacheDir: t.TempDir()}
	w := newWorkspace(t, "before-clusters")
	if newer := os.Getenv("HELMRELEASE_TEST_TERRAFORM_NEWER"); newer != "" {
		w.bin = newer
	}
	w.write(c.hcl(map[string]string{"web": ""}))
	w.apply()
	var st map[string]any
	if err := json.Unmarshal(w.stateBytes(), &st); err != nil {
		t.Fatal(err)
	}
	for _, r := range st["resources"].([]any) {
		for _, inst := range r.(map[string]any)["instances"].([]any) {
			inst := inst.(map[string]any)
			delete(inst["attributes"].(map[string]any), "cluster")
			if id, ok := inst["identity"].(map[string]any); ok {
				delete(id, "cluster")
			}
		}
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.dir, "terraform.tfstate"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	w.planIsEmpty()
	w.bin = ""
	w.planIsEmpty()
	w.must(0, "destroy", "-auto-approve", "-input=false", "-no-color")
}
