//go:build unix

package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	releasecommon "helm.sh/helm/v4/pkg/release/common"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

var (
	ociRepositories  = schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "ocirepositories"}
	helmRepositories = schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "helmrepositories"}
	helmCharts       = schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "helmcharts"}
	secrets          = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

// chartRefProvider is the provider block of the chart_ref tests.
func chartRefProvider(kubeconfig, cacheDir string) string {
	return fmt.Sprintf(`terraform {
  required_providers {
    helmrelease = { source = "helmrelease/helmrelease" }
  }
}

provider "helmrelease" {
  kubernetes = { config_path = %q }
  cache_dir  = %q
}
`, kubeconfig, cacheDir)
}

// chartRefRelease is a release named name by chart_ref to the object.
func chartRefRelease(name, ns, engine, kind, object string) string {
	return fmt.Sprintf(`
resource "helmrelease_release" %[1]q {
  name      = %[1]q
  namespace = %[2]q
  engine    = %[3]q
  chart_ref = { kind = %[4]q, name = %[5]q }
}
`, name, ns, engine, kind, object)
}

// chartRefConfig is a configuration of releases of the svc chart by
// chart_ref, from the OCIRepository svc-oci and from the HelmChart
// svc-chart, for each engine of engines.
func chartRefConfig(ns, kubeconfig, cacheDir string, engines []string) string {
	config := chartRefProvider(kubeconfig, cacheDir)
	for _, engine := range engines {
		config += chartRefRelease("oci-"+engine, ns, engine, "OCIRepository", "svc-oci") + chartRefRelease("hc-"+engine, ns, engine, "HelmChart", "svc-chart")
	}
	return config
}

// chartRefSources writes, as a team managing Flux sources would, the
// OCIRepository svc-oci (registry login in a Docker config Secret, CA in
// another) and the HelmChart svc-chart of the HelmRepository svc-repo
// (basic auth), each following the newest version.
func chartRefSources(t *testing.T, dyn dynamic.Interface, ns string, oci *testrepo.OCI, repo *testrepo.HTTP) {
	t.Helper()
	objects := append(registrySecrets(t, oci, "oci-login", "oci-ca"), []map[string]any{
		{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "repo-login"}, "stringData": map[string]any{"username": testrepo.Username, "password": testrepo.Password}},
		{"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "OCIRepository", "metadata": map[string]any{"name": "svc-oci"}, "spec": map[string]any{
			"url": oci.URL + "/svc", "interval": "10m", "ref": map[string]any{"semver": "*"},
			"secretRef": map[string]any{"name": "oci-login"}, "certSecretRef": map[string]any{"name": "oci-ca"},
			"layerSelector": map[string]any{"mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip", "operation": "copy"},
		}},
		{"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmRepository", "metadata": map[string]any{"name": "svc-repo"}, "spec": map[string]any{
			"url": repo.URL, "interval": "10m", "secretRef": map[string]any{"name": "repo-login"},
		}},
		{"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmChart", "metadata": map[string]any{"name": "svc-chart"}, "spec": map[string]any{
			"chart": "svc", "version": "*", "interval": "10m", "sourceRef": map[string]any{"kind": "HelmRepository", "name": "svc-repo"},
		}},
	}...)
	createObjects(t, dyn, ns, objects)
}

// registrySecrets are the Secrets of the registry's login (a Docker
// config) and CA, as a team managing Flux sources writes them.
func registrySecrets(t *testing.T, oci *testrepo.OCI, login, ca string) []map[string]any {
	t.Helper()
	caPEM, err := os.ReadFile(oci.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(strings.TrimSuffix(oci.URL, "/charts"), "oci://")
	docker, _ := json.Marshal(map[string]any{"auths": map[string]any{host: map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte(testrepo.Username + ":" + testrepo.Password))}}})
	return []map[string]any{
		{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": login}, "type": "kubernetes.io/dockerconfigjson",
			"stringData": map[string]any{".dockerconfigjson": string(docker)}},
		{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": ca}, "stringData": map[string]any{"ca.crt": string(caPEM)}},
	}
}

// createObjects creates the Secrets and Flux sources objects in ns, as
// a team managing them would.
func createObjects(t *testing.T, dyn dynamic.Interface, ns string, objects []map[string]any) {
	t.Helper()
	for _, o := range objects {
		u := &unstructured.Unstructured{Object: o}
		gvr := secrets
		switch u.GetKind() {
		case "OCIRepository":
			gvr = ociRepositories
		case "HelmRepository":
			gvr = helmRepositories
		case "HelmChart":
			gvr = helmCharts
		case "GitRepository":
			gvr = gitRepositories
		case "Bucket":
			gvr = buckets
		case "HelmRelease":
			gvr = helmReleases
		}
		if _, err := dyn.Resource(gvr).Namespace(ns).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
}

// artifactOf waits until source-controller made the object Ready with an
// artifact revision that satisfies want, and returns the revision; with
// ready false, until it reports Ready False, and returns its message.
func artifactOf(t *testing.T, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns, name string, ready bool, want func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	last := "not read"
	for time.Now().Before(deadline) {
		u, err := dyn.Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rev, _, _ := unstructured.NestedString(u.Object, "status", "artifact", "revision")
		status := readyStatus(u)
		last = fmt.Sprintf("Ready %s, artifact %q", status, rev)
		observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		switch {
		case ready && observed == u.GetGeneration() && status == "True" && want(rev):
			return rev
		case !ready && status == "False":
			// A failed reconcile leaves observedGeneration behind.
			return status
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("%s %s/%s: %s after 2m", gvr.Resource, ns, name, last)
	return ""
}

// requestReconcile asks source-controller to reconcile the object now
// (flux reconcile source …).
func requestReconcile(t *testing.T, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns, name string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":%q}}}`, time.Now().Format(time.RFC3339Nano))
	if _, err := dyn.Resource(gvr).Namespace(ns).Patch(context.Background(), name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// testChartRefLifecycle: charts by chart_ref, from an OCIRepository and a
// HelmChart managed outside Terraform, with both engines, through
// terraform: installed at the objects' artifacts (an OCIRepository's
// version carrying its digest, as helm-controller makes it), an empty
// plan, a new version the objects fetched planned and applied as an
// upgrade, a saved plan whose artifacts moved before its apply refused
// with nothing deployed; a missing object and one that is not Ready refused at plan,
// naming it, with nothing written; destroy leaves the objects.
//
// The in-process engine runs on one helm-controller version's run only,
// the newest: it does not depend on the controller.
func testChartRefLifecycle(t *testing.T, run *fluxRun, inProcess bool) {
	ns, dyn := run.ns, dynamic.NewForConfigOrDie(run.rest)
	engines := []string{"flux"}
	if inProcess {
		engines = append(engines, "helm")
	}
	t.Logf("chart_ref releases with the engines %v", engines)
	var names []string
	for _, e := range engines {
		names = append(names, "oci-"+e, "hc-"+e)
	}
	chartDir := testdataPath("charts", "svc")
	oci, repo := testrepo.NewOCI(t), testrepo.NewHTTP(t)
	oci.Push(t, testrepo.LoadChart(t, chartDir, "1.0.0"), nil)
	repo.Add(t, testrepo.LoadChart(t, chartDir, "1.0.0"), nil)
	chartRefSources(t, dyn, ns, oci, repo)
	ociRevision := artifactOf(t, dyn, ociRepositories, ns, "svc-oci", true, func(r string) bool { return strings.HasPrefix(r, "1.0.0@sha256:") })
	artifactOf(t, dyn, helmCharts, ns, "svc-chart", true, func(r string) bool { return r == "1.0.0" })

	st := newStorageOn(t, run.rest, ns)
	w := newWorkspace(t, "chartref")
	cacheDir := t.TempDir()
	w.write(chartRefConfig(ns, run.kubeconfig, cacheDir, engines))
	out := w.apply()
	if strings.Contains(out.stdout+out.stderr, testrepo.Password) {
		t.Fatalf("the apply shows the repository password:\n%s", out)
	}
	versions := func(ociRevision, helmChartVersion string) {
		t.Helper()
		digest := ociRevision[strings.Index(ociRevision, "sha256:")+len("sha256:"):]
		core, _, _ := strings.Cut(ociRevision, "@")
		revisions := w.sourceRevisions()
		for _, name := range names {
			v := helmChartVersion
			if strings.HasPrefix(name, "oci-") {
				v = core + "+" + digest[:12]
			}
			latest := st.latest(name)
			if latest == nil || latest.Chart == nil || latest.Chart.Metadata.Version != v || string(latest.Info.Status) != "deployed" {
				t.Errorf("release %s: %s, want chart %s deployed", name, st.describe(name), v)
			}
			if got := revisions[name][1]; got != v {
				t.Errorf("release %s: chart_version %q in the state, want %s", name, got, v)
			}
		}
		if got := revisions["oci-"+engines[len(engines)-1]][0]; got != ociRevision {
			t.Errorf("release oci-%s: chart_source_revision %q, want the OCIRepository's artifact %s", engines[len(engines)-1], got, ociRevision)
		}
	}
	versions(ociRevision, "1.0.0")
	for _, name := range []string{"oci-flux", "hc-flux"} {
		hr, err := dyn.Resource(helmReleases).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ref, _, _ := unstructured.NestedStringMap(hr.Object, "spec", "chartRef")
		if want := map[string]string{"oci-flux": "svc-oci", "hc-flux": "svc-chart"}[name]; ref["name"] != want {
			t.Errorf("HelmRelease %s's chartRef %v, want %s", name, ref, want)
		}
		if _, found, _ := unstructured.NestedMap(hr.Object, "spec", "chart"); found {
			t.Errorf("HelmRelease %s has spec.chart beside spec.chartRef", name)
		}
	}
	if left := providerObjects(t, run.rest, ns); len(left) > 0 {
		t.Errorf("chart_ref releases wrote sources or Secrets: %v", left)
	}
	w.planIsEmpty()

	// A new version, fetched by the objects: an upgrade of each release.
	publish := func(version string) string {
		t.Helper()
		oci.Push(t, testrepo.LoadChart(t, chartDir, version), nil)
		repo.Add(t, testrepo.LoadChart(t, chartDir, version), nil)
		for _, o := range []struct {
			gvr  schema.GroupVersionResource
			name string
		}{{ociRepositories, "svc-oci"}, {helmRepositories, "svc-repo"}, {helmCharts, "svc-chart"}} {
			requestReconcile(t, dyn, o.gvr, ns, o.name)
		}
		revision := artifactOf(t, dyn, ociRepositories, ns, "svc-oci", true, func(r string) bool { return strings.HasPrefix(r, version+"@sha256:") })
		artifactOf(t, dyn, helmCharts, ns, "svc-chart", true, func(r string) bool { return r == version })
		return revision
	}
	ociRevision = publish("1.0.1")
	plan := w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode")
	if want := fmt.Sprintf("%d to change", len(names)); !strings.Contains(plan.stdout, want) {
		t.Errorf("the plan after new artifacts does not change the %d releases:\n%s", len(names), plan.stdout)
	}
	w.apply()
	versions(ociRevision, "1.0.1")
	w.planIsEmpty()

	// A saved plan whose objects' artifacts moved on before its apply: an
	// artifact keeps no history the apply could deploy from, so the apply
	// refuses with this provider's diagnostic, and the in-process engine
	// deploys nothing (helm-controller follows the object's artifact on
	// its own, as Flux does); a new plan's apply deploys the new artifacts.
	publish("1.0.2")
	w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=tfplan")
	latestRevision := publish("1.0.3")
	res := w.must(1, "apply", "-input=false", "-no-color", "tfplan")
	if n := strings.Count(res.stderr, "Chart changed since the plan"); n != len(names) || strings.Contains(res.stderr, "inconsistent") {
		t.Errorf("the apply of a plan whose chart_ref artifacts moved does not fail with the provider's own diagnostic for each of the %d releases (%d):\n%s", len(names), n, res.stderr)
	}
	if inProcess {
		for _, name := range []string{"oci-helm", "hc-helm"} {
			if latest := st.latest(name); latest == nil || !strings.HasPrefix(latest.Chart.Metadata.Version, "1.0.1") {
				t.Errorf("release %s: %s, want 1.0.1 still deployed after the refused apply", name, st.describe(name))
			}
		}
	}
	w.apply()
	versions(latestRevision, "1.0.3")
	w.planIsEmpty()

	// Refused at plan, naming the object: missing, and not Ready.
	broken := map[string]any{"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "OCIRepository", "metadata": map[string]any{"name": "broken"}, "spec": map[string]any{
		"url": oci.URL + "/nothing", "interval": "10m", "ref": map[string]any{"tag": "1.0.0"}, "certSecretRef": map[string]any{"name": "oci-ca"}, "secretRef": map[string]any{"name": "oci-login"},
	}}
	if _, err := dyn.Resource(ociRepositories).Namespace(ns).Create(context.Background(), &unstructured.Unstructured{Object: broken}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	why := artifactOf(t, dyn, ociRepositories, ns, "broken", false, nil)
	for _, tc := range []struct{ kind, name, engine, want string }{
		{"HelmChart", "missing", "helm", "HelmChart " + ns + "/missing: it does not exist"},
		{"OCIRepository", "broken", "flux", "OCIRepository " + ns + "/broken: it is not Ready"},
	} {
		bad := newWorkspace(t, "chartref-bad")
		bad.write(chartRefProvider(run.kubeconfig, t.TempDir()) + chartRefRelease("bad", ns, tc.engine, tc.kind, tc.name))
		res := bad.must(1, "plan", "-input=false", "-no-color")
		if msg := strings.Join(strings.Fields(res.stderr), " "); !strings.Contains(msg, "Chart reference not usable") || !strings.Contains(msg, tc.want) {
			t.Errorf("plan of a chart_ref to %s %s: want %q (source-controller says %s):\n%s", tc.kind, tc.name, tc.want, why, res.stderr)
		}
	}
	if st.latest("bad") != nil {
		t.Error("a refused chart_ref left a release")
	}
	if _, err := dyn.Resource(helmReleases).Namespace(ns).Get(context.Background(), "bad", metav1.GetOptions{}); err == nil {
		t.Error("a refused chart_ref left a HelmRelease")
	}

	// A HelmRelease of the HelmChart, written by GitOps, imported: its
	// chart_ref is read back, with no Helm action.
	gitops := map[string]any{"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "metadata": map[string]any{"name": "gitops"}, "spec": map[string]any{
		"interval": "10m", "chartRef": map[string]any{"kind": "HelmChart", "name": "svc-chart"},
	}}
	if _, err := dyn.Resource(helmReleases).Namespace(ns).Create(context.Background(), &unstructured.Unstructured{Object: gitops}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	st.waitFor("gitops", 1, releasecommon.StatusDeployed, 2*time.Minute)
	w.write(chartRefConfig(ns, run.kubeconfig, cacheDir, engines) + `
resource "helmrelease_release" "gitops" {
  name      = "gitops"
  namespace = "` + ns + `"
  engine    = "flux"
  flux      = { interval = "10m" }
  chart_ref = { kind = "HelmChart", name = "svc-chart" }
}

import {
  to = helmrelease_release.gitops
  id = "` + ns + `/gitops"
}
`)
	res = w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode")
	if !has(res.stdout, "1 to import") || has(res.stdout, "planned_action") {
		t.Errorf("the import of a HelmRelease with a chartRef is not an import without a Helm action:\n%s", res.stdout)
	}
	w.apply()
	w.planIsEmpty()
	if latest := st.latest("gitops"); latest == nil || latest.Version != 1 {
		t.Errorf("release gitops after the import's apply: %s, want revision 1 still", st.describe("gitops"))
	}

	w.must(0, "destroy", "-auto-approve", "-input=false", "-no-color")
	for _, name := range append(names, "gitops") {
		if latest := st.latest(name); latest != nil {
			t.Errorf("release %s after destroy: %s", name, st.describe(name))
		}
	}
	for _, o := range []struct {
		gvr  schema.GroupVersionResource
		name string
	}{{ociRepositories, "svc-oci"}, {helmCharts, "svc-chart"}} {
		if _, err := dyn.Resource(o.gvr).Namespace(ns).Get(context.Background(), o.name, metav1.GetOptions{}); err != nil {
			t.Errorf("destroy deleted the chart_ref's %s %s, managed elsewhere: %v", o.gvr.Resource, o.name, err)
		}
	}
}
