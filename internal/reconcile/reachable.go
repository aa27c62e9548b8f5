package reconcile

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// reachableTimeout bounds the request that checks the API server answers.
const reachableTimeout = 5 * time.Second

// Reachable checks that the release's API server answers and is ready,
// with one request to /readyz (which every user may read): nil when it is.
// An answer that refuses the request (401, 403) still shows a reachable
// server. Errors of timed-out waits look like network errors (both carry
// context.DeadlineExceeded): asking the server tells them apart.
func (e *Reconciler) Reachable(ctx context.Context) error {
	cs, err := e.Helm.Clientset()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reachableTimeout)
	defer cancel()
	_, err = cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err == nil || apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err) {
		return nil
	}
	return fmt.Errorf("the API server did not answer /readyz: %w", err)
}
