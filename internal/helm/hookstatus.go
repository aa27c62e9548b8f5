package helm

import (
	"fmt"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/engine"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/statusreaders"
	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The status readers of hooks, as helm-controller's: a hook Pod is
// current once it succeeded (kstatus would take a running Pod for
// current), and any kind no other reader knows is current once it exists.

var podGK = corev1.SchemeGroupVersion.WithKind("Pod").GroupKind()

// podStatusReader reads a Pod's status from its phase.
type podStatusReader struct{ engine.StatusReader }

func newPodStatusReader(mapper meta.RESTMapper) engine.StatusReader {
	return podStatusReader{statusreaders.NewGenericStatusReader(mapper, podPhaseStatus)}
}

func (podStatusReader) Supports(gk schema.GroupKind) bool { return gk == podGK }

func podPhaseStatus(u *unstructured.Unstructured) (*status.Result, error) {
	switch corev1.PodPhase(status.GetStringField(u.Object, ".status.phase", "")) {
	case corev1.PodSucceeded:
		return &status.Result{Status: status.CurrentStatus, Message: fmt.Sprintf("pod %s succeeded", u.GetName())}, nil
	case corev1.PodFailed:
		return &status.Result{Status: status.FailedStatus, Message: fmt.Sprintf("pod %s failed", u.GetName())}, nil
	default:
		return &status.Result{Status: status.InProgressStatus, Message: "Pod in progress"}, nil
	}
}

// alwaysCurrent reads every object as current.
func alwaysCurrent(mapper meta.RESTMapper) engine.StatusReader {
	return statusreaders.NewGenericStatusReader(mapper, func(*unstructured.Unstructured) (*status.Result, error) {
		return &status.Result{Status: status.CurrentStatus, Message: "Resource is current"}, nil
	})
}
