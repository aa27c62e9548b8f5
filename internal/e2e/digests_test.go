//go:build unix

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// TestPlainDigestsReplaced: a state whose status holds the plain digests
// an older version of the provider recorded (a SHA-256 of values holding a
// secret) plans no change, with or without refresh, and its first refresh
// replaces them with keyed digests.
func TestPlainDigestsReplaced(t *testing.T) {
	parallelMatrix(t)
	ns := newNamespace(t)
	c := config{namespace: ns, repo: newRepository(t), cacheDir: t.TempDir()}
	w := newWorkspace(t, "digests")
	w.write(c.hcl(map[string]string{
		"web": `  values           = { message = "one" }
  sensitive_values = yamlencode({ password = "hunter2" })`,
	}))
	w.apply()
	w.write(c.hcl(map[string]string{
		"web": `  values           = { message = "two" }
  sensitive_values = yamlencode({ password = "hunter2" })`,
	}))
	w.apply()
	history := newStorage(t, ns).history("web")
	if len(history) != 2 {
		t.Fatalf("%d revisions in storage, want 2", len(history))
	}

	// The status as an older version wrote it.
	path := filepath.Join(w.dir, "terraform.tfstate")
	var doc map[string]any
	if err := json.Unmarshal(w.stateBytes(), &doc); err != nil {
		t.Fatal(err)
	}
	status := releaseStatus(t, doc, "web")
	plain := map[int][]string{}
	for _, rel := range history {
		plain[rel.Version] = reconcile.PlainDigests(rel)
	}
	for _, s := range status["history"].([]any) {
		snap := s.(map[string]any)
		p := plain[int(snap["version"].(float64))]
		snap["config_digest"], snap["digest"] = p[0], p[1]
	}
	status["last_attempted_config_digest"] = plain[2][0]
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}

	w.must(0, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-refresh=false")
	w.planIsEmpty()
	w.must(0, "apply", "-refresh-only", "-auto-approve", "-input=false", "-no-color")
	state := string(w.stateBytes())
	for v, p := range plain {
		for _, d := range p {
			if strings.Contains(state, d) {
				t.Errorf("the state still holds %s, a plain digest of revision %d", d, v)
			}
		}
	}
	if err := json.Unmarshal(w.stateBytes(), &doc); err != nil {
		t.Fatal(err)
	}
	status = releaseStatus(t, doc, "web")
	for _, s := range status["history"].([]any) {
		snap := s.(map[string]any)
		for _, k := range []string{"config_digest", "digest"} {
			if d, _ := snap[k].(string); !strings.HasPrefix(d, "hmac-sha256:") {
				t.Errorf("revision %v: %s is %q, want a keyed digest", snap["version"], k, d)
			}
		}
	}
	if d, _ := status["last_attempted_config_digest"].(string); d != status["history"].([]any)[0].(map[string]any)["config_digest"] {
		t.Errorf("last_attempted_config_digest %q is not the config digest of the latest revision", d)
	}
	w.planIsEmpty()

	// An upgrade still follows the values.
	w.write(c.hcl(map[string]string{
		"web": `  values           = { message = "three" }
  sensitive_values = yamlencode({ password = "hunter2" })`,
	}))
	w.apply()
	if got := newStorage(t, ns).latest("web").Version; got != 3 {
		t.Errorf("revision %d after a change of values, want 3", got)
	}
	w.planIsEmpty()
}

// releaseStatus is the status attribute of the helmrelease_release name
// in a state document, to edit in place.
func releaseStatus(t *testing.T, doc map[string]any, name string) map[string]any {
	t.Helper()
	for _, r := range doc["resources"].([]any) {
		res := r.(map[string]any)
		if res["type"] != "helmrelease_release" || res["name"] != name {
			continue
		}
		inst := res["instances"].([]any)[0].(map[string]any)
		return inst["attributes"].(map[string]any)["status"].(map[string]any)
	}
	t.Fatalf("no helmrelease_release %s in the state", name)
	return nil
}
