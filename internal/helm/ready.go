package helm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"helm.sh/helm/v4/pkg/kube"
	release "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/kubernetes"

	k8s "github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
)

// NotReady returns the objects of manifest that Helm's wait would still
// wait for, in manifest order, judged as the wait judges them: paused
// Deployments count as ready, Jobs only count with waitForJobs, an object
// that does not exist is not ready. Objects without a namespace are in
// namespace when their kind is namespaced. It stops after limit objects
// not ready (0: no limit), or when ctx ends; checked says how many objects
// it checked, of total.
func (c *Client) NotReady(ctx context.Context, namespace, manifest string, waitForJobs bool, limit int) (notReady []k8s.ObjectRef, checked, total int, err error) {
	kc := c.kube.Client
	cs, err := kc.Factory.KubernetesClientSet()
	if err != nil {
		return nil, 0, 0, fmt.Errorf("creating Kubernetes client: %w", err)
	}
	infos, err := objectInfos(kc, namespace, manifest)
	if err != nil {
		return nil, 0, 0, err
	}
	checker := kube.NewReadyChecker(cs, kube.PausedAsReady(true), kube.CheckJobs(waitForJobs))
	for _, info := range infos {
		if ctx.Err() != nil || (limit > 0 && len(notReady) == limit) {
			break
		}
		checked++
		if ready, _ := checker.IsReady(ctx, info); !ready {
			notReady = append(notReady, k8s.ObjectRef{GVK: info.Mapping.GroupVersionKind, Namespace: info.Namespace, Name: info.Name})
		}
	}
	return notReady, checked, len(infos), nil
}

// Objects are the objects of manifest, in order; objects without a
// namespace are in namespace when their kind is namespaced.
func (c *Client) Objects(namespace, manifest string) ([]k8s.ObjectRef, error) {
	kc := c.kube.Client
	infos, err := objectInfos(kc, namespace, manifest)
	if err != nil {
		return nil, err
	}
	out := make([]k8s.ObjectRef, 0, len(infos))
	for _, info := range infos {
		out = append(out, k8s.ObjectRef{GVK: info.Mapping.GroupVersionKind, Namespace: info.Namespace, Name: info.Name})
	}
	return out, nil
}

func objectInfos(kc *kube.Client, namespace, manifest string) ([]*resource.Info, error) {
	infos, err := kc.Factory.NewBuilder().Unstructured().ContinueOnError().
		NamespaceParam(namespace).DefaultNamespace().
		Stream(strings.NewReader(manifest), "manifest").Flatten().Do().Infos()
	if err != nil {
		return nil, fmt.Errorf("reading the release's objects: %w", err)
	}
	return infos, nil
}

// Clientset is the typed client of the release's cluster, for reading
// what Helm's objects say of themselves.
func (c *Client) Clientset() (kubernetes.Interface, error) {
	kc := c.kube.Client
	cs, err := kc.Factory.KubernetesClientSet()
	if err != nil {
		return nil, fmt.Errorf("creating Kubernetes client: %w", err)
	}
	return cs, nil
}

// IsWaitTimeout reports whether err is a wait for readiness that ran out of
// time: Helm's wait for the release's objects, or for a hook's.
func IsWaitTimeout(err error) bool {
	// client-go's rate limiter refuses a request it could not send before
	// the deadline, with an error of its own.
	return errors.Is(err, context.DeadlineExceeded) || wait.Interrupted(err) ||
		(err != nil && strings.Contains(err.Error(), "would exceed context deadline"))
}

// FailedHooks are the hooks of rel that started at or after since (those
// of the action that just failed) and failed or never finished.
func FailedHooks(rel *release.Release, since time.Time) []*release.Hook {
	var out []*release.Hook
	for _, h := range rel.Hooks {
		if h.LastRun.StartedAt.IsZero() || h.LastRun.StartedAt.Before(since) {
			continue
		}
		if h.LastRun.Phase == release.HookPhaseFailed || h.LastRun.Phase == release.HookPhaseRunning || h.LastRun.Phase == release.HookPhaseUnknown {
			out = append(out, h)
		}
	}
	return out
}
