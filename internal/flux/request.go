package flux

import (
	"context"
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RequestFieldManager writes the annotations of a request, apart from
// the apply's FieldManager: the next apply neither owns nor removes them.
const RequestFieldManager = "terraform-provider-helmrelease-action"

// Request is what `flux reconcile helmrelease` asks of helm-controller.
type Request string

const (
	// RequestForce: one install or upgrade now, even with nothing changed
	// (`flux reconcile helmrelease --force`).
	RequestForce Request = "force"
	// RequestReset: the failure counters reset, so that a release whose
	// retries are exhausted is tried again (`--reset`).
	RequestReset Request = "reset"
)

// Ask annotates the HelmRelease with the request and a requestedAt of the
// same token, which is how helm-controller acts on a force or reset (it
// records the token in status.lastHandledForceAt or lastHandledResetAt),
// and returns the HelmRelease as patched; Wait with the token as
// RequestedAt waits for the controller's outcome.
func (e *Client) Ask(ctx context.Context, hr *helmv2.HelmRelease, req Request, token string) (*helmv2.HelmRelease, error) {
	key := ForceAtAnnotation
	if req == RequestReset {
		key = ResetAtAnnotation
	}
	patch := client.MergeFrom(hr.DeepCopy())
	asked := hr.DeepCopy()
	if asked.Annotations == nil {
		asked.Annotations = map[string]string{}
	}
	asked.Annotations[key], asked.Annotations[RequestedAtAnnotation] = token, token
	if err := e.Kube.Patch(ctx, asked, patch, client.FieldOwner(RequestFieldManager)); err != nil {
		return nil, fmt.Errorf("annotating HelmRelease %s/%s with the %s request: %w", hr.Namespace, hr.Name, req, err)
	}
	return asked, nil
}

// RequestTimeout is how long the outcome of a request may take: the
// HelmRelease's timeout (default five minutes) for the action, again for
// its tests and for a remediation, and a minute for the controller's
// queue.
func RequestTimeout(hr *helmv2.HelmRelease) time.Duration {
	t := 5 * time.Minute
	if hr.Spec.Timeout != nil && hr.Spec.Timeout.Duration > 0 {
		t = hr.Spec.Timeout.Duration
	}
	return 3*t + time.Minute
}
