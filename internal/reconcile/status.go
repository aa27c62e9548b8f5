package reconcile

import (
	"maps"
	"slices"
	"time"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
)

// Condition types of a release, as in helm-controller.
const (
	ConditionReady       = "Ready"
	ConditionReleased    = "Released"
	ConditionTestSuccess = "TestSuccess"
	ConditionRemediated  = "Remediated"
	ConditionStalled     = "Stalled"
	// ConditionSourceVerified is source-controller's condition of a
	// source whose signature was verified, kept on the release for the
	// chart it deployed.
	ConditionSourceVerified = "SourceVerified"
)

// Condition reasons, as in helm-controller.
const (
	ReasonInstallSucceeded   = "InstallSucceeded"
	ReasonInstallFailed      = "InstallFailed"
	ReasonUpgradeSucceeded   = "UpgradeSucceeded"
	ReasonUpgradeFailed      = "UpgradeFailed"
	ReasonTestSucceeded      = "TestSucceeded"
	ReasonTestFailed         = "TestFailed"
	ReasonRollbackSucceeded  = "RollbackSucceeded"
	ReasonRollbackFailed     = "RollbackFailed"
	ReasonUninstallSucceeded = "UninstallSucceeded"
	ReasonUninstallFailed    = "UninstallFailed"
	ReasonRetriesExhausted   = "RetriesExceeded"
	ReasonDriftCorrected     = "DriftCorrected"
	ReasonDriftFailed        = "DriftCorrectionFailed"
	ReasonProgressing        = "Progressing"
)

// ReleaseAction is a Helm action as helm-controller names it: the last
// attempted release action (install and upgrade count towards failures),
// and the action that made each revision (status.history[].action).
type ReleaseAction string

// Release actions.
const (
	ActionInstall              ReleaseAction = "install"
	ActionUpgrade              ReleaseAction = "upgrade"
	ActionRollback             ReleaseAction = "rollback"
	ActionUninstall            ReleaseAction = "uninstall"
	ActionUninstallRemediation ReleaseAction = "uninstall-remediation"
)

// Condition is one observation of the release. It carries no timestamp:
// a status read twice from an unchanged cluster must be identical.
type Condition struct {
	Type    string
	Status  bool
	Reason  string
	Message string
}

// Status is what the reconciler knows of a release between runs; the provider
// keeps it in Terraform state (HelmRelease .status).
type Status struct {
	Conditions []Condition

	// Failures counts failed actions since the last success or reset;
	// InstallFailures and UpgradeFailures count those of each action
	// against its remediation retries.
	Failures        int64
	InstallFailures int64
	UpgradeFailures int64

	LastAttemptedRevision string
	// LastAttemptedRevisionDigest is the chart digest of the last install
	// or upgrade attempt when the revision does not carry it
	// (Request.ChartDigest; Flux's lastAttemptedRevisionDigest).
	LastAttemptedRevisionDigest string
	LastAttemptedConfigDigest   string
	LastAttemptedReleaseAction  ReleaseAction
	LastAppliedRevision         string
	ObservedPostRenderersDigest string
	// ObservedOptionsDigest is the digest of the release options last
	// applied (ReleaseOptions.Digest).
	ObservedOptionsDigest string
	// LastHandledForceAt and LastHandledResetAt are the force_at and
	// reset_at tokens already acted on.
	LastHandledForceAt string
	LastHandledResetAt string
	StorageNamespace   string

	// History holds snapshots of the releases made, newest first.
	History []Snapshot
}

// Clone is a deep copy of s.
func (s *Status) Clone() *Status {
	out := *s
	out.Conditions = slices.Clone(s.Conditions)
	out.History = slices.Clone(s.History)
	for i := range out.History {
		out.History[i].TestHooks = maps.Clone(s.History[i].TestHooks)
	}
	return &out
}

// Condition returns the condition of type t, or nil.
func (s *Status) Condition(t string) *Condition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == t {
			return &s.Conditions[i]
		}
	}
	return nil
}

// SetCondition sets or replaces the condition of c.Type.
func (s *Status) SetCondition(c Condition) {
	if existing := s.Condition(c.Type); existing != nil {
		*existing = c
		return
	}
	s.Conditions = append(s.Conditions, c)
}

// RemoveCondition drops the condition of type t.
func (s *Status) RemoveCondition(t string) {
	out := s.Conditions[:0]
	for _, c := range s.Conditions {
		if c.Type != t {
			out = append(out, c)
		}
	}
	s.Conditions = out
}

// Latest is the newest snapshot, or nil.
func (s *Status) Latest() *Snapshot {
	if len(s.History) == 0 {
		return nil
	}
	return &s.History[0]
}

// Snapshot is what was observed of one release revision.
type Snapshot struct {
	Name         string
	Namespace    string
	Version      int
	Status       string
	ChartName    string
	ChartVersion string
	AppVersion   string
	ConfigDigest string
	Digest       string
	// ChartDigest is the digest of the chart archive the revision was made
	// from, when its chart version does not carry it (Request.ChartDigest;
	// Flux's ociDigest); empty when unknown.
	ChartDigest string
	// Action is the action that made the revision, as helm-controller
	// records it (install, upgrade, rollback); empty when it was not seen.
	Action        ReleaseAction
	FirstDeployed time.Time
	LastDeployed  time.Time
	Deleted       time.Time
	// TestHooks are the test hooks of the release by name, once run.
	TestHooks map[string]TestHook
}

// TestHook is the last run of a test hook.
type TestHook struct {
	LastStarted   time.Time
	LastCompleted time.Time
	Phase         string
}

// HasBeenTested reports whether the tests of the revision have run.
func (s *Snapshot) HasBeenTested() bool { return s.TestHooks != nil }

// HasTestInPhase reports whether a test of the revision is in phase.
func (s *Snapshot) HasTestInPhase(phase helm.HookPhase) bool {
	for _, h := range s.TestHooks {
		if h.Phase == phase.String() {
			return true
		}
	}
	return false
}

// Republished reports whether the chart of revision want is published
// again with digest, another than the one this revision was made from.
// Unknown digests (empty) never differ.
func (s *Snapshot) Republished(digest string) bool {
	return digest != "" && s.ChartDigest != "" && s.ChartDigest != digest
}

// Targets reports whether the snapshot is of revision version of the
// release name in namespace.
func (s *Snapshot) Targets(name, namespace string, version int) bool {
	return s.Name == name && s.Namespace == namespace && s.Version == version
}
