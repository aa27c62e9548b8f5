package reconcile

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/postrender"
)

// Logger receives what the reconciler does; the provider maps it to tflog.
type Logger interface {
	Info(msg string, kv ...any)
	Debug(msg string, kv ...any)
}

type discardLogger struct{}

func (discardLogger) Info(string, ...any)  {}
func (discardLogger) Debug(string, ...any) {}

// Request is one reconciliation of a release: the desired state and the
// status recorded by the previous one, which the actions update in place.
type Request struct {
	Spec  *Spec
	Chart *helm.Chart
	// ChartDigest is the digest of the chart archive when the revision
	// (the chart's version) does not carry it: a Helm repository's digest
	// of the version, so that a version published again is an upgrade.
	// Empty when the revision says it all.
	ChartDigest string
	Values      map[string]any
	Status      *Status
	// AsInstall makes DryRun and Render render a fresh install even when a
	// release exists: the plan of a resource that may replace the
	// release's owner, which is uninstalled first.
	AsInstall bool
	// Lookups, when set, records the lookup calls of DryRun's and
	// Render's render with the cluster (none when they render
	// client-side: lookup then reads nothing).
	Lookups *helm.Lookups

	// Actions are the actions the run took, in order (set by Reconcile).
	Actions []ActionRecord

	configDigest string
}

// reinstalls reports whether the chart's name changed under the Reinstall
// strategy: the release is uninstalled, then installed afresh.
func (req *Request) reinstalls() bool {
	return req.Status != nil && req.Chart != nil && req.Chart.Metadata != nil && Reinstalls(req.Status, req.Spec, req.Chart.Metadata.Name)
}

// ActionRecord is one action a run took and how it ended.
type ActionRecord struct {
	Name string
	Type ActionType
	// Err is the action's failure, nil when it succeeded.
	Err error
}

// Reconciler runs the actions of one release against one cluster.
type Reconciler struct {
	// Helm is the Helm client of the release's storage namespace; its
	// observer must be Reconciler.Observe.
	Helm helm.Actions
	// Kube serves the target cluster's clients (the Helm client's getter).
	Kube *kube.Getter
	// Logs keeps Helm's last log lines, attached to failures.
	Logs *helm.LogBuffer
	// Key is the resource's key: it keys the digests a status records of
	// values and releases (Digests), required by every action, and the
	// hashes that drift reports show of Secret values (manifest.Hash),
	// which show none without it.
	Key []byte
	// Log receives the reconciler's progress; nil discards it.
	Log Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// ProgressEvery is how often an action waiting for the release's
	// objects logs which are not ready yet (Log, at info level); 0 logs
	// nothing.
	ProgressEvery time.Duration
	// TrustedRender is what the plan of this apply validated (Validated
	// of the plan's engine): the first install or upgrade whose objects
	// are those does not send them again. Used once.
	TrustedRender *kube.ValidatedSet

	// persistentClient keeps discovery between actions (spec.persistentClient).
	persistentClient bool

	mu       sync.Mutex
	observed []observation
	// pendingManifest is the manifest of the newest pending revision
	// written: what the running action applies and waits for.
	pendingManifest string
	// inSync is the record of the newest drift detection.
	inSync *InSyncRecord
	// validated is what DryRun's validation last passed whole.
	validated *kube.ValidatedSet
	// plannedKinds is Options.PlannedKinds; unserved what the newest
	// DryRun rendered of kinds the cluster does not serve, nor the
	// chart's CRDs define (UnservedKinds).
	plannedKinds *kube.PlannedKinds
	unserved     []UnservedKind
	// written are the revisions this reconciler wrote, by "<name>.v<version>":
	// a pending one among them is no other operation's lock.
	written map[string]bool
}

// observation is a release as it was written: Helm goes on mutating the
// object it wrote, so it is described at once.
type observation struct {
	snapshot Snapshot
	err      error
}

// Observe records a release written to storage; pass it as the Helm
// client's observer.
func (e *Reconciler) Observe(rel *helm.Release) {
	snap, err := e.Digests().snapshotOf(rel)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.observed = append(e.observed, observation{snap, err})
	if rel.Info != nil && rel.Info.Status.IsPending() {
		e.pendingManifest = rel.Manifest
	}
}

// applying is the manifest of the newest pending revision written.
func (e *Reconciler) applying() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.pendingManifest
}

// recordObserved turns the releases written since the last call into
// snapshots of req.Status.History, newest first. New revisions record
// chartDigest as the digest of the chart they were made from; revisions
// already recorded keep theirs.
func (e *Reconciler) recordObserved(req *Request, chartDigest string, action ReleaseAction) (int, error) {
	e.mu.Lock()
	observed := e.observed
	e.observed = nil
	e.mu.Unlock()
	n := 0
	for _, o := range observed {
		if o.err != nil {
			return n, o.err
		}
		snap := o.snapshot
		if snap.Name != req.Spec.GetReleaseName() {
			continue
		}
		snap.ChartDigest = chartDigest
		snap.Action = action
		req.Status.recordSnapshot(snap, req.Spec.GetMaxHistory())
		e.mu.Lock()
		if e.written == nil {
			e.written = map[string]bool{}
		}
		e.written[fmt.Sprintf("%s.v%d", snap.Name, snap.Version)] = true
		e.mu.Unlock()
		n++
	}
	return n, nil
}

// StorageUntouchedError is the failure of an action that wrote nothing to
// Helm storage (the cluster unreachable, a chart that does not render): it
// is not a release failure, is not counted against retries and needs no
// remediation; the run stops with it and the next one tries again.
type StorageUntouchedError struct{ Err error }

func (e *StorageUntouchedError) Error() string { return e.Err.Error() }

func (e *StorageUntouchedError) Unwrap() error { return e.Err }

func (e *Reconciler) logger() Logger {
	if e.Log == nil {
		return discardLogger{}
	}
	return e.Log
}

// failure wraps a Helm error with the last lines Helm logged.
func (e *Reconciler) failure(format string, err error, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if e.Logs != nil {
		if lines := e.Logs.String(); lines != "" {
			return fmt.Errorf("%s: %w\n\nLast Helm log lines:\n%s", msg, err, indent(lines))
		}
	}
	return fmt.Errorf("%s: %w", msg, err)
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}

// postRenderer is the chain of the release; its commands stop when ctx
// ends.
func postRenderer(ctx context.Context, s *Spec) postrender.Chain {
	return postrender.Build(ctx, s.PostRenderers, s.CommonMetadata, postrender.Origin{Group: s.OriginGroup, Name: s.Name, Namespace: s.Namespace})
}

// Digests computes the digests of values and releases under the key.
func (e *Reconciler) Digests() Digests { return Digests{Key: e.Key} }

// snapshotOf describes a release as stored, with its digests.
func (d Digests) snapshotOf(rel *helm.Release) (Snapshot, error) {
	s := describeRevision(rel)
	var err error
	if s.Digest, err = d.Release(rel); err != nil {
		return Snapshot{}, err
	}
	if s.ConfigDigest, err = d.Config(rel.Config); err != nil {
		return Snapshot{}, err
	}
	return s, nil
}

// describeRevision describes a release as stored, without digests.
func describeRevision(rel *helm.Release) Snapshot {
	s := Snapshot{Name: rel.Name, Namespace: rel.Namespace, Version: rel.Version}
	if rel.Info != nil {
		s.Status = rel.Info.Status.String()
		s.FirstDeployed = rel.Info.FirstDeployed
		s.LastDeployed = rel.Info.LastDeployed
		s.Deleted = rel.Info.Deleted
	}
	if rel.Chart != nil && rel.Chart.Metadata != nil {
		s.ChartName, s.ChartVersion, s.AppVersion = rel.Chart.Metadata.Name, rel.Chart.Metadata.Version, rel.Chart.Metadata.AppVersion
	}
	for _, h := range rel.Hooks {
		if !isTestHook(h) || h.LastRun.StartedAt.IsZero() {
			continue
		}
		if s.TestHooks == nil {
			s.TestHooks = map[string]TestHook{}
		}
		s.TestHooks[h.Name] = TestHook{
			LastStarted:   h.LastRun.StartedAt,
			LastCompleted: h.LastRun.CompletedAt,
			Phase:         h.LastRun.Phase.String(),
		}
	}
	return s
}

// recordSnapshot replaces the snapshot of the same revision, or inserts
// snap in revision order, keeping at most max (0: unlimited) snapshots.
func (s *Status) recordSnapshot(snap Snapshot, max int) {
	if snap.Status == helm.StatusPendingInstall.String() {
		// A new install starts the release afresh: snapshots of revisions
		// at or above it belong to a purged release.
		kept := s.History[:0]
		for _, h := range s.History {
			if h.Name != snap.Name || h.Namespace != snap.Namespace || h.Version < snap.Version {
				kept = append(kept, h)
			}
		}
		s.History = kept
	}
	for i := range s.History {
		if s.History[i].Targets(snap.Name, snap.Namespace, snap.Version) {
			// Test results are kept when a later write of the revision
			// (e.g. marking it superseded) carries none.
			if snap.TestHooks == nil {
				snap.TestHooks = s.History[i].TestHooks
			}
			// A revision's chart, and the action that made it, never change.
			snap.ChartDigest = s.History[i].ChartDigest
			snap.Action = s.History[i].Action
			s.History[i] = snap
			return
		}
	}
	// Newest first by revision: Helm writes the superseded revision after
	// creating the new one.
	i := 0
	for i < len(s.History) && s.History[i].Version > snap.Version {
		i++
	}
	s.History = append(s.History[:i], append([]Snapshot{snap}, s.History[i:]...)...)
	if max > 0 && len(s.History) > max {
		s.History = s.History[:max]
	}
}

func (e *Reconciler) now() time.Time {
	if e.Now == nil {
		return time.Now()
	}
	return e.Now()
}

// wrote reports whether this reconciler wrote the revision rel.
func (e *Reconciler) wrote(rel *helm.Release) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.written[fmt.Sprintf("%s.v%d", rel.Name, rel.Version)]
}
