package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestDriftRecordSkipsUnchangedObjects: the apply's drift detection does
// not compare the objects only the provider's Helm actions wrote (their
// managedFields say so) and records them in sync (in the resource's private
// state) with those it compared, so a later plan compares none of them
// again, and after an object is edited by hand it compares that one, shows
// its drift, and leaves the others alone. What a refresh compared is in the
// provider's debug log.
func TestDriftRecordSkipsUnchangedObjects(t *testing.T) {
	parallelMatrix(t)
	ns := newNamespace(t)
	c := config{namespace: ns, repo: newRepository(t), cacheDir: t.TempDir()}
	w := newWorkspace(t, "drift")
	w.write(c.hcl(map[string]string{"svc": `  values          = { message = "hello", password = "not-a-secret" }
  drift_detection = { mode = "enabled" }`}))
	configMap, secret := "v1/ConfigMap/"+ns+"/svc", "v1/Secret/"+ns+"/svc"

	// compared runs terraform with the provider's debug log and returns
	// what its drift detection compared with the cluster.
	compared := func(code int, args ...string) string {
		t.Helper()
		log := filepath.Join(t.TempDir(), "debug.log")
		w.env = []string{"TF_LOG=debug", "TF_LOG_PATH=" + log}
		w.must(code, args...)
		raw, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for line := range strings.Lines(string(raw)) {
			if strings.Contains(line, "drift detection done") {
				lines = append(lines, line)
			}
		}
		if len(lines) == 0 {
			t.Fatalf("terraform %s: no drift detection in the provider's log", strings.Join(args, " "))
		}
		return strings.Join(lines, "")
	}

	if got := compared(0, "apply", "-auto-approve", "-input=false", "-no-color"); strings.Contains(got, configMap) || strings.Contains(got, secret) || !strings.Contains(got, "unchanged=2") {
		t.Fatalf("the apply's drift check compared objects only Helm wrote, or did not count them unchanged:\n%s", got)
	}
	got := compared(0, "plan", "-input=false", "-no-color", "-detailed-exitcode")
	if strings.Contains(got, configMap) || strings.Contains(got, secret) {
		t.Errorf("a plan right after the apply compared objects nobody wrote since:\n%s", got)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := clientset.CoreV1().ConfigMaps(ns).Patch(ctx, "svc", types.MergePatchType, []byte(`{"data":{"message":"edited by hand"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	got = compared(2, "plan", "-input=false", "-no-color", "-detailed-exitcode")
	if !strings.Contains(got, configMap) || strings.Contains(got, secret) {
		t.Errorf("after the ConfigMap was edited, want it compared and the Secret not:\n%s", got)
	}
	if !strings.Contains(got, "drifted=1") {
		t.Errorf("the edited ConfigMap is not reported drifted:\n%s", got)
	}
}
