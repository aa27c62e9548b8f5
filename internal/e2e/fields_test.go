//go:build unix

package e2e

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testcluster"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// addRenamedChart publishes the svc chart under another name in repo, as
// a chart that was renamed upstream.
func addRenamedChart(t *testing.T, repo *testrepo.HTTP, name string) {
	t.Helper()
	c := testrepo.LoadChart(t, testdataPath("charts", "svc"), "1.0.0")
	c.Metadata.Name = name
	repo.Add(t, c, nil)
}

// TestChartNameChange: with the in-process engine, a chart of another
// name uninstalls the release and installs it afresh (Reinstall, the
// default, as helm-controller does), and the plan says so; InPlaceUpdate
// upgrades it in place. The state's history records the action of each
// revision, and drift detection records its Drifted condition.
func TestChartNameChange(t *testing.T) {
	parallelMatrix(t)
	ns := newNamespace(t)
	repo := newRepository(t)
	addRenamedChart(t, repo, "svc-next")
	store := newStorage(t, ns)
	w := newWorkspace(t, "chart-name")
	body := `  values = { message = "one" }
  drift_detection = { mode = "enabled" }`
	c := config{namespace: ns, repo: repo, cacheDir: t.TempDir()}
	w.write(c.hcl(map[string]string{"app": body}))
	w.apply()
	st := w.statuses()["app"]
	if len(st.History) != 1 || st.History[0].Action != "install" || st.History[0].ChartName != "svc" {
		t.Errorf("history after the install: %+v, want revision 1 made by install from svc", st.History)
	}
	if !hasCondition(st, "Drifted", false, "NoDriftDetected") {
		t.Errorf("conditions after the install: %+v, want Drifted false (NoDriftDetected)", st.Conditions)
	}

	c.chart = "svc-next"
	w.write(c.hcl(map[string]string{"app": body}))
	res := w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode")
	if !has(res.stdout, `planned_action      = "reinstall: chart name changed from svc to svc-next; upgrade.chart_name_change_strategy Reinstall uninstalls the release`) {
		t.Errorf("the plan does not say that the new chart name reinstalls the release:\n%s", res.stdout)
	}
	w.apply()
	if h := store.history("app"); len(h) != 1 || h[0].Version != 1 || h[0].Chart.Metadata.Name != "svc-next" {
		t.Errorf("Helm storage after the reinstall: %s, want revision 1 of svc-next alone", store.describe("app"))
	}
	if st := w.statuses()["app"]; len(st.History) != 1 || st.History[0].Action != "install" || st.History[0].ChartName != "svc-next" || st.History[0].Version != 1 {
		t.Errorf("history after the reinstall: %+v, want revision 1 made by install from svc-next", st.History)
	}
	w.planIsEmpty()

	c.chart = "svc"
	inPlace := body + "\n  upgrade = { chart_name_change_strategy = \"InPlaceUpdate\" }"
	w.write(c.hcl(map[string]string{"app": inPlace}))
	res = w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode")
	if !has(res.stdout, "upgrade: chart name changed from svc-next to svc") || has(res.stdout, "reinstall:") {
		t.Errorf("the plan does not upgrade in place:\n%s", res.stdout)
	}
	w.apply()
	if latest := store.latest("app"); latest.Version != 2 || latest.Chart.Metadata.Name != "svc" {
		t.Errorf("Helm storage after the in-place update: %s, want revision 2 of svc", store.describe("app"))
	}
	if st := w.statuses()["app"]; len(st.History) != 2 || st.History[0].Action != "upgrade" || st.History[1].Action != "install" {
		t.Errorf("history after the in-place update: %+v, want revision 2 by upgrade over revision 1 by install", st.History)
	}
	w.planIsEmpty()
}

func hasCondition(st tfStatus, typ string, status bool, reason string) bool {
	for _, c := range st.Conditions {
		if c.Type == typ && c.Status == status && c.Reason == reason {
			return true
		}
	}
	return false
}

// TestFluxNewFields: the HelmRelease fields of helm-controller v1.5 and
// v1.6 through terraform, against each controller version: a controller
// whose CRD lacks a field the configuration needs is refused at plan,
// naming the field and the version that has it; one that has them gets
// them in the HelmRelease and honours them: a values_from literal set
// verbatim, hooks post-rendered with the controller's origin labels as
// the plan showed them, objects written client-side, a dependency that
// holds the release back, a renamed chart reinstalled.
func TestFluxNewFields(t *testing.T) {
	withFluxControllers(t, func(t *testing.T, run *fluxRun) {
		version := run.Versions[testcluster.HelmController]
		minor := 4
		switch {
		case strings.HasPrefix(version, "v1.5."):
			minor = 5
		case strings.HasPrefix(version, "v1.6."):
			minor = 6
		}
		// The test's own calls to the cluster; its terraform runs have
		// their own timeouts.
		ctx := t.Context()
		const literal = `a,b={c}[0]\n"quoted"`
		if _, err := run.cs.CoreV1().ConfigMaps(run.ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "raw"},
			Data:       map[string]string{"message": literal},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		repo := newRepository(t)
		addRenamedChart(t, repo, "svc-next")
		c := run.config(t, repo)
		w := newWorkspace(t, "new-fields")

		// What each controller lacks is refused at plan.
		for _, tc := range []struct {
			since int
			body  string
			field string
		}{
			{5, `install = { server_side_apply = false }`, "install.serverSideApply"},
			{5, `upgrade = { server_side_apply = "disabled" }`, "upgrade.serverSideApply"},
			{5, `rollback = { server_side_apply = "auto" }`, "rollback.serverSideApply"},
			{6, `post_render_strategy = "combined"`, "postRenderStrategy"},
			{6, `upgrade = { chart_name_change_strategy = "InPlaceUpdate" }`, "upgrade.chartNameChangeStrategy"},
			{6, `values_from = [{ kind = "ConfigMap", name = "raw", values_key = "message", target_path = "message", literal = true }]`, "valuesFrom.literal"},
		} {
			if minor >= tc.since {
				continue
			}
			w.write(c.hcl(map[string]string{"app": "  engine = \"flux\"\n  " + tc.body}))
			res := w.must(1, "plan", "-input=false", "-no-color")
			if want := "has no spec." + tc.field + ": its helm-controller is older than v1." + string(rune('0'+tc.since)); !has(res.stderr, want) {
				t.Errorf("%s against helm-controller %s: the plan's error lacks %q:\n%s", tc.body, version, want, res.stderr)
			}
		}

		// What it has is written and honoured.
		var lines []string
		if minor >= 5 {
			lines = append(lines, `install = { server_side_apply = false }`, `upgrade = { server_side_apply = "disabled" }`, `rollback = { server_side_apply = "disabled" }`)
		}
		if minor >= 6 {
			lines = append(lines,
				`post_render_strategy = "combined"`,
				`values_from = [{ kind = "ConfigMap", name = "raw", values_key = "message", target_path = "message", literal = true }]`)
		}
		release := func(message string) string {
			return "  engine = \"flux\"\n  timeout = \"2m\"\n  values = { hook = true, replicas = " + message + " }\n  " + strings.Join(lines, "\n  ")
		}
		w.write(c.hcl(map[string]string{"app": release("1")}))
		w.apply()
		hr, err := dynamic.NewForConfigOrDie(run.rest).Resource(helmReleases).Namespace(run.ns).Get(ctx, "app", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		strategy, _, _ := unstructured.NestedString(hr.Object, "spec", "postRenderStrategy")
		switch {
		case minor >= 6 && strategy != "combined":
			t.Errorf("spec.postRenderStrategy %q, want combined", strategy)
		case minor < 6 && strategy != "":
			t.Errorf("spec.postRenderStrategy %q written to a CRD without it", strategy)
		}
		if minor >= 5 {
			ssa, found, _ := unstructured.NestedBool(hr.Object, "spec", "install", "serverSideApply")
			if !found || ssa {
				t.Errorf("spec.install.serverSideApply %t (found %t), want false", ssa, found)
			}
			for _, action := range []string{"upgrade", "rollback"} {
				if mode, _, _ := unstructured.NestedString(hr.Object, "spec", action, "serverSideApply"); mode != "disabled" {
					t.Errorf("spec.%s.serverSideApply %q, want disabled", action, mode)
				}
			}
			if applied := appliedBy(t, run.cs, run.ns, "app"); applied != "" {
				t.Errorf("install.server_side_apply = false, but the ConfigMap has fields applied server-side by %s", applied)
			}
		}
		if minor >= 6 {
			if got := configMessageOn(t, run.cs, run.ns, "app"); got != literal {
				t.Errorf("message %q, want the literal %q set verbatim", got, literal)
			}
			// The pre-upgrade hook goes through the post-renderers: the
			// plan shows it with the controller's origin labels, and the
			// controller deploys what the plan showed.
			w.write(c.hcl(map[string]string{"app": release("2")}))
			w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=tfplan")
			hook := w.plannedRelease(filepath.Join(w.dir, "tfplan")).PlannedHooks["batch/v1/Job/"+run.ns+"/app-migrate"]
			if !strings.Contains(hook, "helm.toolkit.fluxcd.io/name: app") {
				t.Errorf("the planned pre-upgrade hook lacks the controller's origin labels:\n%s", hook)
			}
			w.must(0, "apply", "-input=false", "-no-color", "tfplan")
			// Deployed as planned: the controller's hook carries them too.
			job, err := run.cs.BatchV1().Jobs(run.ns).Get(ctx, "app-migrate", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if job.Labels["helm.toolkit.fluxcd.io/name"] != "app" {
				t.Errorf("the hook Job the controller ran has labels %v, want its origin labels", job.Labels)
			}
			if st := w.statuses()["app"]; len(st.History) == 0 || st.History[0].Action != "upgrade" {
				t.Errorf("history after the upgrade: %+v, want the newest made by upgrade", st.History)
			}
		}
		w.planIsEmpty()

		// A chart of another name: every controller reinstalls the
		// release, and the plan says so.
		c.chart = "svc-next"
		w.write(c.hcl(map[string]string{"app": release("1")}))
		res := w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode")
		if !has(res.stdout, "reinstall: chart name changed from svc to svc-next") {
			t.Errorf("the plan does not say that the new chart name reinstalls the release:\n%s", res.stdout)
		}
		w.apply()
		if h := newStorageOn(t, run.rest, run.ns).history("app"); len(h) != 1 || h[0].Version != 1 || h[0].Chart.Metadata.Name != "svc-next" {
			t.Errorf("Helm storage after the reinstall: %s, want revision 1 of svc-next alone", newStorageOn(t, run.rest, run.ns).describe("app"))
		}
		w.planIsEmpty()

		// A dependency not ready holds the release back, as the
		// controller says.
		w.write(c.hcl(map[string]string{"app": release("1"), "late": `  engine = "flux"
  timeout = "20s"
  flux = { depends_on = [{ name = "app" }, { name = "missing" }] }`}))
		res = w.must(1, "apply", "-auto-approve", "-input=false", "-no-color")
		if !has(res.stderr, "DependencyNotReady") || !has(res.stderr, "missing") {
			t.Errorf("a release whose dependency does not exist: the error does not say the controller waits for it:\n%s", res.stderr)
		}
		hrLate, err := dynamic.NewForConfigOrDie(run.rest).Resource(helmReleases).Namespace(run.ns).Get(ctx, "late", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if deps, _, _ := unstructured.NestedSlice(hrLate.Object, "spec", "dependsOn"); len(deps) != 2 {
			t.Errorf("spec.dependsOn %v, want app and missing", deps)
		}
	})
}

// appliedBy names the managers that wrote fields of the ConfigMap by
// server-side apply; empty when none did.
func appliedBy(t *testing.T, cs kubernetes.Interface, ns, name string) string {
	t.Helper()
	cm := configMapOn(t, cs, ns, name)
	var out []string
	for _, f := range cm.ManagedFields {
		if f.Operation == metav1.ManagedFieldsOperationApply {
			out = append(out, f.Manager)
		}
	}
	return strings.Join(out, ", ")
}

// TestFluxSharedSource: releases of one namespace that use the same Helm
// repository and login share one HelmRepository, which each owns; the
// source of another interval is another one. Destroying one release keeps
// the source the others use, and they go on upgrading from it;
// destroying the last one removes it and its credentials.
func TestFluxSharedSource(t *testing.T) {
	withFluxControllers(t, func(t *testing.T, run *fluxRun) {
		repo := newRepository(t)
		c := run.config(t, repo)
		w := newWorkspace(t, "shared")
		body := func(message string) string {
			return "  engine = \"flux\"\n  values = { message = \"" + message + "\" }"
		}
		// a's own source and credentials, as an earlier version of the
		// provider wrote them: gone once a uses the shared one.
		dyn := dynamic.NewForConfigOrDie(run.rest)
		labels := map[string]any{"app.kubernetes.io/managed-by": "terraform-provider-helmrelease", "helmrelease.terraform.io/helmrelease": "a"}
		for gvr, obj := range map[schema.GroupVersionResource]map[string]any{
			{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "helmrepositories"}: {"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmRepository",
				"metadata": map[string]any{"name": "a", "labels": labels}, "spec": map[string]any{"url": repo.URL, "interval": "10m", "secretRef": map[string]any{"name": "a-chart-credentials"}}},
			{Version: "v1", Resource: "secrets"}: {"apiVersion": "v1", "kind": "Secret",
				"metadata": map[string]any{"name": "a-chart-credentials", "labels": labels}, "stringData": map[string]any{"username": testrepo.Username, "password": testrepo.Password}},
		} {
			if _, err := dyn.Resource(gvr).Namespace(run.ns).Create(context.Background(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		w.write(c.hcl(map[string]string{"a": body("one"), "b": body("one"), "c": body("one")}))
		w.apply()
		sources := sourcesOf(t, run.rest, run.ns, repo.URL)
		if len(sources) != 2 || !strings.HasPrefix(sources[0], "HelmRepository/") || !strings.HasPrefix(sources[1], "Secret/") {
			t.Fatalf("three releases of one repository and login have the sources %v, want one HelmRepository and its credentials", sources)
		}
		source := strings.TrimPrefix(sources[0], "HelmRepository/")
		if owners := sourceOwners(t, run, source); strings.Join(owners, ",") != "a,b,c" {
			t.Errorf("the shared HelmRepository's owners are %v, want the three HelmReleases", owners)
		}
		_, chart := helmReleaseSource(t, run, "a")
		for _, name := range []string{"a", "b", "c"} {
			if got, gotChart := helmReleaseSource(t, run, name); got != source || gotChart != chart {
				t.Errorf("HelmRelease %s takes its chart from HelmChart %s of %q, want the shared %s of the shared %s", name, gotChart, got, chart, source)
			}
		}
		// One HelmChart for the three releases of the same chart and
		// version: source-controller builds it once.
		if owners := chartOwners(t, run, chart); strings.Join(owners, ",") != "a,b,c" {
			t.Errorf("the shared HelmChart's owners are %v, want the three HelmReleases", owners)
		}

		// One release destroyed: the others keep the source and upgrade.
		w.write(c.hcl(map[string]string{"b": body("two"), "c": body("two")}))
		w.apply()
		if owners := sourceOwners(t, run, source); strings.Join(owners, ",") != "b,c" {
			t.Errorf("after a is destroyed, the shared HelmRepository's owners are %v, want b and c", owners)
		}
		if owners := chartOwners(t, run, chart); strings.Join(owners, ",") != "b,c" {
			t.Errorf("after a is destroyed, the shared HelmChart's owners are %v, want b and c", owners)
		}
		if got := configMessageOn(t, run.cs, run.ns, "b"); got != "two" {
			t.Errorf("b's message %q after its upgrade from the shared source, want two", got)
		}
		w.planIsEmpty()

		// Another interval: a source of its own, which the index is
		// downloaded for at that interval.
		w.write(c.hcl(map[string]string{"b": body("two"), "c": body("two"), "d": body("one") + "\n  flux = { interval = \"1h\" }"}))
		w.apply()
		if got, gotChart := helmReleaseSource(t, run, "d"); got == source || got == "" || gotChart == chart {
			t.Errorf("a release of another interval takes its chart from HelmChart %s of %q, want a source and HelmChart of its own", gotChart, got)
		}
		if owners := sourceOwners(t, run, source); strings.Join(owners, ",") != "b,c" {
			t.Errorf("the shared HelmRepository's owners are %v, want b and c", owners)
		}

		// The last ones destroyed: the source and its credentials go.
		w.must(0, "destroy", "-auto-approve", "-input=false", "-no-color")
		if left := sourcesOf(t, run.rest, run.ns, repo.URL); len(left) > 0 {
			t.Errorf("after the last release using it is destroyed, the shared source is left: %v", left)
		}
		if left := providerObjects(t, run.rest, run.ns); len(left) > 0 {
			t.Errorf("after destroy the provider's objects are left: %v", left)
		}
	})
}

// sourceOwners are the names of the owners of the HelmRepository name,
// sorted.
func sourceOwners(t *testing.T, run *fluxRun, name string) []string {
	t.Helper()
	gvr := schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "helmrepositories"}
	o, err := dynamic.NewForConfigOrDie(run.rest).Resource(gvr).Namespace(run.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range o.GetOwnerReferences() {
		out = append(out, r.Name)
	}
	slices.Sort(out)
	return out
}

// helmReleaseSource names the HelmRepository the HelmRelease takes its
// chart from (through its HelmChart), and the HelmChart.
func helmReleaseSource(t *testing.T, run *fluxRun, name string) (repository, chart string) {
	t.Helper()
	dyn := dynamic.NewForConfigOrDie(run.rest)
	hr, err := dyn.Resource(helmReleases).Namespace(run.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hc := helmChartOf(t, dyn, hr)
	ref, _, _ := unstructured.NestedString(hc.Object, "spec", "sourceRef", "name")
	return ref, hc.GetName()
}

// chartOwners are the names of the owners of the HelmChart name, sorted.
func chartOwners(t *testing.T, run *fluxRun, name string) []string {
	t.Helper()
	o, err := dynamic.NewForConfigOrDie(run.rest).Resource(helmCharts).Namespace(run.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range o.GetOwnerReferences() {
		out = append(out, r.Name)
	}
	slices.Sort(out)
	return out
}
