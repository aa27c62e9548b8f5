package reconcile

import (
	"context"
	"fmt"
	"time"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
)

// ReleaseStatus is the state of a release compared with its spec; the
// atomic loop picks the next action from it.
type ReleaseStatus string

// Release states.
const (
	// StateAbsent: no release in storage, or only an uninstalled one.
	StateAbsent ReleaseStatus = "Absent"
	// StateUnmanaged: a release exists that this object did not make, or
	// that changed since it made it (manual helm upgrade or rollback).
	StateUnmanaged ReleaseStatus = "Unmanaged"
	// StateLocked: the latest release is pending-install, -upgrade or
	// -rollback: an action was interrupted.
	StateLocked ReleaseStatus = "Locked"
	// StateUninstalling: the latest release is uninstalling: an uninstall
	// failed (a pre-delete hook) or was interrupted.
	StateUninstalling ReleaseStatus = "Uninstalling"
	// StateOutOfSync: chart, values, post-renderers or options changed.
	StateOutOfSync ReleaseStatus = "OutOfSync"
	// StateUntested: tests are enabled and have not run on the revision.
	StateUntested ReleaseStatus = "Untested"
	// StateFailed: the release failed, or a test failed and is not ignored.
	StateFailed ReleaseStatus = "Failed"
	// StateDrifted: the cluster differs from the release manifest.
	StateDrifted ReleaseStatus = "Drifted"
	// StateInSync: nothing to do.
	StateInSync ReleaseStatus = "InSync"
)

// ReleaseState is a ReleaseStatus with why it was decided.
type ReleaseState struct {
	Status ReleaseStatus
	Reason string
	// Drift holds the drifted objects when Status is StateDrifted.
	Drift *DriftReport
}

// Desired is what the release must be: the inputs compared with storage.
type Desired struct {
	Spec                *Spec
	ChartName           string
	ChartVersion        string
	ChartDigest         string
	ConfigDigest        string
	PostRenderersDigest string
	OptionsDigest       string
	// Digests computes the digest of the release in storage, to compare
	// with the one the status recorded.
	Digests Digests
}

// DriftDetector compares a release's manifest with the cluster.
type DriftDetector func(ctx context.Context, rel *helm.Release) (*DriftReport, error)

// LockedReason says that rel is pending, since when and by whom.
func LockedReason(rel *helm.Release) string {
	return fmt.Sprintf("release %s is %s since %s, run by %s", describe(rel), rel.Info.Status, rel.Info.LastDeployed.UTC().Format(time.RFC3339), LockHolder(rel))
}

// DetermineReleaseState decides the state of the release in one place.
// latest is the newest release in storage (nil when none); status is what
// this object recorded; detect is nil when drift detection is disabled.
func DetermineReleaseState(ctx context.Context, latest *helm.Release, status *Status, want Desired, detect DriftDetector) (ReleaseState, error) {
	if latest == nil {
		return ReleaseState{Status: StateAbsent, Reason: "no release in storage"}, nil
	}
	if latest.Info.Status.IsPending() {
		return ReleaseState{Status: StateLocked, Reason: LockedReason(latest)}, nil
	}
	if latest.Info.Status == helm.StatusUninstalling {
		return ReleaseState{Status: StateUninstalling, Reason: fmt.Sprintf("release %s is %s: an uninstall failed or was interrupted", describe(latest), latest.Info.Status)}, nil
	}

	cur := status.Latest()
	if cur == nil {
		if latest.Info.Status == helm.StatusUninstalled {
			return ReleaseState{Status: StateAbsent, Reason: "only an uninstalled release in storage"}, nil
		}
		return ReleaseState{Status: StateUnmanaged, Reason: fmt.Sprintf("release %s exists but was not made by this resource", describe(latest))}, nil
	}
	if !cur.Targets(latest.Name, latest.Namespace, latest.Version) {
		return ReleaseState{Status: StateUnmanaged, Reason: fmt.Sprintf("latest release %s is not the revision %d this resource made", describe(latest), cur.Version)}, nil
	}
	same, err := want.Digests.SameRelease(cur.Digest, latest)
	if err != nil {
		return ReleaseState{}, err
	}
	if !same {
		return ReleaseState{Status: StateUnmanaged, Reason: fmt.Sprintf("release %s was changed outside this resource", describe(latest))}, nil
	}

	switch latest.Info.Status {
	case helm.StatusFailed:
		return ReleaseState{Status: StateFailed, Reason: fmt.Sprintf("release %s failed", describe(latest))}, nil
	case helm.StatusUninstalled:
		return ReleaseState{Status: StateAbsent, Reason: "release was uninstalled"}, nil
	case helm.StatusDeployed:
	default:
		return ReleaseState{}, fmt.Errorf("release %s has the unexpected status %q", describe(latest), latest.Info.Status)
	}

	switch {
	case latest.Chart == nil || latest.Chart.Metadata == nil:
		return ReleaseState{}, fmt.Errorf("release %s has no chart metadata", describe(latest))
	case latest.Chart.Metadata.Name != want.ChartName || latest.Chart.Metadata.Version != want.ChartVersion:
		return ReleaseState{Status: StateOutOfSync, Reason: fmt.Sprintf("chart changed from %s@%s to %s@%s",
			latest.Chart.Metadata.Name, latest.Chart.Metadata.Version, want.ChartName, want.ChartVersion)}, nil
	case cur.Republished(want.ChartDigest):
		return ReleaseState{Status: StateOutOfSync, Reason: fmt.Sprintf(fmtRepublished, want.ChartName, want.ChartVersion, want.ChartDigest, cur.ChartDigest)}, nil
	case !want.Spec.Upgrade.PreserveValues && cur.ConfigDigest != want.ConfigDigest,
		// With preserve_values the stored values merge the previous ones:
		// what was asked for is the last attempted digest.
		want.Spec.Upgrade.PreserveValues && status.LastAttemptedConfigDigest != want.ConfigDigest:
		return ReleaseState{Status: StateOutOfSync, Reason: "values changed"}, nil
	case status.ObservedPostRenderersDigest != want.PostRenderersDigest:
		return ReleaseState{Status: StateOutOfSync, Reason: "post-renderers changed"}, nil
	case status.ObservedOptionsDigest != want.OptionsDigest:
		return ReleaseState{Status: StateOutOfSync, Reason: "release options changed"}, nil
	}

	if want.Spec.Test.Enable {
		if !cur.HasBeenTested() {
			return ReleaseState{Status: StateUntested, Reason: fmt.Sprintf("release %s has not been tested", describe(latest))}, nil
		}
		if cur.HasTestInPhase(helm.HookPhaseFailed) && !want.Spec.ActiveRemediation(status).MustIgnoreTestFailures() {
			return ReleaseState{Status: StateFailed, Reason: fmt.Sprintf("release %s has a failed test", describe(latest))}, nil
		}
	}

	if detect != nil {
		report, err := detect(ctx, latest)
		if err != nil && (report == nil || !report.HasChanges()) {
			return ReleaseState{}, fmt.Errorf("detecting drift of release %s: %w", describe(latest), err)
		}
		if report != nil && report.HasChanges() {
			return ReleaseState{Status: StateDrifted, Reason: report.Summary(), Drift: report}, nil
		}
	}
	return ReleaseState{Status: StateInSync}, nil
}

// Drifted condition reasons and messages, as in helm-controller.
const (
	ConditionDrifted      = "Drifted"
	ReasonDriftDetected   = "DriftDetected"
	ReasonNoDriftDetected = "NoDriftDetected"
	fmtDrifted            = "Cluster state of release %s has drifted from the desired state: %s"
	msgNoDrift            = "No drift detected against the cluster state"
)

// MarkDrift records in st what drift detection found in state, as
// helm-controller's Drifted condition: true while the cluster differs
// from the release, false once it was compared and found in sync; left as
// it is when the state says nothing of drift (detection off, or an action
// comes first).
func MarkDrift(st *Status, s *Spec, state ReleaseState) {
	switch {
	case state.Status == StateDrifted:
		st.SetCondition(Condition{Type: ConditionDrifted, Status: true, Reason: ReasonDriftDetected,
			Message: fmt.Sprintf(fmtDrifted, s.GetStorageNamespace()+"/"+s.GetReleaseName(), state.Reason)})
	case state.Status == StateInSync && (s.Drift.Mode == DriftWarn || s.Drift.Mode == DriftEnabled):
		st.SetCondition(Condition{Type: ConditionDrifted, Status: false, Reason: ReasonNoDriftDetected, Message: msgNoDrift})
	}
}

// ChartRenamed returns the chart name of the newest revision st recorded
// when it is not chartName: the chart was replaced by another one.
func ChartRenamed(st *Status, chartName string) (was string, renamed bool) {
	cur := st.Latest()
	if cur == nil || cur.ChartName == "" || chartName == "" || cur.ChartName == chartName {
		return "", false
	}
	return cur.ChartName, true
}

// Reinstalls reports whether the next action uninstalls the release and
// installs chartName afresh rather than upgrading it: the chart's name
// changed and the spec's chart name change strategy is Reinstall, as
// helm-controller decides it (against its history, not Helm's storage).
func Reinstalls(st *Status, s *Spec, chartName string) bool {
	_, renamed := ChartRenamed(st, chartName)
	return renamed && s.ReinstallsOnChartNameChange()
}

func describe(r *helm.Release) string {
	return fmt.Sprintf("%s/%s.v%d", r.Namespace, r.Name, r.Version)
}
