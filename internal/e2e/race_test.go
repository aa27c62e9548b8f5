//go:build unix

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	releasecommon "helm.sh/helm/v4/pkg/release/common"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/postrender"
)

// TestTwoStatesOneRelease: two configurations with their own state files
// apply a release of the same name in the same namespace at the same
// moment. One wins; the other is refused (by the ownership check, or by
// Helm storage refusing a second revision 1) and leaves nothing behind:
// no resource in its state, no object or revision of its own, the
// winner's release untouched. Its next plan names the owner.
func TestTwoStatesOneRelease(t *testing.T) {
	parallelMatrix(t)
	ns := newNamespace(t)
	c := config{namespace: ns, repo: newRepository(t), cacheDir: t.TempDir()}
	store := newStorage(t, ns)
	workspaces := map[string]*workspace{}
	for _, name := range []string{"blue", "green"} {
		w := newWorkspace(t, name)
		w.write(c.hcl(map[string]string{name: `  release_name = "shared"
  values       = { message = "` + name + `" }`}))
		workspaces[name] = w
	}
	runs := map[string]*running{}
	for name, w := range workspaces {
		runs[name] = w.start(strings.Fields(applyArgs)...)
	}
	results := map[string]result{}
	for name, r := range runs {
		results[name] = r.wait(t, 5*time.Minute)
	}

	var winner, loser string
	switch {
	case results["blue"].code == 0 && results["green"].code != 0:
		winner, loser = "blue", "green"
	case results["green"].code == 0 && results["blue"].code != 0:
		winner, loser = "green", "blue"
	default:
		t.Fatalf("want one apply to succeed and one to fail:\n%s\n%s", results["blue"], results["green"])
	}
	t.Logf("%s won; %s was refused with:\n%s", winner, loser, results[loser].stderr)
	if r := results[loser].stderr; !has(r, "helmrelease_release "+ns+"/"+winner) && !has(r, "re-use a name") && !has(r, "already exists") {
		t.Errorf("the refusal names neither the owner nor the taken name:\n%s", results[loser])
	}

	store.consistent("shared", workspaces[winner], winner)
	if h := store.history("shared"); len(h) != 1 || h[0].Info.Status != releasecommon.StatusDeployed {
		t.Errorf("want the winner's one revision: %s", store.describe("shared"))
	}
	if got := configMessage(t, ns, "shared"); got != winner {
		t.Errorf("ConfigMap message %q, want the winner's %q", got, winner)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cm, err := clientset.CoreV1().ConfigMaps(ns).Get(ctx, "shared", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := clientset.AppsV1().Deployments(ns).Get(ctx, "shared", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Labels[postrender.OriginNameLabel] != winner || d.Labels[postrender.OriginNameLabel] != winner {
		t.Errorf("objects labelled %q and %q, want the winner %q", cm.Labels[postrender.OriginNameLabel], d.Labels[postrender.OriginNameLabel], winner)
	}
	if got := workspaces[loser].releases(); len(got) != 0 {
		t.Errorf("the refused resource is in its state: %v", got)
	}

	workspaces[winner].planIsEmpty()
	// The loser's plan warns (it cannot tell a conflict from a replacement
	// of the owner); its apply refuses and still saves nothing.
	res := workspaces[loser].must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode")
	if !has(res.stdout, "was made by helmrelease_release "+ns+"/"+winner) {
		t.Errorf("the loser's plan does not name the owner:\n%s", res)
	}
	res = workspaces[loser].must(1, strings.Fields(applyArgs)...)
	if !has(res.stderr, "managed by helmrelease_release "+ns+"/"+winner) {
		t.Errorf("the loser's apply does not name the owner:\n%s", res)
	}
	if got := workspaces[loser].releases(); len(got) != 0 {
		t.Errorf("the refused resource is in its state: %v", got)
	}
	store.consistent("shared", workspaces[winner], winner)
}
