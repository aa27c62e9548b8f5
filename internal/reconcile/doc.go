// Package reconcile is the reconciler that gives a Helm release the semantics of
// Flux's HelmRelease (helm-controller API v2), run to completion in one
// process. It imports no Terraform package and is tested against a real
// cluster without Terraform.
//
// The state of a release is decided in one function, DetermineReleaseState,
// by comparing the newest release in Helm storage with the status recorded
// by the previous run (snapshots with release digests) and the desired
// chart, values, post-renderers and options. Reconciler.Reconcile then runs the
// atomic loop: it picks the action the state calls for, runs it, and
// decides again, until the release is in sync or remediation is exhausted:
//
//	state       action                         then
//	Absent      Install                        Untested / InSync, or Failed
//	Unmanaged   Upgrade                        (a release changed by hand is taken back)
//	OutOfSync   Upgrade                        Untested / InSync, or Failed
//	Locked      Unlock (stale locks only)      Failed: remediation takes over
//	Uninstalling UndoUninstall (stale only)    InSync, or OutOfSync: a failed
//	                                           uninstall is taken back
//	Untested    Test                           InSync, or Failed unless ignored
//	Failed      RollbackRemediation or         OutOfSync / Absent: retried while
//	            UninstallRemediation           retries remain
//	Drifted     drift correction               InSync
//	InSync      none                           done: Ready
//
// Install and upgrade failures count against their action's retries
// (negative: unlimited); when none remain the loop stops with
// ErrRetriesExhausted (Stalled), after remediating the last failure when
// remediate_last_failure says so (default: false for install, retries > 0
// for upgrade). Test failures count as failures of the action that was
// tested unless ignored (ignore_test_failures of the action, else
// test.ignore_failures). A new chart version or config digest, or a new
// reset token, resets the counters; a new force token forces one install or
// upgrade whatever the state. Under the strategy RetryOnFailure a failure
// is neither remediated nor counted against a budget: the run stops after
// its one install or upgrade with ErrRetryNextRun, and the next run
// upgrades the failed release again. The loop is bounded: it never runs more than
// maxSteps actions in one run.
//
// Every action is in a file of its own with its contract in its doc
// comment; every Helm call goes through the internal/helm package.
package reconcile
