package provider

import (
	"strings"
	"testing"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// TestStallRemedies: the stalled warning names exactly the settings under
// which the engine acts again, and a plan sees a setting that lifts the
// stall as a change.
func TestStallRemedies(t *testing.T) {
	yes := true
	failed := []reconcile.Snapshot{{Version: 2, Status: "failed"}, {Version: 1, Status: "superseded"}}
	for _, tc := range []struct {
		name    string
		spec    func(*reconcile.Spec)
		status  reconcile.Status
		want    []string
		notWant []string
	}{{
		name:   "upgrade failed, no retry",
		status: reconcile.Status{LastAttemptedReleaseAction: reconcile.ActionUpgrade, Failures: 1, UpgradeFailures: 1, History: failed},
		want: []string{"reset_at", "force_at", `set upgrade.strategy = { name = "RetryOnFailure" }`,
			"raise upgrade.remediation.retries to 1 or more (now 0)", "set upgrade.remediation.remediate_last_failure = true"},
	}, {
		name: "install failed and uninstalled",
		spec: func(s *reconcile.Spec) { s.Install.Remediation.RemediateLastFailure = &yes },
		status: reconcile.Status{LastAttemptedReleaseAction: reconcile.ActionInstall, Failures: 1, InstallFailures: 1,
			Conditions: []reconcile.Condition{{Type: reconcile.ConditionRemediated, Status: true}}},
		want: []string{"reset_at", "force_at", "raise install.remediation.retries to 1 or more (now 0)"},
		// As in helm-controller, RetryOnFailure retries a failed release,
		// not an install whose release remediation removed.
		notWant: []string{"RetryOnFailure", "remediate_last_failure"},
	}, {
		name: "upgrade rolled back after its retries",
		spec: func(s *reconcile.Spec) { s.Upgrade.Remediation.Retries = 1 },
		status: reconcile.Status{LastAttemptedReleaseAction: reconcile.ActionUpgrade, Failures: 2, UpgradeFailures: 2,
			History:    []reconcile.Snapshot{{Version: 5, Status: "deployed"}, {Version: 4, Status: "failed"}},
			Conditions: []reconcile.Condition{{Type: reconcile.ConditionRemediated, Status: true}}},
		want:    []string{"raise upgrade.remediation.retries to 2 or more (now 1)"},
		notWant: []string{"RetryOnFailure", "remediate_last_failure"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			spec := &reconcile.Spec{Name: "web", Namespace: "apps"}
			if tc.spec != nil {
				tc.spec(spec)
			}
			st := tc.status
			if err := spec.Stalls(&st); err == nil {
				t.Fatal("the case is not stalled under its own settings")
			}
			if why := stallLifted(spec, &st); why != "" {
				t.Errorf("unchanged settings lift the stall: %s", why)
			}
			got := stallRemedies(spec, &st)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("remedies lack %q:\n%s", w, got)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(got, w) {
					t.Errorf("remedies offer %q, which does not help:\n%s", w, got)
				}
			}
		})
	}
}

func TestStallLiftedByRetryOnFailure(t *testing.T) {
	spec := &reconcile.Spec{Name: "web", Namespace: "apps"}
	st := &reconcile.Status{LastAttemptedReleaseAction: reconcile.ActionUpgrade, Failures: 1, UpgradeFailures: 1,
		History: []reconcile.Snapshot{{Version: 2, Status: "failed"}}}
	spec.Upgrade.Strategy.Name = reconcile.StrategyRetryOnFailure
	if got, want := stallLifted(spec, st), "upgrade.strategy RetryOnFailure retries the failed release"; got != want {
		t.Errorf("stallLifted = %q, want %q", got, want)
	}
}
