package flux

import (
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

func TestStatusOf(t *testing.T) {
	hr := &helmv2.HelmRelease{Status: helmv2.HelmReleaseStatus{
		LastAttemptedRevision:     "1.0.0+3",
		LastAttemptedConfigDigest: "sha256:plain-hash-of-the-values",
		UpgradeFailures:           1,
		StorageNamespace:          "apps",
		Conditions:                []metav1.Condition{{Type: reconcile.ConditionReady, Status: metav1.ConditionTrue, Reason: "UpgradeSucceeded", Message: "upgraded"}},
		History: helmv2.Snapshots{
			{Name: "web", Namespace: "apps", Version: 2, Status: "deployed", ChartName: "web", ChartVersion: "1.0.0+3"},
			{Name: "web", Namespace: "apps", Version: 1, Status: "superseded", ChartName: "web", ChartVersion: "0.9.0+1"},
		},
	}}
	prev := &reconcile.Status{LastAttemptedConfigDigest: "hmac-sha256:keyed", ObservedOptionsDigest: "options", ObservedPostRenderersDigest: "renderers"}
	prev.SetCondition(reconcile.Condition{Type: reconcile.ConditionSourceVerified, Status: true, Reason: "Succeeded", Message: "signed by release-team"})
	asPlanned := func(v string) string { before, _, _ := strings.Cut(v, "+"); return before }

	st := StatusOf(hr, prev, asPlanned)
	for _, c := range []struct{ what, got, want string }{
		{"last attempted revision", st.LastAttemptedRevision, "1.0.0"},
		{"last applied revision", st.LastAppliedRevision, "1.0.0"},
		{"newest snapshot's chart version", st.History[0].ChartVersion, "1.0.0"},
		{"older snapshot's chart version", st.History[1].ChartVersion, "0.9.0"},
		// The controller's plain hash of the values is not kept.
		{"config digest", st.LastAttemptedConfigDigest, "hmac-sha256:keyed"},
		{"options digest", st.ObservedOptionsDigest, "options"},
		{"post-renderers digest", st.ObservedPostRenderersDigest, "renderers"},
		{"storage namespace", st.StorageNamespace, "apps"},
	} {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.what, c.got, c.want)
		}
	}
	if st.UpgradeFailures != 1 {
		t.Errorf("upgrade failures %d, want 1", st.UpgradeFailures)
	}
	if c := st.Condition(reconcile.ConditionReady); c == nil || !c.Status || c.Reason != "UpgradeSucceeded" {
		t.Errorf("Ready condition %+v, want the controller's", c)
	}
	if c := st.Condition(reconcile.ConditionSourceVerified); c == nil || c.Message != "signed by release-team" {
		t.Errorf("SourceVerified condition %+v, want the provider's of the last apply", c)
	}

	// A release whose newest revision failed has no applied revision.
	hr.Status.History[0].Status = "failed"
	if st := StatusOf(hr, &reconcile.Status{}, asPlanned); st.LastAppliedRevision != "" || st.Condition(reconcile.ConditionSourceVerified) != nil {
		t.Errorf("after a failed upgrade: applied revision %q, SourceVerified %+v; want none of either", st.LastAppliedRevision, st.Condition(reconcile.ConditionSourceVerified))
	}
}

func TestKeepHandled(t *testing.T) {
	for _, c := range []struct {
		name                 string
		spec                 reconcile.Spec
		prev, controller     reconcile.Status
		wantForce, wantReset string
	}{
		{name: "the controller's tokens when the configuration has none",
			controller: reconcile.Status{LastHandledForceAt: "action-1"}, wantForce: "action-1"},
		{name: "the configuration's tokens, handled before an action's request",
			spec: reconcile.Spec{ForceAt: "f1", ResetAt: "r1"}, prev: reconcile.Status{LastHandledForceAt: "f1", LastHandledResetAt: "r1"},
			controller: reconcile.Status{LastHandledForceAt: "action-2", LastHandledResetAt: "action-3"}, wantForce: "f1", wantReset: "r1"},
		{name: "a new token of the configuration, not handled yet",
			spec: reconcile.Spec{ForceAt: "f2"}, prev: reconcile.Status{LastHandledForceAt: "f1"},
			controller: reconcile.Status{LastHandledForceAt: "f1"}, wantForce: "f1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := KeepHandled(&c.controller, &c.prev, &c.spec)
			if st.LastHandledForceAt != c.wantForce || st.LastHandledResetAt != c.wantReset {
				t.Errorf("handled force %q, reset %q; want %q, %q", st.LastHandledForceAt, st.LastHandledResetAt, c.wantForce, c.wantReset)
			}
		})
	}
}

func TestRequestToken(t *testing.T) {
	for _, c := range []struct {
		name string
		spec reconcile.Spec
		st   reconcile.Status
		want string // empty: a new token
	}{
		{name: "force_at not handled", spec: reconcile.Spec{ForceAt: "f1", ResetAt: "r1"}, want: "f1"},
		{name: "reset_at not handled", spec: reconcile.Spec{ForceAt: "f1", ResetAt: "r1"}, st: reconcile.Status{LastHandledForceAt: "f1"}, want: "r1"},
		{name: "both handled", spec: reconcile.Spec{ForceAt: "f1", ResetAt: "r1"}, st: reconcile.Status{LastHandledForceAt: "f1", LastHandledResetAt: "r1"}},
		{name: "none"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := RequestToken(&c.spec, &c.st)
			if c.want != "" {
				if got != c.want {
					t.Errorf("token %q, want %q", got, c.want)
				}
				return
			}
			if _, err := time.Parse(time.RFC3339Nano, got); err != nil || got == c.spec.ForceAt || got == c.spec.ResetAt {
				t.Errorf("token %q, want a new one (the time now)", got)
			}
		})
	}
}

func TestWaitTimeout(t *testing.T) {
	installed := reconcile.Status{History: []reconcile.Snapshot{{Version: 1, Status: "deployed"}}}
	for _, c := range []struct {
		name string
		spec reconcile.Spec
		st   reconcile.Status
		want time.Duration
	}{
		{name: "install, defaults", want: 5*time.Minute + 5*time.Minute + time.Minute},
		{name: "install, its own timeout", spec: reconcile.Spec{Install: reconcile.InstallSpec{Timeout: time.Minute}}, want: time.Minute + 5*time.Minute + time.Minute},
		{name: "upgrade with tests", spec: reconcile.Spec{Timeout: 2 * time.Minute, Upgrade: reconcile.UpgradeSpec{Timeout: 3 * time.Minute}, Test: reconcile.TestSpec{Enable: true}}, st: installed,
			want: 3*time.Minute + 2*time.Minute + 2*time.Minute + time.Minute},
		{name: "the longer remediation", spec: reconcile.Spec{Rollback: reconcile.RollbackSpec{Timeout: time.Minute}, Uninstall: reconcile.UninstallSpec{Timeout: 9 * time.Minute}}, st: installed,
			want: 5*time.Minute + 9*time.Minute + time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := WaitTimeout(&c.spec, &c.st); got != c.want {
				t.Errorf("wait timeout %s, want %s", got, c.want)
			}
		})
	}
}
