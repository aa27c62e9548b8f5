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
