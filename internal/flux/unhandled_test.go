package flux

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testcluster"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testenv"
)

// TestActionRunning: only a Reconciling condition of a Helm action that
// may still run counts as a worker held.
func TestActionRunning(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	reconciling := func(reason, message string, age time.Duration) *helmv2.HelmRelease {
		hr := &helmv2.HelmRelease{}
		hr.Status.Conditions = []metav1.Condition{{Type: meta.ReconcilingCondition, Status: metav1.ConditionTrue, Reason: reason, Message: message, LastTransitionTime: metav1.NewTime(now.Add(-age))}}
		return hr
	}
	for _, tc := range []struct {
		name string
		hr   *helmv2.HelmRelease
		want bool
	}{
		{"install running", reconciling(meta.ProgressingReason, "Running 'install' action with timeout of 5m0s", time.Minute), true},
		{"upgrade running near its end", reconciling(meta.ProgressingReason, "Running 'upgrade' action with timeout of 10m0s", 25*time.Minute), true},
		{"left by a controller that stopped", reconciling(meta.ProgressingReason, "Running 'install' action with timeout of 5m0s", time.Hour), false},
		{"retrying after an interval", reconciling(meta.ProgressingWithRetryReason, "retrying after 5m0s", time.Minute), false},
		{"another progress message", reconciling(meta.ProgressingReason, "correcting cluster drift", time.Minute), false},
		{"no condition", &helmv2.HelmRelease{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := actionRunning(tc.hr, now); got != tc.want {
				t.Errorf("actionRunning = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestUntouchedMoved: a finalizer, a condition or an observed generation
// written by the controller is a move.
func TestUntouchedMoved(t *testing.T) {
	hr := &helmv2.HelmRelease{}
	hr.Generation = 2
	hr.Status.ObservedGeneration = 1
	u := untouchedOf(hr)
	if u.moved(hr.DeepCopy()) {
		t.Fatal("the same HelmRelease counts as moved")
	}
	for name, change := range map[string]func(*helmv2.HelmRelease){
		"finalizer":  func(hr *helmv2.HelmRelease) { hr.Finalizers = []string{"finalizers.fluxcd.io"} },
		"condition":  func(hr *helmv2.HelmRelease) { hr.Status.Conditions = []metav1.Condition{{Type: meta.ReadyCondition}} },
		"generation": func(hr *helmv2.HelmRelease) { hr.Status.ObservedGeneration = 2 },
	} {
		next := hr.DeepCopy()
		change(next)
		if !u.moved(next) {
			t.Errorf("a new %s does not count as moved", name)
		}
	}
}

// TestWaitControllerGrace, on a cluster of its own: helm-controller runs
// but watches another namespace. A HelmRelease written where it does not
// watch waits its whole timeout while another HelmRelease is in a Helm
// action (the controller may be busy), and ends after the grace, saying
// so, once none is.
func TestWaitControllerGrace(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a cluster of its own")
	}
	testenv.FullSuiteOnly(t, "Flux's controllers, built from their sources")
	all, err := testcluster.FluxVersions()
	if err != nil {
		t.Fatal(err)
	}
	versions := all[testcluster.HelmController]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	kubeconfig, cfg := ownCluster(ctx, t)
	cs := kubernetes.NewForConfigOrDie(cfg)
	watched, ns := newNamespace(t, cs), "unwatched"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f, err := testcluster.StartFluxWith(ctx, testcluster.FluxOptions{Kubeconfig: kubeconfig, Dir: t.TempDir(), Namespace: watched}, versions[len(versions)-1])
	if err != nil {
		testenv.SkipUnlessRequired(t, "needs Flux's controllers, built from the Go module proxy or from the archives "+testcluster.FluxSourcesEnv+" names: "+err.Error())
	}
	defer f.Stop()
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.ControllerGrace, e.PollInterval = 2*time.Second, 200*time.Millisecond
	newRelease := func(name string) *helmv2.HelmRelease {
		hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: helmv2.HelmReleaseSpec{
			Interval: metav1.Duration{Duration: time.Hour}, ChartRef: &helmv2.CrossNamespaceSourceReference{Kind: "OCIRepository", Name: name}}}
		if err := e.Kube.Create(ctx, hr); err != nil {
			t.Fatal(err)
		}
		return hr
	}
	app, busy := newRelease("app"), newRelease("busy")
	busy.Status.Conditions = []metav1.Condition{{Type: meta.ReconcilingCondition, Status: metav1.ConditionTrue, Reason: meta.ProgressingReason,
		Message: "Running 'install' action with timeout of 5m0s", LastTransitionTime: metav1.Now()}}
	if err := e.Kube.Status().Update(ctx, busy); err != nil {
		t.Fatal(err)
	}

	_, err = e.Wait(ctx, ns, "app", Want{Generation: app.Generation, Since: time.Now()}, 8*time.Second)
	var nr *NotReadyError
	if !errors.As(err, &nr) || nr.Grace != 0 || nr.Observed {
		t.Fatalf("wait while a HelmRelease is in a Helm action: %v, want its timeout", err)
	}

	busy.Status.Conditions = nil
	if err := e.Kube.Status().Update(ctx, busy); err != nil {
		t.Fatal(err)
	}
	_, err = e.Wait(ctx, ns, "app", Want{Generation: app.Generation, Since: time.Now()}, 5*time.Minute)
	if !errors.As(err, &nr) || nr.Grace != 2*time.Second || !strings.Contains(err.Error(), "was not taken up within 2s of its write") || !strings.Contains(err.Error(), "no Flux helm-controller handled its latest change") {
		t.Fatalf("wait with no controller for the namespace and none busy: %v, want the grace", err)
	}
}
