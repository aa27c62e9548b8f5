//go:build unix

package e2e

import (
	"strings"
	"testing"
	"time"

	releasecommon "helm.sh/helm/v4/pkg/release/common"
)

const applyArgs = "apply -auto-approve -input=false -no-color"

// TestKilledUpgrade: terraform and the provider are killed while an
// upgrade waits for a rollout that cannot finish. The state never saw that
// apply; the next one, with the configuration fixed, recognises the
// pending revision as its own, unlocks it and upgrades, without waiting
// for the action's timeout.
func TestKilledUpgrade(t *testing.T) {
	parallelMatrix(t)
	ns := newNamespace(t)
	c := config{namespace: ns, repo: newRepository(t), cacheDir: t.TempDir()}
	w := newWorkspace(t, "killed-upgrade")
	store := newStorage(t, ns)
	release1 := `  values = { message = "v1" }
  timeout = "10m"
  upgrade = { remediation = { retries = 1 } }`
	w.write(c.hcl(map[string]string{"svc": release1}))
	w.apply()
	before := w.stateBytes()

	w.write(c.hcl(map[string]string{"svc": `  values = { message = "v2", stuck = true }
  timeout = "10m"
  upgrade = { remediation = { retries = 1 } }`}))
	run := w.start(strings.Fields(applyArgs)...)
	store.waitFor("svc", 2, releasecommon.StatusPendingUpgrade, 2*time.Minute)
	time.Sleep(2 * time.Second) // well into the wait
	run.kill()
	if got := store.latest("svc"); got.Version != 2 || got.Info.Status != releasecommon.StatusPendingUpgrade {
		t.Fatalf("after the kill: %s, want revision 2 pending-upgrade", store.describe("svc"))
	}
	if string(w.stateBytes()) != string(before) {
		t.Error("the killed apply changed the state file")
	}

	w.write(c.hcl(map[string]string{"svc": `  values = { message = "v3" }
  timeout = "10m"
  upgrade = { remediation = { retries = 1 } }`}))
	res := w.apply()
	store.consistent("svc", w, "svc")
	if got := configMessage(t, ns, "svc"); got != "v3" {
		t.Errorf("message %q after recovery, want v3\n%s", got, res)
	}
	for _, r := range store.history("svc") {
		if r.Version == 2 && r.Info.Status != releasecommon.StatusFailed {
			t.Errorf("the interrupted revision is %s, want failed: %s", r.Info.Status, store.describe("svc"))
		}
	}
	w.planIsEmpty()
}

// TestKilledInstall: terraform and the provider are killed while an
// install waits, before the resource reached the state. The next apply
// takes the pending release as its own (its objects carry this resource's
// origin labels) instead of failing with "cannot re-use a name".
func TestKilledInstall(t *testing.T) {
	parallelMatrix(t)
	ns := newNamespace(t)
	c := config{namespace: ns, repo: newRepository(t), cacheDir: t.TempDir()}
	w := newWorkspace(t, "killed-install")
	store := newStorage(t, ns)
	w.write(c.hcl(map[string]string{"svc": `  values = { message = "v1", stuck = true }
  timeout = "10m"`}))
	run := w.start(strings.Fields(applyArgs)...)
	store.waitFor("svc", 1, releasecommon.StatusPendingInstall, 2*time.Minute)
	time.Sleep(2 * time.Second)
	run.kill()
	if got := w.releases(); len(got) != 0 {
		t.Fatalf("the killed install reached the state: %v", got)
	}

	w.write(c.hcl(map[string]string{"svc": `  values = { message = "v2" }
  timeout = "10m"`}))
	res := w.apply()
	if has(res.stdout+res.stderr, "re-use a name") {
		t.Errorf("refused the name:\n%s", res)
	}
	store.consistent("svc", w, "svc")
	if got := configMessage(t, ns, "svc"); got != "v2" {
		t.Errorf("message %q after recovery, want v2", got)
	}
	w.planIsEmpty()
	w.must(0, "destroy", "-auto-approve", "-input=false", "-no-color")
	if got := store.latest("svc"); got != nil {
		t.Errorf("after destroy: %s", store.describe("svc"))
	}
}
