//go:build unix

package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	releasecommon "helm.sh/helm/v4/pkg/release/common"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testcluster"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testenv"
)

// outageCluster is a cluster of the test's own, stopped when it ends: the
// outage tests stop its API server while the other tests go on against
// the run's cluster.
type outageCluster struct {
	*target
	cluster *testcluster.Cluster
}

func newOutageCluster(t *testing.T) *outageCluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := testcluster.Start(ctx, testcluster.Options{BinDir: clusterBin, Dir: t.TempDir(), Log: os.Stderr})
	if err != nil {
		t.Fatalf("starting the test's cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stopping the test's cluster: %v", err)
		}
	})
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &outageCluster{target: &target{kubeconfig: c.Kubeconfig, rest: cfg, cs: cs}, cluster: c}
}

// host is the API server's host:port as errors name it.
func (o *outageCluster) host() string { return strings.TrimPrefix(o.cluster.Host, "https://") }

// config is a configuration of the svc chart on this cluster.
func (o *outageCluster) config(t *testing.T, ns string) config {
	return config{namespace: ns, repo: newRepository(t), cacheDir: t.TempDir(), kubernetes: fmt.Sprintf("{ config_path = %q }", o.kubeconfig)}
}

// apiServerDown stops the API server until the test ends or up is called.
func (o *outageCluster) apiServerDown(t *testing.T) (up func()) {
	t.Helper()
	if err := o.cluster.StopComponent(testcluster.ComponentAPIServer); err != nil {
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
		if err := o.cluster.StartComponent(ctx, testcluster.ComponentAPIServer); err != nil {
			t.Fatal(err)
		}
		o.controllersWatching(ctx, t)
	}
	t.Cleanup(up)
	return up
}

// controllersWatching waits until a new Deployment becomes ready: the
// controllers, the scheduler and kwok watch the API server again (their
// watches back off for up to half a minute after an outage, as on any
// cluster).
func (o *outageCluster) controllersWatching(ctx context.Context, t *testing.T) {
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
	deployments := o.cs.AppsV1().Deployments(metav1.NamespaceDefault)
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

// TestAPIServerStoppedDuringUpgrade: the API server goes away while an
// upgrade waits for its rollout. The apply fails within the action's
// timeout naming the cluster; the resource and its status stay in the
// state; once the server is back the next apply converges.
func TestAPIServerStoppedDuringUpgrade(t *testing.T) {
	testenv.FullSuiteOnly(t, "an API server stopped during an upgrade, on a cluster of its own, past make test's time budget")
	parallelMatrix(t)
	o := newOutageCluster(t)
	ns := newNamespaceOn(t, o.cs)
	c := o.config(t, ns)
	w := newWorkspace(t, "outage-upgrade")
	store := newStorageOn(t, o.rest, ns)
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
	for deadline := time.Now().Add(time.Minute); configMessageOn(t, o.cs, ns, "svc") != "v2"; {
		if time.Now().After(deadline) {
			t.Fatal("the upgrade never applied its objects")
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second)
	up := o.apiServerDown(t)
	res := run.wait(t, 5*time.Minute)
	if res.code == 0 {
		t.Fatalf("the apply succeeded with the API server down:\n%s", res)
	}
	if !has(res.stderr, o.host()) || !has(res.stderr, "Kubernetes cluster unreachable") || !has(res.stderr, "helmrelease_release.svc") || !has(res.stderr, "Last Helm log lines") {
		t.Errorf("the error names neither the cluster %s nor the resource:\n%s", o.host(), res)
	}
	t.Log(res)
	if got := w.releases(); got["svc"] < 1 {
		t.Fatalf("the resource left the state: %v\n%s", got, res)
	}
	up()

	w.write(c.hcl(map[string]string{"svc": body("v3", false)}))
	w.apply()
	store.consistent("svc", w, "svc")
	if got := configMessageOn(t, o.cs, ns, "svc"); got != "v3" {
		t.Errorf("message %q, want v3", got)
	}
	w.planIsEmpty()
}

// TestClusterUnreachable: with the API server down, refresh, apply and
// destroy fail with an error naming the host, the state file is left as
// it was and no resource is dropped; once it is back, plans are empty.
func TestClusterUnreachable(t *testing.T) {
	testenv.FullSuiteOnly(t, "a cluster stopped between runs, on a cluster of its own, past make test's time budget")
	parallelMatrix(t)
	o := newOutageCluster(t)
	ns := newNamespaceOn(t, o.cs)
	c := o.config(t, ns)
	w := newWorkspace(t, "unreachable")
	store := newStorageOn(t, o.rest, ns)
	w.write(c.hcl(map[string]string{"svc": `  values = { message = "v1" }`}))
	w.apply()
	before := w.stateBytes()

	up := o.apiServerDown(t)
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
		if !has(res.stderr, o.host()) || !has(res.stderr, "Kubernetes cluster unreachable") {
			t.Errorf("the error does not name the cluster %s:\n%s", o.host(), res)
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
