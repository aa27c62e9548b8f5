package reconcile

import (
	"context"
	"errors"
	"strings"
	"testing"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	releasecommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
)

func testRelease(version int, st releasecommon.Status) *release.Release {
	return &release.Release{
		Name: "web", Namespace: "apps", Version: version,
		Info:     &release.Info{Status: st},
		Chart:    &chart.Chart{Metadata: &chart.Metadata{Name: "app", Version: "1.0.0"}},
		Config:   map[string]any{"a": 1},
		Manifest: "kind: ConfigMap",
	}
}

// observed is the status this object records after making rel.
func observed(t *testing.T, rel *release.Release, mutate func(*Status)) *Status {
	t.Helper()
	digest, err := testDigests.Release(rel)
	if err != nil {
		t.Fatal(err)
	}
	st := &Status{
		ObservedPostRenderersDigest: "pr",
		ObservedOptionsDigest:       "opts",
		History: []Snapshot{{
			Name: rel.Name, Namespace: rel.Namespace, Version: rel.Version, Status: rel.Info.Status.String(),
			ChartName: "app", ChartVersion: "1.0.0", ConfigDigest: "cfg", Digest: digest,
		}},
	}
	if mutate != nil {
		mutate(st)
	}
	return st
}

func TestDetermineReleaseState(t *testing.T) {
	ignore := true
	spec := func(mutate func(*Spec)) *Spec {
		s := &Spec{Name: "web", Namespace: "apps"}
		if mutate != nil {
			mutate(s)
		}
		return s
	}
	want := func(s *Spec) Desired {
		return Desired{Spec: s, ChartName: "app", ChartVersion: "1.0.0", ConfigDigest: "cfg", PostRenderersDigest: "pr", OptionsDigest: "opts", Digests: testDigests}
	}
	deployed := testRelease(2, releasecommon.StatusDeployed)
	tested := func(phase release.HookPhase) func(*Status) {
		return func(st *Status) { st.History[0].TestHooks = map[string]TestHook{"t": {Phase: phase.String()}} }
	}
	drifted := func(context.Context, *release.Release) (*DriftReport, error) {
		return &DriftReport{Objects: []ObjectDrift{{Key: "v1/ConfigMap/apps/web", Missing: true}}}, nil
	}
	noDrift := func(context.Context, *release.Release) (*DriftReport, error) { return &DriftReport{}, nil }

	for _, tc := range []struct {
		name    string
		latest  *release.Release
		status  *Status
		desired Desired
		detect  DriftDetector
		want    ReleaseStatus
	}{
		{name: "no release", status: &Status{}, desired: want(spec(nil)), want: StateAbsent},
		{name: "pending upgrade", latest: testRelease(3, releasecommon.StatusPendingUpgrade), status: observed(t, deployed, nil), desired: want(spec(nil)), want: StateLocked},
		{name: "pending install, never observed", latest: testRelease(1, releasecommon.StatusPendingInstall), status: &Status{}, desired: want(spec(nil)), want: StateLocked},
		{name: "existing release, no history", latest: deployed, status: &Status{}, desired: want(spec(nil)), want: StateUnmanaged},
		{name: "uninstalled release, no history", latest: testRelease(2, releasecommon.StatusUninstalled), status: &Status{}, desired: want(spec(nil)), want: StateAbsent},
		{name: "newer revision made elsewhere", latest: testRelease(3, releasecommon.StatusDeployed), status: observed(t, deployed, nil), desired: want(spec(nil)), want: StateUnmanaged},
		{name: "same revision changed elsewhere", latest: func() *release.Release {
			r := testRelease(2, releasecommon.StatusDeployed)
			r.Config = map[string]any{"a": 2}
			return r
		}(), status: observed(t, deployed, nil), desired: want(spec(nil)), want: StateUnmanaged},
		{name: "uninstall failed", latest: testRelease(2, releasecommon.StatusUninstalling), status: observed(t, testRelease(2, releasecommon.StatusUninstalling), nil), desired: want(spec(nil)), want: StateUninstalling},
		{name: "chart published again", latest: deployed, status: observed(t, deployed, func(st *Status) { st.History[0].ChartDigest = "sha256:a" }), desired: func() Desired { d := want(spec(nil)); d.ChartDigest = "sha256:b"; return d }(), want: StateOutOfSync},
		{name: "chart digest unknown before", latest: deployed, status: observed(t, deployed, nil), desired: func() Desired { d := want(spec(nil)); d.ChartDigest = "sha256:b"; return d }(), want: StateInSync},
		{name: "failed", latest: testRelease(2, releasecommon.StatusFailed), status: observed(t, testRelease(2, releasecommon.StatusFailed), nil), desired: want(spec(nil)), want: StateFailed},
		{name: "uninstalled, keep history", latest: testRelease(2, releasecommon.StatusUninstalled), status: observed(t, testRelease(2, releasecommon.StatusUninstalled), nil), desired: want(spec(nil)), want: StateAbsent},
		{name: "chart version changed", latest: deployed, status: observed(t, deployed, nil), desired: func() Desired { d := want(spec(nil)); d.ChartVersion = "1.1.0"; return d }(), want: StateOutOfSync},
		{name: "values changed", latest: deployed, status: observed(t, deployed, nil), desired: func() Desired { d := want(spec(nil)); d.ConfigDigest = "other"; return d }(), want: StateOutOfSync},
		{name: "post-renderers changed", latest: deployed, status: observed(t, deployed, nil), desired: func() Desired { d := want(spec(nil)); d.PostRenderersDigest = "other"; return d }(), want: StateOutOfSync},
		{name: "options changed", latest: deployed, status: observed(t, deployed, nil), desired: func() Desired { d := want(spec(nil)); d.OptionsDigest = "other"; return d }(), want: StateOutOfSync},
		{name: "untested", latest: deployed, status: observed(t, deployed, nil), desired: want(spec(func(s *Spec) { s.Test.Enable = true })), want: StateUntested},
		{name: "test failed", latest: deployed, status: observed(t, deployed, tested(release.HookPhaseFailed)), desired: want(spec(func(s *Spec) { s.Test.Enable = true })), want: StateFailed},
		{name: "test failed, ignored globally", latest: deployed, status: observed(t, deployed, tested(release.HookPhaseFailed)), desired: want(spec(func(s *Spec) { s.Test.Enable, s.Test.IgnoreFailures = true, true })), want: StateInSync},
		{name: "test failed, ignored by install remediation", latest: deployed, status: observed(t, deployed, tested(release.HookPhaseFailed)), desired: want(spec(func(s *Spec) {
			s.Test.Enable = true
			s.Install.Remediation.IgnoreTestFailures = &ignore
		})), want: StateInSync},
		{name: "test failed, upgrade remediation overrides global ignore", latest: deployed, status: observed(t, deployed, func(st *Status) {
			tested(release.HookPhaseFailed)(st)
			st.LastAttemptedReleaseAction = ActionUpgrade
		}), desired: want(spec(func(s *Spec) {
			s.Test.Enable, s.Test.IgnoreFailures = true, true
			notIgnore := false
			s.Upgrade.Remediation.IgnoreTestFailures = &notIgnore
		})), want: StateFailed},
		{name: "test passed", latest: deployed, status: observed(t, deployed, tested(release.HookPhaseSucceeded)), desired: want(spec(func(s *Spec) { s.Test.Enable = true })), want: StateInSync},
		{name: "drifted", latest: deployed, status: observed(t, deployed, nil), desired: want(spec(nil)), detect: drifted, want: StateDrifted},
		{name: "no drift", latest: deployed, status: observed(t, deployed, nil), desired: want(spec(nil)), detect: noDrift, want: StateInSync},
		{name: "in sync", latest: deployed, status: observed(t, deployed, nil), desired: want(spec(nil)), want: StateInSync},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DetermineReleaseState(context.Background(), tc.latest, tc.status, tc.desired, tc.detect)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tc.want {
				t.Errorf("state %s (%s), want %s", got.Status, got.Reason, tc.want)
			}
		})
	}
}

func TestDetermineReleaseStateDriftError(t *testing.T) {
	deployed := testRelease(1, releasecommon.StatusDeployed)
	failing := func(context.Context, *release.Release) (*DriftReport, error) { return nil, errors.New("api down") }
	_, err := DetermineReleaseState(context.Background(), deployed, observed(t, deployed, nil),
		Desired{Spec: &Spec{}, ChartName: "app", ChartVersion: "1.0.0", ConfigDigest: "cfg", PostRenderersDigest: "pr", OptionsDigest: "opts", Digests: testDigests}, failing)
	if err == nil {
		t.Fatal("a failed drift detection must be an error, not a state")
	}
}

func TestActiveRemediation(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		name           string
		spec           Spec
		status         Status
		wantAction     ReleaseAction
		wantExhausted  bool
		wantLast       bool
		wantStrategy   RemediationStrategy
		wantIgnoreTest bool
	}{
		{name: "install defaults", status: Status{InstallFailures: 1}, wantAction: ActionInstall, wantExhausted: true, wantStrategy: StrategyUninstall},
		{name: "install retries left", spec: Spec{Install: InstallSpec{Remediation: Remediation{Retries: 2}}}, status: Status{InstallFailures: 2}, wantAction: ActionInstall, wantStrategy: StrategyUninstall},
		{name: "install unlimited", spec: Spec{Install: InstallSpec{Remediation: Remediation{Retries: -1}}}, status: Status{InstallFailures: 100}, wantAction: ActionInstall, wantStrategy: StrategyUninstall},
		{name: "install remediate last", spec: Spec{Install: InstallSpec{Remediation: Remediation{RemediateLastFailure: &yes}}}, wantAction: ActionInstall, wantLast: true, wantStrategy: StrategyUninstall},
		{name: "upgrade no retries", status: Status{LastAttemptedReleaseAction: ActionUpgrade, UpgradeFailures: 1}, wantAction: ActionUpgrade, wantExhausted: true, wantStrategy: StrategyRollback},
		{name: "upgrade retries imply remediate last", spec: Spec{Upgrade: UpgradeSpec{Remediation: Remediation{Retries: 1, Strategy: StrategyUninstall}}}, status: Status{LastAttemptedReleaseAction: ActionUpgrade, UpgradeFailures: 2}, wantAction: ActionUpgrade, wantExhausted: true, wantLast: true, wantStrategy: StrategyUninstall},
		{name: "upgrade remediate last off", spec: Spec{Upgrade: UpgradeSpec{Remediation: Remediation{Retries: 1, RemediateLastFailure: &no}}}, status: Status{LastAttemptedReleaseAction: ActionUpgrade}, wantAction: ActionUpgrade, wantStrategy: StrategyRollback},
		{name: "test failures ignored globally", spec: Spec{Test: TestSpec{IgnoreFailures: true}}, wantAction: ActionInstall, wantStrategy: StrategyUninstall, wantIgnoreTest: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.spec.ActiveRemediation(&tc.status)
			if a.Action != tc.wantAction || a.RetriesExhausted(&tc.status) != tc.wantExhausted || a.MustRemediateLastFailure() != tc.wantLast ||
				a.Strategy() != tc.wantStrategy || a.MustIgnoreTestFailures() != tc.wantIgnoreTest {
				t.Errorf("got action %s exhausted %v last %v strategy %s ignore-tests %v", a.Action, a.RetriesExhausted(&tc.status), a.MustRemediateLastFailure(), a.Strategy(), a.MustIgnoreTestFailures())
			}
		})
	}
}

// TestReinstalls: a new chart name reinstalls the release under the
// default strategy, as helm-controller does, and upgrades it in place
// under InPlaceUpdate; nothing else reinstalls.
func TestReinstalls(t *testing.T) {
	made := func(chartName string) *Status {
		return &Status{History: []Snapshot{{Name: "web", Namespace: "apps", Version: 2, ChartName: chartName}}}
	}
	inPlace := &Spec{Upgrade: UpgradeSpec{ChartNameChangeStrategy: ChartNameInPlaceUpdate}}
	for _, tc := range []struct {
		name  string
		st    *Status
		spec  *Spec
		chart string
		want  bool
	}{
		{"new chart name, default strategy", made("app"), &Spec{}, "app-v2", true},
		{"new chart name, Reinstall", made("app"), &Spec{Upgrade: UpgradeSpec{ChartNameChangeStrategy: ChartNameReinstall}}, "app-v2", true},
		{"new chart name, InPlaceUpdate", made("app"), inPlace, "app-v2", false},
		{"same chart name", made("app"), &Spec{}, "app", false},
		{"no history (adopted, or never installed)", &Status{}, &Spec{}, "app-v2", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Reinstalls(tc.st, tc.spec, tc.chart); got != tc.want {
				t.Errorf("Reinstalls = %t, want %t", got, tc.want)
			}
		})
	}
}

// TestMarkDrift: the Drifted condition is true while drift is found,
// false once compared and in sync, and untouched when drift was not
// looked at.
func TestMarkDrift(t *testing.T) {
	spec := func(mode DriftMode) *Spec { return &Spec{Name: "web", Namespace: "apps", Drift: DriftSpec{Mode: mode}} }
	drifted := ReleaseState{Status: StateDrifted, Reason: "1 object changed: apps/v1/Deployment/apps/web"}
	for _, tc := range []struct {
		name       string
		spec       *Spec
		state      ReleaseState
		wantStatus *bool
		wantReason string
	}{
		{"drift found (warn)", spec(DriftWarn), drifted, new(true), ReasonDriftDetected},
		{"drift found (enabled)", spec(DriftEnabled), drifted, new(true), ReasonDriftDetected},
		{"in sync, detection on", spec(DriftEnabled), ReleaseState{Status: StateInSync}, new(false), ReasonNoDriftDetected},
		{"in sync, detection off", spec(DriftDisabled), ReleaseState{Status: StateInSync}, nil, ""},
		{"an upgrade comes first", spec(DriftEnabled), ReleaseState{Status: StateOutOfSync}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &Status{}
			MarkDrift(st, tc.spec, tc.state)
			c := st.Condition(ConditionDrifted)
			switch {
			case tc.wantStatus == nil && c != nil:
				t.Errorf("Drifted condition %+v, want none", *c)
			case tc.wantStatus != nil && (c == nil || c.Status != *tc.wantStatus || c.Reason != tc.wantReason):
				t.Errorf("Drifted condition %+v, want status %t reason %s", c, *tc.wantStatus, tc.wantReason)
			}
			if c != nil && c.Status && !strings.Contains(c.Message, "apps/web") || c != nil && c.Status && !strings.Contains(c.Message, tc.state.Reason) {
				t.Errorf("Drifted message %q does not name the release and what drifted", c.Message)
			}
		})
	}
}
