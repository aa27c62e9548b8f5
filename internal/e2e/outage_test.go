//go:build unix

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	releasecommon "helm.sh/helm/v4/pkg/release/common"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testcluster"
)

// apiServerDown stops the API server until the test ends or up is called.
func apiServerDown(t *testing.T) (up func()) {
	t.Helper()
	if err := cluster.StopComponent(testcluster.ComponentAPIServer); err != nil {
		t.Fatal(err)
	}
	started := false
	up = func() {
		t.Helper()
		if started {
			return
		}
		started = true
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err := cluster.StartComponent(ctx, testcluster.ComponentAPIServer); err != nil {
			t.Fatal(err)
		}
		controllersWatching(ctx, t)
	}
	t.Cleanup(up)
	return up
}

// controllersWatching waits until a new Deployment becomes ready: the
// controllers, the scheduler and kwok watch the API server again (their
// watches back off for up to half a minute after an outage, as on any
// cluster).
func controllersWatching(ctx context.Context, t *testing.T) {
	t.Helper()
	name := fmt.Sprintf("probe-%d", time.Now().UnixNano())
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.com/probe:1"}}},
			},
		},
	}
	deployments := clientset.AppsV1().Deployments(metav1.NamespaceDefault)
	if _, err := deployments.Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = deployments.Delete(context.Background(), name, metav1.DeleteOptions{}) }()
	for {
		got, err := deployments.Get(ctx, name, metav1.GetOptions{})
		if err == nil && got.Status.ReadyReplicas == 1 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the cluster's controllers did not resume after the outage: %v", ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// host is the API server's host:port as errors name it.
func host() string { return strings.TrimPrefix(cluster.Host, "https://") }

// TestAPIServerStoppedDuringUpgrade: the API server goes away while an
// upgrade waits for its rollout. The apply fails within the action's
// timeout naming the cluster; the resource and its status stay in the
// state; once the server is back the next apply converges.
func TestAPIServerStoppedDuringUpgrade(t *testing.T) {
	needMatrix(t)
	ns := newNamespace(t)
	c := config{namespace: ns, repo: newRepository(t), cacheDir: t.TempDir()}
	w := newWorkspace(t, "outage-upgrade")
	store := newStorage(t, ns)
	body := func(message string, stuck bool) string {
		return `  values = { message = "` + message + `", stuck = ` + map[bool]string{true: "true", false: "false"}[stuck] + ` }
  timeout = "20s"
  install = { timeout = "5m" }
  upgrade = { remediation = { retries = 2 } }`
	}
	w.write(c.hcl(map[string]string{"svc": body("v1", false)}))
	w.apply()

	// A rollout that takes until the outage: the pods wait for a node.
	w.write(c.hcl(map[string]string{"svc": body("v2", true)}))
	run := w.start(strings.Fields(applyArgs)...)
	store.waitFor("svc", 2, releasecommon.StatusPendingUpgrade, 2*time.Minute)
	// The objects are applied: Helm waits for the rollout now.
	for deadline := time.Now().Add(time.Minute); configMessage(t, ns, "svc") != "v2"; {
		if time.Now().After(deadline) {
			t.Fatal("the upgrade never applied its objects")
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second)
	up := apiServerDown(t)
	res := run.wait(t, 5*time.Minute)
	if res.code == 0 {
		t.Fatalf("the apply succeeded with the API server down:\n%s", res)
	}
	if !has(res.stderr, host()) || !has(res.stderr, "Kubernetes cluster unreachable") || !has(res.stderr, "helmrelease_release.svc") || !has(res.stderr, "Last Helm log lines") {
		t.Errorf("the error names neither the cluster %s nor the resource:\n%s", host(), res)
	}
	t.Log(res)
	if got := w.releases(); got["svc"] < 1 {
		t.Fatalf("the resource left the state: %v\n%s", got, res)
	}
	up()

	w.write(c.hcl(map[string]string{"svc": body("v3", false)}))
	w.apply()
	store.consistent("svc", w, "svc")
	if got := configMessage(t, ns, "svc"); got != "v3" {
		t.Errorf("message %q, want v3", got)
	}
	w.planIsEmpty()
}

// TestClusterUnreachable: with the API server down, refresh, apply and
// destroy fail with an error naming the host, the state file is left as
// it was and no resource is dropped; once it is back, plans are empty.
func TestClusterUnreachable(t *testing.T) {
	needMatrix(t)
	ns := newNamespace(t)
	c := config{namespace: ns, repo: newRepository(t), cacheDir: t.TempDir()}
	w := newWorkspace(t, "unreachable")
	store := newStorage(t, ns)
	w.write(c.hcl(map[string]string{"svc": `  values = { message = "v1" }`}))
	w.apply()
	before := w.stateBytes()

	up := apiServerDown(t)
	for _, args := range [][]string{
		{"plan", "-input=false", "-no-color"},
		{"apply", "-auto-approve", "-input=false", "-no-color"},
		{"apply", "-refresh=false", "-auto-approve", "-input=false", "-no-color", "-var-file=/dev/null"},
		{"destroy", "-auto-approve", "-input=false", "-no-color"},
	} {
		if args[0] == "apply" && args[1] == "-refresh=false" {
			// A change planned without refreshing reaches the apply.
			w.write(c.hcl(map[string]string{"svc": `  values = { message = "v2" }`}))
			args = args[:len(args)-1]
		}
		res := w.run(args...)
		t.Log(res)
		if res.code == 0 {
			t.Fatalf("succeeded with the cluster unreachable:\n%s", res)
		}
		if !has(res.stderr, host()) || !has(res.stderr, "Kubernetes cluster unreachable") {
			t.Errorf("the error does not name the cluster %s:\n%s", host(), res)
		}
		if string(w.stateBytes()) != string(before) {
			t.Errorf("terraform %s changed the state file", strings.Join(args, " "))
		}
	}
	up()
	w.write(c.hcl(map[string]string{"svc": `  values = { message = "v1" }`}))
	w.planIsEmpty()
	store.consistent("svc", w, "svc")
}
