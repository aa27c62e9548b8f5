package reconcile

import "context"

// ActionType classifies actions for the atomic loop.
type ActionType string

// Action types.
const (
	TypeRelease   ActionType = "release"
	TypeTest      ActionType = "test"
	TypeRemediate ActionType = "remediate"
	TypeUnlock    ActionType = "unlock"
)

// Action is one step of the atomic loop. Reconcile records its outcome in
// req.Status (conditions, counters, snapshots) whether it fails or not; its
// error says why it failed, with Helm's last log lines.
type Action interface {
	Name() string
	Type() ActionType
	Reconcile(ctx context.Context, req *Request) error
}

// Message formats of the conditions, as in helm-controller.
const (
	fmtInstallSuccess   = "Helm install succeeded for release %s with chart %s"
	fmtInstallFailure   = "Helm install failed for release %s with chart %s: %s"
	fmtUpgradeSuccess   = "Helm upgrade succeeded for release %s with chart %s"
	fmtUpgradeFailure   = "Helm upgrade failed for release %s with chart %s: %s"
	fmtTestSuccess      = "Helm test succeeded for release %s with chart %s: %s"
	fmtTestFailure      = "Helm test failed for release %s with chart %s: %s"
	fmtRollbackSuccess  = "Helm rollback to previous release %s with chart %s succeeded"
	fmtRollbackFailure  = "Helm rollback to previous release %s with chart %s failed: %s"
	fmtUninstallSuccess = "Helm uninstall succeeded for release %s with chart %s"
	fmtUninstallFailure = "Helm uninstall failed for release %s with chart %s: %s"
)

// fmtRepublished is the reason of a release whose chart version was
// published again with other content: chart, version, new and old digest.
const fmtRepublished = "chart %s@%s published again with digest %s (the release was made from %s)"
