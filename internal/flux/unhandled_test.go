package flux

import (
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
