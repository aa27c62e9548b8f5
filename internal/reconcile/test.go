package reconcile

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
)

// Test runs the release's tests, filtered by spec.test.filters, and records
// their results in the snapshot of the revision. On success TestSuccess is
// True. On failure it is False and, unless the active remediation ignores
// test failures, Failures and the active action's counter grow by one, so
// that the failure is remediated like a failed install or upgrade.
type Test struct{ e *Reconciler }

func (a *Test) Name() string     { return "test" }
func (a *Test) Type() ActionType { return TypeTest }

func (a *Test) Reconcile(ctx context.Context, req *Request) error {
	s, st := req.Spec, req.Status
	var include, exclude []string
	for _, f := range s.Test.Filters {
		if f.Exclude {
			exclude = append(exclude, f.Name)
		} else {
			include = append(include, f.Name)
		}
	}
	_, err := a.e.Helm.Test(s.GetReleaseName(), helm.TestOptions{
		Namespace: s.GetTargetNamespace(), Timeout: s.TestTimeout(), Include: include, Exclude: exclude,
		// Whatever the wait strategy, tests are waited for by polling
		// (Helm 4 waits for them with its watcher; helm-controller with
		// its poller), the health checks included.
		Poller: &helm.Poller{HealthChecks: s.HealthChecks, Context: ctx},
	})
	if _, rerr := a.e.recordObserved(req, "", ""); rerr != nil && err == nil {
		err = rerr
	}
	cur := st.Latest()
	if cur != nil && cur.TestHooks == nil {
		// A release without tests (or all filtered out) has been tested.
		cur.TestHooks = map[string]TestHook{}
	}
	if err != nil {
		st.SetCondition(Condition{Type: ConditionTestSuccess, Status: false, Reason: ReasonTestFailed,
			Message: fmt.Sprintf(fmtTestFailure, releaseRef(req), chartRef(req), err)})
		remediation := s.ActiveRemediation(st)
		if remediation.MustIgnoreTestFailures() {
			a.e.logger().Info("test failure ignored", "release", releaseRef(req), "error", err.Error())
			return nil
		}
		st.Failures++
		if remediation.Action == ActionUpgrade {
			st.UpgradeFailures++
		} else {
			st.InstallFailures++
		}
		return a.e.failure("Helm test failed for release %s with chart %s", err, releaseRef(req), chartRef(req))
	}
	st.SetCondition(Condition{Type: ConditionTestSuccess, Status: true, Reason: ReasonTestSucceeded,
		Message: fmt.Sprintf(fmtTestSuccess, releaseRef(req), chartRef(req), testNames(cur))})
	return nil
}

func testNames(s *Snapshot) string {
	if s == nil || len(s.TestHooks) == 0 {
		return "no tests"
	}
	names := make([]string, 0, len(s.TestHooks))
	for n := range s.TestHooks {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
