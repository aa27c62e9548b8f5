package helm

import (
	postrender "helm.sh/helm/v4/pkg/postrenderer"
	releasecommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
)

// The Helm types the rest of the project speaks, named here so that no
// other package imports helm.sh/helm. They are aliases: the values are
// Helm's own, passed without conversion. Helm 4 keeps their fields (its
// pkg/release/v1 and pkg/chart/v2) but moves them and puts a release
// behind a Releaser interface, so a move changes these lines and the
// calls of this package, not their users.
type (
	// Info is a release's status, times, description and notes.
	Info = release.Info
	// Status is a release's status (deployed, failed, pending-…).
	Status = releasecommon.Status
	// Hook is a hook of a release: its manifest, events and last run.
	Hook = release.Hook
	// HookEvent is when a hook runs (pre-install, test, …).
	HookEvent = release.HookEvent
	// HookPhase is how a hook's last run went.
	HookPhase = release.HookPhase
	// PostRenderer rewrites a release's rendered manifests.
	PostRenderer = postrender.PostRenderer
)

// PostRenderFileAnnotation names each object's template file in what the
// post-renderers get (Helm 4 puts the objects of all files in one stream),
// and is removed from their output.
const PostRenderFileAnnotation = "postrenderer.helm.sh/postrender-filename"

// HookAnnotation makes a chart's object one of its hooks.
const HookAnnotation = "helm.sh/hook"

// Release statuses.
const (
	StatusUnknown         = releasecommon.StatusUnknown
	StatusDeployed        = releasecommon.StatusDeployed
	StatusUninstalled     = releasecommon.StatusUninstalled
	StatusSuperseded      = releasecommon.StatusSuperseded
	StatusFailed          = releasecommon.StatusFailed
	StatusUninstalling    = releasecommon.StatusUninstalling
	StatusPendingInstall  = releasecommon.StatusPendingInstall
	StatusPendingUpgrade  = releasecommon.StatusPendingUpgrade
	StatusPendingRollback = releasecommon.StatusPendingRollback
)

// Hook events and phases.
const (
	HookPreInstall = release.HookPreInstall
	HookTest       = release.HookTest

	HookPhaseUnknown   = release.HookPhaseUnknown
	HookPhaseRunning   = release.HookPhaseRunning
	HookPhaseSucceeded = release.HookPhaseSucceeded
	HookPhaseFailed    = release.HookPhaseFailed
)
