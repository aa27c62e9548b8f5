//go:build unix

package e2e

import (
	"testing"

	releasecommon "helm.sh/helm/v4/pkg/release/common"
)

// TestStalledReleaseSaysWhatMovesIt: an upgrade that times out (a pod no
// node takes) under the default strategy and no retries stalls the
// release: the next plan is empty, and its warning names the settings that
// would move it, each with the value it needs. Setting one of them
// (upgrade.strategy RetryOnFailure) plans the upgrade again, which is
// tried without a rollback, and planned again after it fails.
func TestStalledReleaseSaysWhatMovesIt(t *testing.T) {
	parallelMatrix(t)
	ns := newNamespace(t)
	c := config{namespace: ns, repo: newRepository(t), cacheDir: t.TempDir()}
	w := newWorkspace(t, "retry")
	store := newStorage(t, ns)
	body := func(stuck, extra string) string {
		// The install's wait is not the one under test: it gets the
		// default timeout, so a loaded machine does not fail it.
		return `  values  = { message = "m", stuck = ` + stuck + ` }
  timeout = "10s"
  install = { timeout = "5m" }
` + extra
	}
	w.write(c.hcl(map[string]string{"svc": body("false", "")}))
	w.apply()

	w.write(c.hcl(map[string]string{"svc": body("true", "")}))
	w.must(1, "apply", "-auto-approve", "-input=false", "-no-color")
	res := w.must(0, "plan", "-input=false", "-no-color", "-detailed-exitcode")
	for _, want := range []string{
		"Release stalled: retries exhausted",
		"set reset_at to a new value",
		`set upgrade.strategy = { name = "RetryOnFailure" }`,
		"raise upgrade.remediation.retries to 1 or more (now 0)",
		"set upgrade.remediation.remediate_last_failure = true",
	} {
		if !has(res.stdout+res.stderr, want) {
			t.Errorf("the plan of the stalled release lacks %q:\n%s", want, res)
		}
	}

	retry := `  upgrade = { strategy = { name = "RetryOnFailure" } }`
	w.write(c.hcl(map[string]string{"svc": body("true", retry)}))
	res = w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode")
	if !has(res.stdout, "upgrade.strategy RetryOnFailure retries the failed release") {
		t.Errorf("the plan does not say why it upgrades:\n%s", res)
	}
	res = w.must(1, "apply", "-auto-approve", "-input=false", "-no-color")
	if !has(res.stdout+res.stderr, "not remediated: the strategy RetryOnFailure retries at the next run") || has(res.stdout+res.stderr, "Release remediated") {
		t.Errorf("the retry's failure:\n%s", res)
	}
	// The stalled attempt and the retry failed; nothing rolled back.
	if latest := store.latest("svc"); latest.Version != 3 || latest.Info.Status != releasecommon.StatusFailed {
		t.Errorf("want revision 3 failed (the retry), no rollback: %s", store.describe("svc"))
	}
	if got := w.releases()["svc"]; got != 3 {
		t.Errorf("the state records revision %d, want 3", got)
	}
	w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode")
}
