package flux

import (
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestTakenUp: a request alone (force_at, reset_at: no new generation) is
// taken up by a reconcile the controller marked in the second of the
// write, by the cluster's clock, or later; not by one marked before it,
// nor by one that was running when the write was made, whatever this
// machine's clock says. The write's time is the API server's.
func TestTakenUp(t *testing.T) {
	t.Parallel()
	// The cluster's clock; this machine's runs ahead of it by 1.5 s.
	written := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	ahead := written.Add(1500 * time.Millisecond)
	hr := func(reconcilingAt time.Time, handled string) *helmv2.HelmRelease {
		out := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Generation: 3, ManagedFields: []metav1.ManagedFieldsEntry{
			{Manager: "helm-controller", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", Time: &metav1.Time{Time: written.Add(time.Hour)}},
			{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply, Time: &metav1.Time{Time: written}},
		}}}
		out.Status.ObservedGeneration, out.Status.LastAttemptedGeneration = 3, 3
		out.Status.LastHandledReconcileAt = handled
		if !reconcilingAt.IsZero() {
			out.Status.Conditions = []metav1.Condition{{Type: meta.ReconcilingCondition, Status: metav1.ConditionTrue, ObservedGeneration: 3, LastTransitionTime: metav1.Time{Time: reconcilingAt}}}
		}
		return out
	}
	if got := WriteTime(hr(time.Time{}, ""), ahead); !got.Equal(written) {
		t.Fatalf("WriteTime %s, want the API server's %s", got, written)
	}
	if got := WriteTime(&helmv2.HelmRelease{}, ahead); !got.Equal(ahead) {
		t.Fatalf("WriteTime of no managed fields %s, want the fallback", got)
	}
	for _, tc := range []struct {
		name    string
		running time.Time // Reconciling as the write found it
		now     *helmv2.HelmRelease
		takenUp bool
	}{
		{"not yet", time.Time{}, hr(time.Time{}, "old"), false},
		{"marked in the second of the write", time.Time{}, hr(written, "old"), true},
		{"marked later", time.Time{}, hr(written.Add(2*time.Second), "old"), true},
		{"marked before the write", time.Time{}, hr(written.Add(-time.Second), "old"), false},
		{"running when written, still", written, hr(written, "old"), false},
		{"running when written, then a new reconcile", written, hr(written.Add(time.Second), "old"), true},
		{"handled", written, hr(time.Time{}, "token"), true},
	} {
		want := Want{Generation: 3, RequestedAt: "token", Since: WriteTime(tc.now, ahead), ReconcilingAt: tc.running, TakenUp: true}
		if got := TakenUp(tc.now, want); got != tc.takenUp {
			t.Errorf("%s: taken up %v, want %v", tc.name, got, tc.takenUp)
		}
	}
}

// TestPhaseOf: the wait's verdict from the controller's status. A
// reconcile that stalled on the spec before the write can report the
// written generation as observed (its status patches read it back); the
// reconcile of that generation then starts with the older Stalled still
// set, and the wait goes on until it ends (helm-controller v1.4).
func TestPhaseOf(t *testing.T) {
	t.Parallel()
	cond := func(typ string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message, ObservedGeneration: 3}
	}
	var (
		ready       = cond(meta.ReadyCondition, metav1.ConditionTrue, "UpgradeSucceeded", "Helm upgrade succeeded")
		notReady    = cond(meta.ReadyCondition, metav1.ConditionFalse, "UpgradeFailed", "Helm upgrade failed")
		unknown     = cond(meta.ReadyCondition, metav1.ConditionUnknown, meta.ProgressingReason, "Running 'upgrade' action with timeout of 30s")
		stalled     = cond(meta.StalledCondition, metav1.ConditionTrue, "RetriesExceeded", "Failed to upgrade after 1 attempt(s)")
		running     = cond(meta.ReconcilingCondition, metav1.ConditionTrue, meta.ProgressingReason, "Running 'upgrade' action with timeout of 30s")
		retryLater  = cond(meta.ReconcilingCondition, metav1.ConditionTrue, meta.ProgressingWithRetryReason, "retrying after 5m0s")
		retryAtOnce = cond(meta.ReconcilingCondition, metav1.ConditionTrue, meta.ProgressingWithRetryReason, "Helm upgrade failed")
	)
	hr := func(observed, attempted int64, conds ...metav1.Condition) *helmv2.HelmRelease {
		out := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
		out.Status.ObservedGeneration, out.Status.LastAttemptedGeneration = observed, attempted
		out.Status.Conditions = conds
		return out
	}
	for _, tc := range []struct {
		name string
		hr   *helmv2.HelmRelease
		want phase
	}{
		{"not observed", hr(2, 2, ready), phasePending},
		{"stalled on the older spec, the written generation read back", hr(3, 2, stalled, notReady), phasePending},
		{"the written generation's reconcile starts, the older stall still set", hr(3, 3, stalled, running, unknown), phaseReconciling},
		{"stalled on the written generation", hr(3, 3, stalled, notReady), phaseStalled},
		{"failed, retried after the interval", hr(3, 3, retryLater, notReady), phaseRetryingLater},
		{"failed, remediation left", hr(3, 3, retryAtOnce, notReady), phaseReconciling},
		{"ready", hr(3, 3, ready), phaseReady},
		{"failed, not stalled, nothing running", hr(3, 3, notReady), phasePending},
	} {
		if got := phaseOf(tc.hr, Want{Generation: 3}); got != tc.want {
			t.Errorf("%s: phase %d, want %d", tc.name, got, tc.want)
		}
	}
}
