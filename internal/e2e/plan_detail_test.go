//go:build unix

package e2e

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testenv"
)

// TestPlanDetail: plan_detail = "names" on a public chart (podinfo) through
// the real terraform: plans list the objects an install, drift or upgrade
// changes with digests in place of their YAML, in a fraction of the
// lines; switching between the details runs no Helm action and leaves
// empty plans.
func TestPlanDetail(t *testing.T) {
	testenv.FullSuiteOnly(t, "plan_detail's modes on a public chart, past make test's time budget")
	parallelMatrix(t)
	chart := filepath.Join(sharedCharts(t), "podinfo")
	ns := newNamespace(t)
	w := newWorkspace(t, "detail")
	st := newStorage(t, ns)
	config := func(values, detail string) string {
		c := publicChartConfig(ns, chart, "podinfo", values)
		if detail != "" {
			c = strings.Replace(c, "  drift_detection", "  plan_detail     = \""+detail+"\"\n  drift_detection", 1)
		}
		return c
	}
	digests := func(what string, objects map[string]string) {
		t.Helper()
		if len(objects) == 0 {
			t.Errorf("%s: no objects", what)
		}
		for k, v := range objects {
			if !strings.HasPrefix(v, "sha256:") || len(v) != len("sha256:")+64 {
				t.Errorf("%s: %s shows %.80q, want its digest", what, k, v)
			}
		}
	}
	lines := func(planFile string) int {
		t.Helper()
		return strings.Count(w.must(0, "show", "-no-color", planFile).stdout, "\n")
	}
	deployment := "apps/v1/Deployment/" + ns + "/podinfo"

	// A full plan of the install, for its length.
	w.write(config(`{ replicaCount = 2 }`, ""))
	w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=full.plan")
	fullLines := lines("full.plan")

	w.write(config(`{ replicaCount = 2 }`, "names"))
	w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=install.plan")
	install := w.plannedRelease("install.plan")
	digests("the install plan", install.After)
	if !slices.Contains(install.Known(), deployment) {
		t.Errorf("the install plan does not name %s: %v", deployment, install.Known())
	}
	namesLines := lines("install.plan")
	t.Logf("podinfo's install plan: %d lines in full, %d with names", fullLines, namesLines)
	if namesLines*2 > fullLines {
		t.Errorf("the install plan with names has %d lines, the full one %d: want less than half", namesLines, fullLines)
	}
	w.must(0, "apply", "-auto-approve", "-input=false", "-no-color", "install.plan")
	w.planIsEmpty()
	revision := st.latest("podinfo").Version

	scaleBy(t, ns, "deployments", "podinfo", 3)
	w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=drift.plan")
	drift := w.plannedRelease("drift.plan")
	if got := drift.Changed(); !slices.Equal(got, []string{deployment}) {
		t.Errorf("the drift plan changes %v, want only %s", got, deployment)
	}
	digests("the drift plan", drift.After)
	w.must(0, "apply", "-auto-approve", "-input=false", "-no-color", "drift.plan")
	if got := replicas(t, ns, "deployments", "podinfo"); got != 2 {
		t.Errorf("%d replicas after the drift was corrected, want 2", got)
	}
	w.planIsEmpty()

	w.write(config(`{ replicaCount = 2, ui = { message = "upgraded" } }`, "names"))
	w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=upgrade.plan")
	upgrade := w.plannedRelease("upgrade.plan")
	if got := upgrade.Changed(); !slices.Equal(got, []string{deployment}) {
		t.Errorf("the upgrade plan changes %v, want only %s", got, deployment)
	}
	digests("the upgrade plan", upgrade.After)
	w.must(0, "apply", "-auto-approve", "-input=false", "-no-color", "upgrade.plan")
	w.planIsEmpty()
	revision++
	if got := st.latest("podinfo").Version; got != revision {
		t.Fatalf("revision %d after the upgrade, want %d", got, revision)
	}

	// Back to full: no Helm action; the objects are shown after the apply.
	w.write(config(`{ replicaCount = 2, ui = { message = "upgraded" } }`, "full"))
	w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=full-again.plan")
	if p := w.plannedRelease("full-again.plan"); p.PlannedAction != nil || !p.AllUnknown {
		t.Errorf("switching to full: planned_action %v, resources unknown whole %v; want no Helm action and the objects after apply", p.PlannedAction, p.AllUnknown)
	}
	w.must(0, "apply", "-auto-approve", "-input=false", "-no-color", "full-again.plan")
	w.planIsEmpty()
	if shown := w.stateResources()[deployment]; !strings.Contains(shown, "kind: Deployment") || !strings.Contains(shown, "upgraded") {
		t.Errorf("with plan_detail = full again, the state shows %s as %.200q, want its YAML", deployment, shown)
	}
	// And to names again: no Helm action either.
	w.write(config(`{ replicaCount = 2, ui = { message = "upgraded" } }`, "names"))
	w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=names-again.plan")
	names := w.plannedRelease("names-again.plan")
	if names.PlannedAction != nil {
		t.Errorf("switching to names plans a Helm action: %s", *names.PlannedAction)
	}
	digests("switching to names", names.After)
	w.must(0, "apply", "-auto-approve", "-input=false", "-no-color", "names-again.plan")
	w.planIsEmpty()
	if got := st.latest("podinfo").Version; got != revision {
		t.Errorf("revision %d after switching plan_detail twice, want %d (no Helm action)", got, revision)
	}

	// changes: digests, and planned_changes lists the fields a drift
	// correction and an upgrade change.
	w.write(config(`{ replicaCount = 2, ui = { message = "upgraded" } }`, "changes"))
	w.apply()
	w.planIsEmpty()
	scaleBy(t, ns, "deployments", "podinfo", 3)
	w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=drift-changes.plan")
	if got, want := w.plannedRelease("drift-changes.plan").PlannedChanges, map[string]string{deployment + " /spec/replicas": "3 → 2"}; !maps.Equal(got, want) {
		t.Errorf("the drift plan's planned_changes: %v, want %v", got, want)
	}
	w.must(0, "apply", "-auto-approve", "-input=false", "-no-color", "drift-changes.plan")
	w.planIsEmpty()
	w.write(config(`{ replicaCount = 2, ui = { message = "changed again" } }`, "changes"))
	w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=upgrade-changes.plan")
	changes := w.plannedRelease("upgrade-changes.plan").PlannedChanges
	for k, v := range changes {
		if !strings.HasPrefix(k, deployment+" /spec/template/") || !strings.Contains(v, `"upgraded" → "changed again"`) {
			t.Errorf("the upgrade's planned_changes has %s = %s, want only the message of %s", k, v, deployment)
		}
	}
	if len(changes) != 1 {
		t.Errorf("the upgrade's planned_changes: %v, want the one changed field", changes)
	}
	w.must(0, "apply", "-auto-approve", "-input=false", "-no-color", "upgrade-changes.plan")
	w.planIsEmpty()
}
