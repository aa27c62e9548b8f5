package provider

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/tfvalue"
)

// TestStatusRoundTrip: the status attribute holds the engine's status
// whole, so that the next run goes on from where the last one stopped.
func TestStatusRoundTrip(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 11, 23, 10, 0, 0, 123456789, time.UTC)
	st := &reconcile.Status{
		Conditions: []reconcile.Condition{
			{Type: reconcile.ConditionReady, Status: false, Reason: reconcile.ReasonRetriesExhausted, Message: "upgrade failed"},
			{Type: reconcile.ConditionStalled, Status: true, Reason: reconcile.ReasonRetriesExhausted, Message: "stalled"},
		},
		Failures: 3, InstallFailures: 0, UpgradeFailures: 3,
		LastAttemptedRevision: "1.2.0", LastAttemptedConfigDigest: "sha256:aa", LastAttemptedReleaseAction: reconcile.ActionUpgrade,
		LastAppliedRevision: "1.1.0", ObservedPostRenderersDigest: "sha256:bb", ObservedOptionsDigest: "sha256:cc",
		LastHandledForceAt: "f1", LastHandledResetAt: "r1", StorageNamespace: "apps",
		History: []reconcile.Snapshot{
			{Name: "web", Namespace: "apps", Version: 2, Status: "failed", ChartName: "web", ChartVersion: "1.2.0", ConfigDigest: "sha256:aa", Digest: "sha256:dd", FirstDeployed: at, LastDeployed: at.Add(time.Minute)},
			{Name: "web", Namespace: "apps", Version: 1, Status: "superseded", ChartName: "web", ChartVersion: "1.1.0", AppVersion: "2.0", ConfigDigest: "sha256:ee", Digest: "sha256:ff", FirstDeployed: at, LastDeployed: at,
				TestHooks: map[string]reconcile.TestHook{"web-test": {LastStarted: at, LastCompleted: at.Add(time.Second), Phase: "Succeeded"}}},
		},
	}
	obj, diags := statusObject(ctx, st)
	if diags.HasError() {
		t.Fatal(diags)
	}
	got, diags := statusOf(ctx, obj)
	if diags.HasError() {
		t.Fatal(diags)
	}
	if !reflect.DeepEqual(got, st) {
		t.Errorf("status changed in a round trip:\n got %+v\nwant %+v", got, st)
	}
	again, _ := statusObject(ctx, got)
	if !again.Equal(obj) {
		t.Error("the status attribute changes when written again")
	}
	if ready := obj.Attributes()["ready"].(types.Bool); ready.ValueBool() {
		t.Error("ready taken from the wrong condition")
	}
}

// TestTerraformValue: release values recovered on import read as HCL
// would write them.
func TestTerraformValue(t *testing.T) {
	v := tfvalue.FromGo(map[string]any{"replicas": float64(2), "image": map[string]any{"tag": "1.0"}, "hosts": []any{"a", "b"}, "on": true, "none": nil})
	back, err := tfvalue.GoValue(v)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"replicas": int64(2), "image": map[string]any{"tag": "1.0"}, "hosts": []any{"a", "b"}, "on": true, "none": nil}
	if !reflect.DeepEqual(back, want) {
		t.Errorf("round trip: %#v", back)
	}
}
