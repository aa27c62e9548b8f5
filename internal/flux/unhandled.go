package flux

import (
	"context"
	"reflect"
	"regexp"
	"slices"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultControllerGrace is how long a wait gives helm-controller to show
// that it handles a HelmRelease just written, while no HelmRelease of the
// cluster is in the middle of a Helm action, before it decides that no
// controller will. helm-controller marks a HelmRelease within seconds of
// a change (a finalizer, a condition) unless every worker is held by a
// Helm action, which marks its own HelmRelease Reconciling.
const DefaultControllerGrace = time.Minute

// graceOf is the client's grace.
func (e *Client) graceOf() time.Duration {
	if e.ControllerGrace > 0 {
		return e.ControllerGrace
	}
	return DefaultControllerGrace
}

// untouched is the HelmRelease as a wait first read it: the controller
// has handled the write once anything of it moves.
type untouched struct {
	status     helmv2.HelmReleaseStatus
	finalizers []string
}

func untouchedOf(hr *helmv2.HelmRelease) *untouched {
	return &untouched{status: *hr.Status.DeepCopy(), finalizers: slices.Clone(hr.Finalizers)}
}

// moved reports whether the controller changed anything of hr since u.
func (u *untouched) moved(hr *helmv2.HelmRelease) bool {
	return !reflect.DeepEqual(u.status, hr.Status) || !slices.Equal(u.finalizers, hr.Finalizers)
}

// inHelmAction reports whether a HelmRelease of the cluster (of the
// namespace, when the cluster's are not readable) is in the middle of a
// Helm action that can still be running: a controller whose workers are
// all held by such actions has not yet taken up a HelmRelease written
// after them. A Reconciling condition older than its action's timeout is
// left by a controller that stopped during the action, and holds no
// worker.
func (e *Client) inHelmAction(ctx context.Context, namespace string, now time.Time) (bool, error) {
	list := &helmv2.HelmReleaseList{}
	err := e.Kube.List(ctx, list)
	if apierrors.IsForbidden(err) {
		err = e.Kube.List(ctx, list, client.InNamespace(namespace))
	}
	if err != nil {
		return false, err
	}
	for i := range list.Items {
		if actionRunning(&list.Items[i], now) {
			return true, nil
		}
	}
	return false, nil
}

// runningAction matches helm-controller's Reconciling message while it
// runs a Helm action ("Running 'upgrade' action with timeout of 5m0s").
var runningAction = regexp.MustCompile(`^Running '[a-z-]+' action with timeout of (\S+)`)

// actionRunning reports whether hr's Reconciling condition says a Helm
// action runs on it that may not have ended by now.
func actionRunning(hr *helmv2.HelmRelease, now time.Time) bool {
	c := apimeta.FindStatusCondition(hr.Status.Conditions, meta.ReconcilingCondition)
	if c == nil || c.Status != "True" || c.Reason != meta.ProgressingReason {
		return false
	}
	m := runningAction.FindStringSubmatch(c.Message)
	if m == nil {
		return false
	}
	timeout, err := time.ParseDuration(m[1])
	if err != nil {
		return true // a message of another form: taken as running
	}
	// The condition's time is when it turned True, which may be before
	// this action began: a failed install runs the test or remediation
	// next, each with its own timeout, under the same condition. Waiting
	// longer than needed only delays the error.
	return now.Before(c.LastTransitionTime.Add(3*timeout + time.Minute))
}
