package reconcile

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
)

// WaitError is a release action that failed waiting: for the release's
// objects to be ready (the timeout ran out), or for a hook to complete. It
// names what was not ready and why, as the cluster tells it.
type WaitError struct {
	// Err is Helm's error.
	Err error
	// Timeout is the action's timeout.
	Timeout time.Duration
	// Hooks are the hooks that failed or did not complete ("pre-install
	// Job ns/name"), when a hook is what failed.
	Hooks []string
	// NotReady are the objects not ready, explained; at most
	// maxExplained of them.
	NotReady []kube.NotReady
	// More names the objects not ready beyond NotReady.
	More []string
	// Checked is how many objects were checked (all unless checking them
	// ran out of time), of Total, how many the wait was for.
	Checked, Total int
}

// maxExplained is how many objects a WaitError explains: enough for what
// blocks a release, short enough to read for a chart of hundreds.
const maxExplained = 10

// maxNamed is how many more objects a WaitError names.
const maxNamed = 20

// explainTimeout bounds the reads that explain a failed wait.
const explainTimeout = 30 * time.Second

// waitLogLines is how many log lines of a failed pod a WaitError shows.
const waitLogLines = 10

func (e *WaitError) Error() string {
	var b strings.Builder
	if len(e.Hooks) > 0 {
		fmt.Fprintf(&b, "hook %s did not complete: %s", strings.Join(e.Hooks, ", "), oneLineErr(e.Err))
	} else {
		fmt.Fprintf(&b, "timed out after %s waiting for %d of %d objects to be ready", e.Timeout, len(e.NotReady)+len(e.More), e.Total)
		if e.Checked < e.Total {
			fmt.Fprintf(&b, " (of the first %d checked)", e.Checked)
		}
	}
	for _, n := range e.NotReady {
		b.WriteString("\n  - " + n.String())
	}
	if len(e.More) > 0 {
		named := e.More
		if len(named) > maxNamed {
			named = named[:maxNamed]
		}
		fmt.Fprintf(&b, "\n  - and %d more not ready: %s", len(e.More), strings.Join(named, ", "))
		if len(e.More) > maxNamed {
			b.WriteString(", …")
		}
	}
	return b.String()
}

func (e *WaitError) Unwrap() error { return e.Err }

// PodLogs are the last log lines of the failed pods of the objects not
// ready, under their object; empty when there are none. They are not part
// of Error: an error's text is kept in status condition messages, and a
// pod's logs may hold secrets the provider never saw (a generated
// password, a connection string). Only the diagnostic of the run shows
// them.
func (e *WaitError) PodLogs() string {
	var b strings.Builder
	for _, n := range e.NotReady {
		if n.Logs != "" {
			fmt.Fprintf(&b, "\n  - %s:\n    %s", n.Object, strings.ReplaceAll(n.Logs, "\n", "\n    "))
		}
	}
	return strings.TrimPrefix(b.String(), "\n")
}

// Causes are the distinct causes of the objects explained, most specific
// first.
func (e *WaitError) Causes() []kube.Cause {
	var out []kube.Cause
	for _, c := range kube.Causes {
		for _, n := range e.NotReady {
			if n.Cause == c {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// explainFailure turns the failure of a release action that started at
// started into a WaitError when it failed waiting: a hook of the action
// that failed or did not complete, or the wait for the release's objects
// running out of time. Otherwise, or when the cluster cannot tell, err is
// returned as it is.
func (e *Reconciler) explainFailure(ctx context.Context, req *Request, err error, started time.Time, timeout time.Duration, waitForJobs bool) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), explainTimeout)
	defer cancel()
	rel, rerr := e.Helm.LastRelease(req.Spec.GetReleaseName())
	if rerr != nil || rel == nil {
		return err
	}
	cs, cerr := e.Helm.Clientset()
	if cerr != nil {
		return err
	}
	x := &kube.Explainer{Client: cs, LogLines: waitLogLines}
	if hooks := helm.FailedHooks(rel, started); len(hooks) > 0 {
		we := &WaitError{Err: err, Timeout: timeout}
		for _, h := range hooks {
			we.Hooks = append(we.Hooks, hookName(h))
			refs, oerr := e.Helm.Objects(rel.Namespace, h.Manifest)
			if oerr != nil {
				continue
			}
			for _, ref := range refs {
				n := x.Explain(ctx, ref)
				if n.Cause == kube.CauseMissing {
					n.Reason = "not found: deleted by its helm.sh/hook-delete-policy, or never created"
				}
				we.NotReady = append(we.NotReady, n)
				we.Total++
			}
		}
		return we
	}
	if p := req.Spec.poller(ctx); p != nil && (helm.IsPollerWaitError(err) || helm.IsWaitTimeout(err)) {
		refs, reasons, total, nerr := e.Helm.NotCurrent(ctx, rel.Namespace, rel.Manifest, p, 0)
		if nerr != nil || len(refs) == 0 {
			return err
		}
		we := &WaitError{Err: err, Timeout: timeout, Checked: total, Total: total}
		for i, ref := range refs {
			if i >= maxExplained {
				we.More = append(we.More, ref.String())
				continue
			}
			n := x.Explain(ctx, ref)
			health := strings.Contains(reasons[i], "health check")
			switch rest, ok := strings.CutPrefix(n.Reason, "not ready"); {
			case ok:
				// A kind the explainer does not know: what the poller
				// saw, the health check's expression included.
				n.Reason = reasons[i] + rest
			case health:
				n.Reason = reasons[i] + "; " + n.Reason
			}
			if health {
				n.Cause = kube.CauseHealthCheck
			}
			we.NotReady = append(we.NotReady, n)
		}
		return we
	}
	if !helm.IsWaitTimeout(err) {
		return err
	}
	refs, checked, total, nerr := e.Helm.NotReady(ctx, rel.Namespace, rel.Manifest, waitForJobs, 0)
	if nerr != nil || len(refs) == 0 {
		return err
	}
	we := &WaitError{Err: err, Timeout: timeout, Checked: checked, Total: total}
	for i, ref := range refs {
		if i < maxExplained {
			we.NotReady = append(we.NotReady, x.Explain(ctx, ref))
		} else {
			we.More = append(we.More, ref.String())
		}
	}
	return we
}

// hookName is "<events> <Kind> <name>" of a hook.
func hookName(h *helm.Hook) string {
	events := make([]string, 0, len(h.Events))
	for _, ev := range h.Events {
		events = append(events, string(ev))
	}
	return strings.Join(events, ",") + " " + h.Kind + " " + h.Name
}

// progressExplained is how many objects a progress line explains.
const progressExplained = 3

// watchProgress logs, every e.ProgressEvery while an action waits, which
// objects of the release it applies are not ready yet and why; the
// returned function stops it. It does nothing when ProgressEvery is 0.
func (e *Reconciler) watchProgress(ctx context.Context, req *Request, action string, timeout time.Duration, waitForJobs bool) (stop func()) {
	if e.ProgressEvery <= 0 {
		return func() {}
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		start := time.Now()
		tick := time.NewTicker(e.ProgressEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				e.logProgress(ctx, req, action, time.Since(start), timeout, waitForJobs)
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

func (e *Reconciler) logProgress(ctx context.Context, req *Request, action string, elapsed, timeout time.Duration, waitForJobs bool) {
	manifest := e.applying()
	if manifest == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, explainTimeout)
	defer cancel()
	// Like Helm's wait, stop at the first objects not ready: a line every
	// few seconds must not read every object of a big release.
	if p := req.Spec.poller(ctx); p != nil {
		refs, reasons, total, err := e.Helm.NotCurrent(ctx, req.Spec.GetTargetNamespace(), manifest, p, progressExplained)
		if err != nil || len(refs) == 0 {
			return
		}
		lines := make([]string, len(refs))
		for i, ref := range refs {
			lines[i] = ref.String() + ": " + reasons[i]
		}
		e.logger().Info(fmt.Sprintf("%s of release %s still waiting (%s of %s) for objects among %d, among them: %s",
			action, releaseRef(req), elapsed.Round(time.Second), timeout, total, strings.Join(lines, " | ")))
		return
	}
	refs, _, total, err := e.Helm.NotReady(ctx, req.Spec.GetTargetNamespace(), manifest, waitForJobs, progressExplained)
	if err != nil || len(refs) == 0 {
		return
	}
	cs, err := e.Helm.Clientset()
	if err != nil {
		return
	}
	x := &kube.Explainer{Client: cs}
	lines := make([]string, 0, len(refs))
	for _, ref := range refs {
		lines = append(lines, x.Explain(ctx, ref).String())
	}
	e.logger().Info(fmt.Sprintf("%s of release %s still waiting (%s of %s) for %d objects, among them: %s",
		action, releaseRef(req), elapsed.Round(time.Second), timeout, total, strings.Join(lines, " | ")))
}

func oneLineErr(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
