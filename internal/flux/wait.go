package flux

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/git"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Want is what the controller must report of a HelmRelease written by
// Apply for the wait to succeed.
type Want struct {
	// Generation is the HelmRelease's generation as written.
	Generation int64
	// SourceRevision is the planned revision of a Git or bucket source
	// (chartsource.Resolved.SourceRevision), empty for others.
	SourceRevision string
	// RequestedAt is the reconcile request token written, if any.
	RequestedAt string
	// ChartVersion is the revision the plan resolved; ConfigDigest the
	// digest of the values it composed, as the controller computes it
	// (ConfigDigest). Empty: not checked.
	ChartVersion string
	ConfigDigest string
	// Since is when the write was made, by the API server's clock (the
	// cluster's, as the controllers' conditions and events are), in
	// whole seconds (WriteTime): errors name the controller's events from
	// then on.
	Since time.Time
	// ReconcilingAt is when the controller marked the HelmRelease
	// Reconciling, as the write found it (zero when it was not): a
	// reconcile that was running then, on what was there before, is not
	// taking the write up.
	ReconcilingAt time.Time
	// TakenUp ends the wait once the controller has taken up the
	// generation and request written (TakenUp), before their outcome.
	TakenUp bool
}

// Wait waits, as the flux CLI does, until the controller has observed the
// HelmRelease's generation (and handled RequestedAt), and reports it
// Ready with the newest history entry at the wanted chart version and
// values; with want.TakenUp, only until it has taken them up. Stalled ends the wait at once; so does a failure the controller
// retries after an interval (RetryOnFailure), and Ready with another
// revision. On timeout or failure the error is a *NotReadyError saying
// why, from the HelmRelease's conditions, its source's and the events the
// controllers recorded since the write (what they ran: remediations
// included).
//
// A HelmRelease no controller handles ends the wait before its timeout:
// when, for the controller's grace, nothing of it moved and no
// HelmRelease of the cluster was in a Helm action (which holds a busy
// controller's worker).
func (e *Client) Wait(ctx context.Context, namespace, name string, want Want, timeout time.Duration) (*helmv2.HelmRelease, error) {
	deadline := time.Now().Add(timeout)
	// This machine's clock: want.Since is the cluster's.
	quietSince := time.Now()
	var hr *helmv2.HelmRelease
	var first *untouched
	handled := false
	for {
		var err error
		hr, err = e.Get(ctx, namespace, name)
		if err != nil {
			return nil, err
		}
		if hr == nil {
			return nil, fmt.Errorf("HelmRelease %s/%s was deleted while waiting for it", namespace, name)
		}
		switch {
		case first == nil:
			first = untouchedOf(hr)
		case handled:
		case first.moved(hr):
			handled = true // the full timeout applies
		case time.Since(quietSince) >= e.graceOf():
			now := time.Now()
			if busy, err := e.inHelmAction(ctx, namespace, now); err != nil || busy {
				quietSince = now // a controller may be busy: another grace
				break
			}
			nr := e.notReady(ctx, hr, want, timeout, false)
			nr.Grace = e.graceOf()
			return hr, nr
		}
		if want.TakenUp && TakenUp(hr, want) {
			return hr, nil
		}
		if !apimeta.IsStatusConditionTrue(hr.Status.Conditions, meta.ReadyCondition) && (hr.Spec.ChartRef != nil || hr.Status.ObservedGeneration >= want.Generation) {
			// source-controller gave up on the chart since the write (a
			// values file missing): helm-controller would wait for it
			// until the timeout, without attempting the release.
			if stalled := e.chartStalled(ctx, hr, want.Since); stalled != "" {
				err := e.notReady(ctx, hr, want, timeout, false)
				err.SourceStalled = stalled
				return hr, err
			}
		}
		switch phaseOf(hr, want) {
		case phaseStalled:
			return hr, e.notReady(ctx, hr, want, timeout, true)
		case phaseRetryingLater:
			err := e.notReady(ctx, hr, want, timeout, false)
			err.RetryingLater = true
			return hr, err
		case phaseReady:
			asPlanned := e.AsPlanned(ctx, hr)
			mismatch := historyMismatch(hr, want, asPlanned)
			switch {
			case mismatch == "":
				return hr, nil
			case !e.chartBehind(ctx, hr, want, asPlanned):
				err := e.notReady(ctx, hr, want, timeout, false)
				err.Mismatch = mismatch
				return hr, err
			}
			// Ready with the HelmChart's older artifact: the controller
			// acts again once the HelmChart has built the planned one.
		}
		if time.Now().After(deadline) {
			return hr, e.notReady(ctx, hr, want, timeout, false)
		}
		select {
		case <-ctx.Done():
			return hr, fmt.Errorf("waiting for HelmRelease %s/%s: %w", namespace, name, ctx.Err())
		case <-time.After(e.poll()):
		}
	}
}

// AsPlanned returns the function that writes a chart version the
// controllers report for hr in the form the plan resolved it. A chart
// with values files is versioned by source-controller with its
// HelmChart's generation as the last build metadata (1.0.0+3, or
// 1.0.0+<revision>.3 under the Revision strategy), and by the plan with
// the files' digest in its place: a version of the HelmChart's current
// generation that matches the plan's otherwise (PlannedVersionAnnotation)
// is the planned one. Other versions are returned as they are.
func (e *Client) AsPlanned(ctx context.Context, hr *helmv2.HelmRelease) func(string) string {
	same := func(v string) string { return v }
	planned := hr.Annotations[PlannedVersionAnnotation]
	namespace, name, ok := generatedHelmChart(hr)
	if ref := hr.Spec.ChartRef; ref != nil && ref.Kind == sourcev1.HelmChartKind {
		// The HelmChart the provider shares among a namespace's releases.
		namespace, name, ok = hr.Namespace, ref.Name, true
		if ref.Namespace != "" {
			namespace = ref.Namespace
		}
	}
	if planned == "" || !ok {
		return same
	}
	chart := &sourcev1.HelmChart{}
	if e.Kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, chart) != nil || len(chart.Spec.ValuesFiles) == 0 {
		return same
	}
	return asPlannedBy(planned, strconv.FormatInt(chart.Generation, 10))
}

// asPlannedBy is AsPlanned's function for the planned version and the
// HelmChart's generation.
func asPlannedBy(planned, generation string) func(string) string {
	pBase, pMeta, _ := strings.Cut(planned, "+")
	pParts := strings.Split(pMeta, ".")
	return func(v string) string {
		base, meta, ok := strings.Cut(v, "+")
		parts := strings.Split(meta, ".")
		if !ok || base != pBase || len(parts) != len(pParts) || parts[len(parts)-1] != generation || !slices.Equal(parts[:len(parts)-1], pParts[:len(pParts)-1]) {
			return v
		}
		return planned
	}
}

// phase is where the controller stands with the generation and request a
// wait is for, as its status tells.
type phase int

const (
	// phasePending: the controller has not reported on them yet, or its
	// status decides nothing (neither Ready, Reconciling nor Stalled).
	phasePending phase = iota
	// phaseReconciling: it is at work on them, or requeued them at once
	// to remediate a failure (remediation retries left).
	phaseReconciling
	// phaseRetryingLater: its attempt failed; it retries after the
	// strategy's interval (RetryOnFailure).
	phaseRetryingLater
	// phaseStalled: it gave up on them.
	phaseStalled
	// phaseReady: it reports them Ready.
	phaseReady
)

// phaseOf decides the phase of hr for want. Reconciling comes before
// Stalled, as in kstatus: the controller deletes Reconciling when it marks
// Stalled, and leaves a Stalled condition in place when a later reconcile
// starts until that one ends Ready. A reconcile that stalled on the older
// spec while the HelmRelease was written reports, as it ends, the
// generation its status patches read back (the one written): the
// reconcile of that generation, which follows, starts with the older
// Stalled still set.
func phaseOf(hr *helmv2.HelmRelease, want Want) phase {
	conds := hr.Status.Conditions
	switch {
	case !observed(hr, want):
		return phasePending
	case retryingLater(hr):
		return phaseRetryingLater
	case apimeta.IsStatusConditionTrue(conds, meta.ReconcilingCondition):
		return phaseReconciling
	case apimeta.IsStatusConditionTrue(conds, meta.StalledCondition):
		return phaseStalled
	case apimeta.IsStatusConditionTrue(conds, meta.ReadyCondition):
		return phaseReady
	}
	return phasePending
}

// retryingLater reports whether the controller's last attempt failed and
// it retries after the strategy's interval (RetryOnFailure): it marks
// Reconciling so, with the interval in the message, and requeues.
func retryingLater(hr *helmv2.HelmRelease) bool {
	c := apimeta.FindStatusCondition(hr.Status.Conditions, meta.ReconcilingCondition)
	return c != nil && c.Status == metav1.ConditionTrue && c.Reason == meta.ProgressingWithRetryReason &&
		strings.HasPrefix(c.Message, "retrying after") && !apimeta.IsStatusConditionTrue(hr.Status.Conditions, meta.ReadyCondition)
}

// observed reports whether the controller's status is about the
// generation and request written. Its last attempt must be of that
// generation too: a reconcile that was running when the HelmRelease was
// written reports, as it ends, the generation and request it read back
// with its status patch, with the outcome of the older spec it ran.
func observed(hr *helmv2.HelmRelease, want Want) bool {
	if hr.Status.ObservedGeneration < want.Generation || hr.Status.LastAttemptedGeneration < want.Generation {
		return false
	}
	return want.RequestedAt == "" || hr.Status.LastHandledReconcileAt == want.RequestedAt
}

// TakenUp reports whether the controller has taken up the generation and
// request want names: it marked them Reconciling since the write (it does
// so, and writes the status, before it looks at dependencies and the
// chart), in a reconcile other than one running when the write was made,
// or it has already ended a reconcile of them. Times are the cluster's,
// in whole seconds: a request alone (no new generation) is taken up by a
// reconcile marked in the second of the write or later.
func TakenUp(hr *helmv2.HelmRelease, want Want) bool {
	if observed(hr, want) {
		return true
	}
	c := apimeta.FindStatusCondition(hr.Status.Conditions, meta.ReconcilingCondition)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration >= want.Generation &&
		!c.LastTransitionTime.Time.Before(want.Since.Truncate(time.Second)) &&
		(want.ReconcilingAt.IsZero() || c.LastTransitionTime.After(want.ReconcilingAt))
}

// WriteTime is when the API server recorded the write of hr by
// FieldManager (its managed fields' time, by the cluster's clock, in
// whole seconds); fallback when it records none.
func WriteTime(hr *helmv2.HelmRelease, fallback time.Time) time.Time {
	var at time.Time
	for _, m := range hr.ManagedFields {
		if m.Manager == FieldManager && m.Subresource == "" && m.Time != nil && m.Time.After(at) {
			at = m.Time.Time
		}
	}
	if at.IsZero() {
		return fallback
	}
	return at
}

// ReconcilingSince is when the controller marked hr Reconciling, zero
// when it is not.
func ReconcilingSince(hr *helmv2.HelmRelease) time.Time {
	if c := apimeta.FindStatusCondition(hr.Status.Conditions, meta.ReconcilingCondition); c != nil && c.Status == metav1.ConditionTrue {
		return c.LastTransitionTime.Time
	}
	return time.Time{}
}

// historyMismatch says how the newest history entry differs from want.
func historyMismatch(hr *helmv2.HelmRelease, want Want, asPlanned func(string) string) string {
	latest := hr.Status.History.Latest()
	if latest == nil {
		return "the controller reports no release in its history"
	}
	var diffs []string
	if want.ChartVersion != "" && asPlanned(latest.ChartVersion) != want.ChartVersion {
		diffs = append(diffs, fmt.Sprintf("chart version %s, planned %s", latest.ChartVersion, want.ChartVersion))
	}
	if want.ConfigDigest != "" && latest.ConfigDigest != want.ConfigDigest {
		diffs = append(diffs, "values other than the planned ones")
	}
	if len(diffs) == 0 {
		return ""
	}
	return fmt.Sprintf("the controller reports revision %d ready with %s", latest.Version, strings.Join(diffs, " and "))
}

// NotReadyError: the controller did not report the release ready as
// planned.
type NotReadyError struct {
	Namespace, Name string
	// Stalled: the controller gave up (retries exhausted, or an error it
	// will not retry).
	Stalled bool
	// Observed: the controller observed the generation written.
	Observed bool
	// RetryingLater: the attempt failed and the controller retries it
	// after the strategy's retry interval (RetryOnFailure).
	RetryingLater bool
	// Mismatch says how a Ready release differs from the plan.
	Mismatch string
	// SourceStalled names the chart source source-controller stopped
	// retrying, with its reason.
	SourceStalled string
	Timeout       time.Duration
	// Grace, when set, ended the wait before its timeout: nothing of the
	// HelmRelease moved for this long (DefaultControllerGrace).
	Grace time.Duration
	// Conditions are the HelmRelease's; Source the chart source's
	// (kind, name, then its Ready condition); Events the newest events of
	// the HelmRelease and its source since the write, oldest first.
	Conditions []metav1.Condition
	Source     string
	Events     []string
	// Failures are the controller's failure counters.
	InstallFailures, UpgradeFailures int64
}

func (e *NotReadyError) Error() string {
	var b strings.Builder
	ref := fmt.Sprintf("HelmRelease %s/%s", e.Namespace, e.Name)
	switch {
	case e.Mismatch != "":
		fmt.Fprintf(&b, "%s: %s", ref, e.Mismatch)
	case e.Stalled:
		fmt.Fprintf(&b, "%s stalled: the controller does not retry", ref)
	case e.SourceStalled != "":
		fmt.Fprintf(&b, "%s cannot get its chart: source-controller stopped retrying %s", ref, e.SourceStalled)
	case e.RetryingLater:
		fmt.Fprintf(&b, "%s failed: the controller retries it after its retry interval (strategy RetryOnFailure)", ref)
	case e.Grace > 0:
		fmt.Fprintf(&b, "%s was not taken up within %s of its write (nothing of it moved while no HelmRelease was in a Helm action): no Flux helm-controller handled its latest change; check that helm-controller runs in the cluster and watches namespace %q", ref, e.Grace, e.Namespace)
	case !e.Observed:
		fmt.Fprintf(&b, "%s was not reconciled within %s: no Flux helm-controller handled its latest change; check that helm-controller runs in the cluster and watches namespace %q", ref, e.Timeout, e.Namespace)
	default:
		fmt.Fprintf(&b, "%s not ready after %s", ref, e.Timeout)
	}
	// All of them: Released and Remediated say what the controller ran.
	for _, c := range e.Conditions {
		fmt.Fprintf(&b, "\n  - %s=%s (%s): %s", c.Type, c.Status, c.Reason, c.Message)
	}
	if e.InstallFailures+e.UpgradeFailures > 0 {
		fmt.Fprintf(&b, "\n  - failures: %d install, %d upgrade", e.InstallFailures, e.UpgradeFailures)
	}
	if e.Source != "" {
		fmt.Fprintf(&b, "\n  - %s", e.Source)
	}
	if len(e.Events) > 0 {
		b.WriteString("\n  Events:")
		for _, ev := range e.Events {
			b.WriteString("\n    " + ev)
		}
	}
	return b.String()
}

// maxEvents is the number of events a NotReadyError names.
const maxEvents = 8

func (e *Client) notReady(ctx context.Context, hr *helmv2.HelmRelease, want Want, timeout time.Duration, stalled bool) *NotReadyError {
	err := &NotReadyError{
		Namespace: hr.Namespace, Name: hr.Name, Stalled: stalled, Observed: observed(hr, want), Timeout: timeout,
		Conditions: hr.Status.Conditions, InstallFailures: hr.Status.InstallFailures, UpgradeFailures: hr.Status.UpgradeFailures,
	}
	// What follows is best effort: the wait's own outcome stands.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	kinds := []string{helmv2.HelmReleaseKind}
	names := []string{hr.Name}
	if kind, name := sourceOf(hr); kind != "" {
		err.Source = e.sourceState(ctx, hr.Namespace, kind, name)
		if chartNamespace, chartName, ok := generatedHelmChart(hr); ok && (kind == sourcev1.GitRepositoryKind || kind == sourcev1.BucketKind) {
			// The chart helm-controller deploys is the HelmChart's build.
			err.Source += "\n  - " + e.sourceState(ctx, chartNamespace, sourcev1.HelmChartKind, chartName) + e.artifactOf(ctx, chartNamespace, chartName)
		}
		kinds, names = append(kinds, kind), append(names, name)
	}
	var events []corev1.Event
	for i := range kinds {
		list := &corev1.EventList{}
		sel := fields.AndSelectors(fields.OneTermEqualSelector("involvedObject.kind", kinds[i]), fields.OneTermEqualSelector("involvedObject.name", names[i]))
		if e.Kube.List(ctx, list, client.InNamespace(hr.Namespace), client.MatchingFieldsSelector{Selector: sel}) == nil {
			for _, ev := range list.Items {
				// Seconds: the events' times are whole seconds.
				if !eventTime(ev).Before(want.Since.Truncate(time.Second)) {
					events = append(events, ev)
				}
			}
		}
	}
	slices.SortFunc(events, func(a, b corev1.Event) int { return eventTime(a).Compare(eventTime(b)) })
	if len(events) > maxEvents {
		events = events[len(events)-maxEvents:]
	}
	for _, ev := range events {
		err.Events = append(err.Events, fmt.Sprintf("%s %s %s/%s %s: %s", eventTime(ev).UTC().Format(time.RFC3339), ev.Type, ev.InvolvedObject.Kind, ev.InvolvedObject.Name, ev.Reason, strings.TrimSpace(ev.Message)))
	}
	return err
}

func eventTime(ev corev1.Event) time.Time {
	switch {
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	default:
		return ev.CreationTimestamp.Time
	}
}

// chartBehind reports whether the controllers are still bringing the
// planned chart to the HelmRelease: a chart from Git whose GitRepository
// the apply moved to another commit, or from a bucket it asked to list
// again, leaves the HelmRelease's spec as it was, so helm-controller may
// find the release in sync with the HelmChart's older artifact first,
// and acts again once source-controller has fetched the planned revision
// and built the HelmChart from it. It is behind until the source's
// artifact is the planned revision (while source-controller is at work on
// it), the HelmChart has built the planned version from it (unless its
// build failed), and helm-controller has deployed that. A source settled
// on another revision (a bucket changed since the plan) is a mismatch.
func (e *Client) chartBehind(ctx context.Context, hr *helmv2.HelmRelease, want Want, asPlanned func(string) string) bool {
	if want.ChartVersion == "" || want.SourceRevision == "" || hr.Spec.Chart == nil {
		return false
	}
	ref := hr.Spec.Chart.Spec.SourceRef
	if templateKind(hr) != sourcev1.HelmChartKind || ref == nil || ref.Kind != sourcev1.GitRepositoryKind && ref.Kind != sourcev1.BucketKind {
		return false
	}
	src := &unstructured.Unstructured{}
	src.SetAPIVersion(sourcev1.GroupVersion.String())
	src.SetKind(ref.Kind)
	srcNamespace := ref.Namespace
	if srcNamespace == "" {
		srcNamespace = hr.Namespace
	}
	if e.Kube.Get(ctx, client.ObjectKey{Namespace: srcNamespace, Name: ref.Name}, src) != nil {
		return false
	}
	artifact, _, _ := unstructured.NestedString(src.Object, "status", "artifact", "revision")
	if !sameRevision(artifact, want.SourceRevision) {
		observed, _, _ := unstructured.NestedInt64(src.Object, "status", "observedGeneration")
		handled, _, _ := unstructured.NestedString(src.Object, "status", "lastHandledReconcileAt")
		conditions, _, _ := unstructured.NestedSlice(src.Object, "status", "conditions")
		requested := src.GetAnnotations()[RequestedAtAnnotation]
		return observed < src.GetGeneration() || requested != "" && handled != requested || working(conditions)
	}
	namespace, name, ok := generatedHelmChart(hr)
	if !ok {
		return true // the HelmChart is not made yet
	}
	chart := &sourcev1.HelmChart{}
	if e.Kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, chart) != nil {
		return false
	}
	if !sameRevision(chart.Status.ObservedSourceArtifactRevision, want.SourceRevision) || chart.Status.Artifact == nil || asPlanned(chart.Status.Artifact.Revision) != want.ChartVersion {
		failed := apimeta.IsStatusConditionFalse(chart.Status.Conditions, meta.ReadyCondition) && !apimeta.IsStatusConditionTrue(chart.Status.Conditions, meta.ReconcilingCondition)
		return !failed
	}
	latest := hr.Status.History.Latest()
	return latest == nil || asPlanned(latest.ChartVersion) != want.ChartVersion
}

// sameRevision reports whether two artifact revisions name the same
// commit or digest (a Git revision's reference may be written otherwise).
func sameRevision(a, b string) bool {
	return a != "" && b != "" && git.ExtractHashFromRevision(a).String() == git.ExtractHashFromRevision(b).String()
}

// working reports whether a source's conditions say source-controller is
// at work on it: Reconciling, or an outdated artifact.
func working(conditions []any) bool {
	for _, c := range conditions {
		m, _ := c.(map[string]any)
		if (m["type"] == meta.ReconcilingCondition || m["type"] == sourcev1.ArtifactOutdatedCondition) && m["status"] == string(metav1.ConditionTrue) {
			return true
		}
	}
	return false
}

// sourceOf is the kind and name of the HelmRelease's chart source: of
// spec.chartRef, of its chart template's sourceRef, or the OCIRepository
// helm-controller generates from a template of that kind (v1.7), named
// as the controller names it, in the HelmRelease's namespace.
func sourceOf(hr *helmv2.HelmRelease) (kind, name string) {
	switch {
	case hr.Spec.ChartRef != nil:
		return hr.Spec.ChartRef.Kind, hr.Spec.ChartRef.Name
	case templateKind(hr) == sourcev1.OCIRepositoryKind:
		ref := hr.GetHelmChartTemplateReference()
		return ref.Kind, ref.Name
	case hr.Spec.Chart != nil && hr.Spec.Chart.Spec.SourceRef != nil:
		return hr.Spec.Chart.Spec.SourceRef.Kind, hr.Spec.Chart.Spec.SourceRef.Name
	}
	return "", ""
}

// chartStalled names the object the HelmRelease's chart is built from
// (its HelmChart, or the object of spec.chartRef) when source-controller
// marked it Stalled at its current generation since since, with the
// reason; empty otherwise. Stalled is for errors it does not retry until
// the object changes (a values file missing). An invalid chart reference
// is not taken for one: a HelmChart of a version its HelmRepository's
// index lacks yet is built again once the index is fetched.
func (e *Client) chartStalled(ctx context.Context, hr *helmv2.HelmRelease, since time.Time) string {
	kind, name := sourceOf(hr)
	namespace := hr.Namespace
	if hr.Spec.ChartRef != nil && hr.Spec.ChartRef.Namespace != "" {
		namespace = hr.Spec.ChartRef.Namespace
	}
	if hr.Spec.Chart != nil {
		k, ns, n, ok := generatedObject(hr)
		if !ok {
			return ""
		}
		kind, namespace, name = k, ns, n
	}
	if kind == "" {
		return ""
	}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(sourcev1.GroupVersion.String())
	u.SetKind(kind)
	if e.Kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, u) != nil {
		return ""
	}
	observedGeneration, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	if observedGeneration < u.GetGeneration() {
		return ""
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] != meta.StalledCondition || m["status"] != string(metav1.ConditionTrue) || m["reason"] == "InvalidChartReference" {
			continue
		}
		if at, err := time.Parse(time.RFC3339, fmt.Sprint(m["lastTransitionTime"])); err != nil || at.Before(since.Truncate(time.Second)) {
			continue // stalled before the write: it may be what the write fixes
		}
		return fmt.Sprintf("%s %s/%s (%s): %s", kind, namespace, name, m["reason"], m["message"])
	}
	return ""
}

// artifactOf names the revision of the HelmChart's artifact, and the
// source revision it observed.
func (e *Client) artifactOf(ctx context.Context, namespace, name string) string {
	chart := &sourcev1.HelmChart{}
	if e.Kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, chart) != nil || chart.Status.Artifact == nil {
		return ""
	}
	return fmt.Sprintf(" (artifact %s, built from %s)", chart.Status.Artifact.Revision, chart.Status.ObservedSourceArtifactRevision)
}

// sourceState says whether the source is ready, and if not why.
func (e *Client) sourceState(ctx context.Context, namespace, kind, name string) string {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("source.toolkit.fluxcd.io/v1")
	u.SetKind(kind)
	ref := fmt.Sprintf("%s %s/%s", kind, namespace, name)
	if err := e.Kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, u); err != nil {
		return ref + ": not readable: " + err.Error()
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	state := ref + ": no Ready condition: source-controller has not reconciled it"
	verified := ""
	for _, c := range conds {
		m, _ := c.(map[string]any)
		switch m["type"] {
		case meta.ReadyCondition:
			state = fmt.Sprintf("%s: Ready=%s (%s): %s", ref, m["status"], m["reason"], m["message"])
		case sourcev1.SourceVerifiedCondition:
			verified = fmt.Sprintf("; SourceVerified=%s (%s): %s", m["status"], m["reason"], m["message"])
		}
	}
	return state + verified
}
