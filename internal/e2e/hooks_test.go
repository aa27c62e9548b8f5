//go:build unix

package e2e

import (
	"testing"

	releasecommon "helm.sh/helm/v4/pkg/release/common"
)

// TestHookNeverFinishes: a pre-upgrade hook Job whose pod never runs.
// The upgrade's timeout fires, remediation rolls back, the apply fails
// with Helm's last log lines; the release is left deployed at the
// remediated revision, nothing pending, the state saying so.
func TestHookNeverFinishes(t *testing.T) {
	parallelMatrix(t)
	ns := newNamespace(t)
	c := config{namespace: ns, repo: newRepository(t), cacheDir: t.TempDir()}
	w := newWorkspace(t, "hook")
	store := newStorage(t, ns)
	body := func(message, hookStuck string) string {
		// The hook's wait is the one under test; the rollback's must
		// end, however loaded the machine.
		return `  values  = { message = "` + message + `", hook = true, hookStuck = ` + hookStuck + ` }
  timeout = "15s"
  install = { timeout = "5m" }
  upgrade = { remediation = { retries = 1 } }
  rollback = { timeout = "5m" }`
	}
	w.write(c.hcl(map[string]string{"svc": body("v1", "false")}))
	w.apply()

	w.write(c.hcl(map[string]string{"svc": body("v2", "true")}))
	res := w.must(1, "apply", "-auto-approve", "-input=false", "-no-color")
	for _, want := range []string{"Release hook did not complete", "helmrelease_release " + ns + "/svc", "Last Helm log lines", "svc-migrate", "Release remediated", "rollback"} {
		if !has(res.stdout+res.stderr, want) {
			t.Errorf("the apply's output lacks %q:\n%s", want, res)
		}
	}
	store.consistent("svc", w, "svc")
	latest := store.latest("svc")
	if got := configMessage(t, ns, "svc"); got != "v1" {
		t.Errorf("message %q after remediation, want v1 (rolled back): %s", got, store.describe("svc"))
	}
	failed := 0
	for _, r := range store.history("svc") {
		if r.Info.Status == releasecommon.StatusFailed {
			failed++
		}
	}
	if failed != 2 || latest.Info.Description == "" {
		t.Errorf("want two failed upgrades (one retry) and the rollback deployed: %s", store.describe("svc"))
	}

	// Fixed, the next apply upgrades (the new values reset the counters).
	w.write(c.hcl(map[string]string{"svc": body("v3", "false")}))
	w.apply()
	store.consistent("svc", w, "svc")
	if got := configMessage(t, ns, "svc"); got != "v3" {
		t.Errorf("message %q, want v3", got)
	}
	w.planIsEmpty()
}

// TestTestPodNeverFinishes: a Helm test pod that never runs. The test's
// timeout fires, the failed test is remediated by a rollback (tests are
// not ignored; one retry), the apply fails naming the test pod with Helm's last log
// lines; nothing is left pending.
func TestTestPodNeverFinishes(t *testing.T) {
	parallelMatrix(t)
	ns := newNamespace(t)
	c := config{namespace: ns, repo: newRepository(t), cacheDir: t.TempDir()}
	w := newWorkspace(t, "test-pod")
	store := newStorage(t, ns)
	body := func(message, testStuck string) string {
		// The stuck test's wait is the one under test; the upgrade's,
		// the rollback's and a test that runs must end, however loaded
		// the machine.
		testTimeout := "5m"
		if testStuck == "true" {
			testTimeout = "15s"
		}
		return `  values  = { message = "` + message + `", testStuck = ` + testStuck + ` }
  timeout = "5m"
  test    = { enable = true, timeout = "` + testTimeout + `" }
  upgrade = { remediation = { retries = 1 } }`
	}
	w.write(c.hcl(map[string]string{"svc": body("v1", "false")}))
	w.apply()

	w.write(c.hcl(map[string]string{"svc": body("v2", "true")}))
	res := w.must(1, "apply", "-auto-approve", "-input=false", "-no-color")
	for _, want := range []string{"helmrelease_release " + ns + "/svc", "Last Helm log lines", "svc-test"} {
		if !has(res.stdout+res.stderr, want) {
			t.Errorf("the apply's output lacks %q:\n%s", want, res)
		}
	}
	store.consistent("svc", w, "svc")
	if got := configMessage(t, ns, "svc"); got != "v1" {
		t.Errorf("message %q after the failed test, want v1 (rolled back): %s", got, store.describe("svc"))
	}
}
