package reconcile

import (
	"context"
	"time"

	"github.com/fluxcd/pkg/apis/kustomize"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/postrender"
)

// DefaultTimeout is the timeout of a Helm action when none is set.
const DefaultTimeout = 5 * time.Minute

// DefaultMaxHistory is the number of revisions Helm keeps when none is set.
const DefaultMaxHistory = 5

// CRDPolicy says what an install or upgrade does with the chart's CRDs.
type CRDPolicy string

// CRD policies.
const (
	CRDSkip          CRDPolicy = "Skip"
	CRDCreate        CRDPolicy = "Create"
	CRDCreateReplace CRDPolicy = "CreateReplace"
)

// RemediationStrategy is how a failed upgrade is remediated.
type RemediationStrategy string

// Upgrade remediation strategies.
const (
	StrategyRollback  RemediationStrategy = "rollback"
	StrategyUninstall RemediationStrategy = "uninstall"
)

// ActionStrategyName is what follows a failed install or upgrade
// (spec.install.strategy.name, spec.upgrade.strategy.name).
type ActionStrategyName string

// Action strategies.
const (
	// StrategyRemediateOnFailure remediates a failure (Remediation) and
	// stalls once no retry remains: the default.
	StrategyRemediateOnFailure ActionStrategyName = "RemediateOnFailure"
	// StrategyRetryOnFailure leaves a failed release as it is, with no
	// remediation and no retry budget: the run ends with ErrRetryNextRun
	// and every later run upgrades it again, until one succeeds.
	StrategyRetryOnFailure ActionStrategyName = "RetryOnFailure"
)

// ActionStrategy is spec.install.strategy or spec.upgrade.strategy.
type ActionStrategy struct {
	// Name; empty is StrategyRemediateOnFailure.
	Name ActionStrategyName
	// RetryInterval is helm-controller's wait between retries
	// (retryInterval; 0 is its default). A run of this engine makes one
	// attempt: the next run is the retry.
	RetryInterval time.Duration
}

// DriftMode is spec.driftDetection.mode.
type DriftMode string

// Drift detection modes.
const (
	DriftDisabled DriftMode = "disabled"
	DriftWarn     DriftMode = "warn"
	DriftEnabled  DriftMode = "enabled"
)

// Spec is the desired state of a release: every field of the HelmRelease
// spec that the engine acts on. Zero values are the v2 defaults unless a
// field says otherwise.
type Spec struct {
	// Name and Namespace identify the release object (metadata).
	Name      string
	Namespace string
	// ReleaseName, TargetNamespace and StorageNamespace as set; empty means
	// the default (see ReleaseName, the accessors below).
	ReleaseName      string
	TargetNamespace  string
	StorageNamespace string

	// Timeout of each action unless the action sets its own; 0 is DefaultTimeout.
	Timeout time.Duration
	// MaxHistory is the number of revisions kept; nil is DefaultMaxHistory, 0 unlimited.
	MaxHistory *int
	// PersistentClient keeps one Kubernetes client (and its discovery
	// cache) for the whole run; otherwise each action starts afresh.
	PersistentClient bool
	// ServiceAccountName is impersonated (in Namespace) for every Helm
	// action when set.
	ServiceAccountName string

	Install   InstallSpec
	Upgrade   UpgradeSpec
	Test      TestSpec
	Rollback  RollbackSpec
	Uninstall UninstallSpec
	Drift     DriftSpec

	// WaitStrategy is spec.waitStrategy.name; empty is helm.WaitPoller,
	// helm-controller's default since v1.5 (Helm 4).
	WaitStrategy helm.WaitStrategy
	// HealthChecks are spec.healthCheckExprs: CEL expressions of the
	// status of kinds, used by the poller.
	HealthChecks []kustomize.CustomHealthCheck

	PostRenderers  []postrender.Renderer
	CommonMetadata postrender.Metadata
	// OriginGroup is the group of the origin labels of the release's
	// objects; empty is postrender.OriginGroup (postrender.Origin).
	OriginGroup string
	// PostRenderStrategy is spec.postRenderStrategy: whether hooks go
	// through the post-renderers; empty is PostRenderNoHooks (Helm 3).
	PostRenderStrategy PostRenderStrategy

	// Adopt takes over an existing release that this resource did not make
	// (set when a release is imported).
	Adopt bool

	// ForceAt and ResetAt are the force and reset tokens (annotations
	// reconcile.fluxcd.io/forceAt and resetAt in Flux).
	ForceAt string
	ResetAt string
}

// PostRenderStrategy says which rendered objects go through the
// post-renderers (HelmRelease spec.postRenderStrategy).
type PostRenderStrategy string

// Post-render strategies.
const (
	// PostRenderNoHooks post-renders the release's objects, not its hooks
	// (Helm 3).
	PostRenderNoHooks PostRenderStrategy = "nohooks"
	// PostRenderCombined post-renders hooks and objects in one stream
	// (Helm 4.2's default).
	PostRenderCombined PostRenderStrategy = "combined"
	// PostRenderSeparate post-renders hooks apart from the objects.
	PostRenderSeparate PostRenderStrategy = "separate"
)

// PostRendersHooks reports whether the strategy sends hooks through the
// post-renderers.
func (s PostRenderStrategy) PostRendersHooks() bool {
	return s == PostRenderCombined || s == PostRenderSeparate
}

// helm is Helm's strategy; empty is PostRenderNoHooks.
func (s PostRenderStrategy) helm() helm.PostRenderStrategy {
	switch s {
	case PostRenderCombined:
		return helm.PostRenderCombined
	case PostRenderSeparate:
		return helm.PostRenderSeparate
	default:
		return helm.PostRenderNoHooks
	}
}

// ChartNameChangeStrategy is what a change of the chart's name does
// (HelmRelease spec.upgrade.chartNameChangeStrategy).
type ChartNameChangeStrategy string

// Chart name change strategies.
const (
	// ChartNameReinstall uninstalls the release and installs the new chart
	// (helm-controller's behaviour since Flux 2.2).
	ChartNameReinstall ChartNameChangeStrategy = "Reinstall"
	// ChartNameInPlaceUpdate upgrades the release to the new chart.
	ChartNameInPlaceUpdate ChartNameChangeStrategy = "InPlaceUpdate"
)

// ReinstallsOnChartNameChange reports whether a new chart name uninstalls
// the release and installs it afresh.
func (s *Spec) ReinstallsOnChartNameChange() bool {
	return s.Upgrade.ChartNameChangeStrategy != ChartNameInPlaceUpdate
}

// Remediation is the remediation of an install or an upgrade.
type Remediation struct {
	// Retries after a failure; negative is unlimited.
	Retries int
	// IgnoreTestFailures overrides Spec.Test.IgnoreFailures when set.
	IgnoreTestFailures *bool
	// RemediateLastFailure remediates the last failure too; nil is the
	// default of the action (false for install, Retries > 0 for upgrade).
	RemediateLastFailure *bool
	// Strategy of an upgrade remediation; empty is rollback. Install
	// failures are always remediated by uninstalling.
	Strategy RemediationStrategy
}

// InstallSpec is spec.install.
type InstallSpec struct {
	Timeout                  time.Duration
	CRDs                     CRDPolicy // empty is Create
	Replace                  bool
	CreateNamespace          bool
	DisableHooks             bool
	DisableOpenAPIValidation bool
	DisableSchemaValidation  bool
	DisableTakeOwnership     bool
	DisableWait              bool
	DisableWaitForJobs       bool
	Strategy                 ActionStrategy
	Remediation              Remediation
	// ServerSideApply is serverSideApply; nil is true, helm-controller's
	// default since v1.5 (Helm 4).
	ServerSideApply *bool
}

// serverSideApply tells whether the install writes by server-side apply.
func (s InstallSpec) serverSideApply() bool {
	return s.ServerSideApply == nil || *s.ServerSideApply
}

// UpgradeSpec is spec.upgrade.
type UpgradeSpec struct {
	Timeout                  time.Duration
	CRDs                     CRDPolicy // empty is Skip
	CleanupOnFail            bool
	DisableHooks             bool
	DisableOpenAPIValidation bool
	DisableSchemaValidation  bool
	DisableTakeOwnership     bool
	DisableWait              bool
	DisableWaitForJobs       bool
	Force                    bool
	PreserveValues           bool
	Strategy                 ActionStrategy
	Remediation              Remediation
	// ServerSideApply is serverSideApply: enabled, disabled or auto; empty
	// is auto (as the release's newest record was written).
	ServerSideApply string
	// ChartNameChangeStrategy is what a new chart name does; empty is
	// ChartNameReinstall.
	ChartNameChangeStrategy ChartNameChangeStrategy
}

// TestFilter includes or excludes a test by name.
type TestFilter struct {
	Name    string
	Exclude bool
}

// TestSpec is spec.test.
type TestSpec struct {
	Enable         bool
	Timeout        time.Duration
	IgnoreFailures bool
	Filters        []TestFilter
}

// RollbackSpec is spec.rollback.
type RollbackSpec struct {
	Timeout            time.Duration
	CleanupOnFail      bool
	DisableHooks       bool
	DisableWait        bool
	DisableWaitForJobs bool
	Force              bool
	// Recreate has no effect since Helm 4 removed it (helm-controller
	// v1.5 and later warn of it too).
	Recreate bool
	// ServerSideApply as UpgradeSpec.ServerSideApply; auto is as the
	// revision rolled back to was written.
	ServerSideApply string
}

// Server-side apply modes of upgrades and rollbacks (serverSideApply).
const (
	ServerSideApplyEnabled  = "enabled"
	ServerSideApplyDisabled = "disabled"
	ServerSideApplyAuto     = "auto"
)

// applyMethod is Helm's apply method of a serverSideApply mode.
func applyMethod(mode string) helm.ApplyMethod {
	switch mode {
	case ServerSideApplyEnabled:
		return helm.ApplyServerSide
	case ServerSideApplyDisabled:
		return helm.ApplyClientSide
	default:
		return helm.ApplyAsLast
	}
}

// UninstallSpec is spec.uninstall.
type UninstallSpec struct {
	Timeout             time.Duration
	DeletionPropagation string // empty is background
	DisableHooks        bool
	DisableWait         bool
	KeepHistory         bool
}

// DriftSpec is spec.driftDetection.
type DriftSpec struct {
	Mode   DriftMode // empty is disabled
	Ignore []IgnoreRule
}

// IgnoreRule ignores JSON pointers in the objects its target selects.
type IgnoreRule struct {
	Paths  []string
	Target *postrender.Selector
}

// GetWaitStrategy is the effective wait strategy (WaitStrategy).
func (s *Spec) GetWaitStrategy() helm.WaitStrategy {
	if s.WaitStrategy != "" {
		return s.WaitStrategy
	}
	return helm.WaitPoller
}

// poller is the waiter of the spec's actions: nil for Helm's legacy one.
func (s *Spec) poller(ctx context.Context) *helm.Poller {
	if s.GetWaitStrategy() != helm.WaitPoller {
		return nil
	}
	return &helm.Poller{HealthChecks: s.HealthChecks, Context: ctx}
}

// GetReleaseName is the release name, defaulted and shortened.
func (s *Spec) GetReleaseName() string {
	return ReleaseName(s.ReleaseName, s.TargetNamespace, s.Name)
}

// GetTargetNamespace is the namespace of the release's objects.
func (s *Spec) GetTargetNamespace() string {
	if s.TargetNamespace != "" {
		return s.TargetNamespace
	}
	return s.Namespace
}

// ReleaseRef names the release as <storage namespace>/<release name>: in
// messages, and on the namespace its install creates
// (kube.CreatedForAnnotation).
func (s *Spec) ReleaseRef() string {
	return s.GetStorageNamespace() + "/" + s.GetReleaseName()
}

// GetStorageNamespace is the namespace of the release's Helm storage.
func (s *Spec) GetStorageNamespace() string {
	if s.StorageNamespace != "" {
		return s.StorageNamespace
	}
	return s.Namespace
}

// GetMaxHistory is the number of revisions Helm keeps; 0 is unlimited.
func (s *Spec) GetMaxHistory() int {
	if s.MaxHistory == nil {
		return DefaultMaxHistory
	}
	return *s.MaxHistory
}

// timeout returns the action's own timeout, else the spec's, else the default.
func (s *Spec) timeout(own time.Duration) time.Duration {
	switch {
	case own > 0:
		return own
	case s.Timeout > 0:
		return s.Timeout
	default:
		return DefaultTimeout
	}
}

// InstallTimeout and the others are the effective timeouts of each action.
func (s *Spec) InstallTimeout() time.Duration   { return s.timeout(s.Install.Timeout) }
func (s *Spec) UpgradeTimeout() time.Duration   { return s.timeout(s.Upgrade.Timeout) }
func (s *Spec) TestTimeout() time.Duration      { return s.timeout(s.Test.Timeout) }
func (s *Spec) RollbackTimeout() time.Duration  { return s.timeout(s.Rollback.Timeout) }
func (s *Spec) UninstallTimeout() time.Duration { return s.timeout(s.Uninstall.Timeout) }

// InstallCRDs and UpgradeCRDs are the effective CRD policies.
func (s *Spec) InstallCRDs() CRDPolicy {
	if s.Install.CRDs == "" {
		return CRDCreate
	}
	return s.Install.CRDs
}

// UpgradeCRDs is the effective CRD policy of upgrades.
func (s *Spec) UpgradeCRDs() CRDPolicy {
	if s.Upgrade.CRDs == "" {
		return CRDSkip
	}
	return s.Upgrade.CRDs
}

// RetriesOnFailure reports whether the action last attempted (as in
// ActiveRemediation) has the RetryOnFailure strategy.
func (s *Spec) RetriesOnFailure(st *Status) bool {
	if st != nil && st.LastAttemptedReleaseAction == ActionUpgrade {
		return s.Upgrade.Strategy.Name == StrategyRetryOnFailure
	}
	return s.Install.Strategy.Name == StrategyRetryOnFailure
}

// ActiveRemediation is the remediation of the action last attempted:
// upgrade once an upgrade was attempted, else install.
func (s *Spec) ActiveRemediation(st *Status) ActiveRemediation {
	if st != nil && st.LastAttemptedReleaseAction == ActionUpgrade {
		return ActiveRemediation{Action: ActionUpgrade, spec: s, r: s.Upgrade.Remediation}
	}
	return ActiveRemediation{Action: ActionInstall, spec: s, r: s.Install.Remediation}
}

// ActiveRemediation answers the remediation questions of one action.
type ActiveRemediation struct {
	Action ReleaseAction
	spec   *Spec
	r      Remediation
}

// Retries is the number of retries; negative is unlimited.
func (a ActiveRemediation) Retries() int { return a.r.Retries }

// Failures is the failure count of the action in st.
func (a ActiveRemediation) Failures(st *Status) int64 {
	if a.Action == ActionUpgrade {
		return st.UpgradeFailures
	}
	return st.InstallFailures
}

// RetriesExhausted reports whether no retry remains after st's failures.
func (a ActiveRemediation) RetriesExhausted(st *Status) bool {
	return a.r.Retries >= 0 && a.Failures(st) > int64(a.r.Retries)
}

// MustRemediateLastFailure reports whether the last failure, once retries
// are exhausted, is remediated: install defaults to false, upgrade to
// Retries > 0.
func (a ActiveRemediation) MustRemediateLastFailure() bool {
	if a.r.RemediateLastFailure != nil {
		return *a.r.RemediateLastFailure
	}
	return a.Action == ActionUpgrade && a.r.Retries > 0
}

// MustIgnoreTestFailures is the action's ignore_test_failures, else the
// test spec's ignore_failures.
func (a ActiveRemediation) MustIgnoreTestFailures() bool {
	if a.r.IgnoreTestFailures != nil {
		return *a.r.IgnoreTestFailures
	}
	return a.spec.Test.IgnoreFailures
}

// Strategy is how a failure of the action is remediated: uninstall for
// install failures, the configured strategy (rollback by default) for
// upgrade failures.
func (a ActiveRemediation) Strategy() RemediationStrategy {
	if a.Action == ActionInstall {
		return StrategyUninstall
	}
	if a.r.Strategy == "" {
		return StrategyRollback
	}
	return a.r.Strategy
}
