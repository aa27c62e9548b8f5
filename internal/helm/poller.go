package helm

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/clusterreader"
	"github.com/fluxcd/cli-utils/pkg/kstatus/polling/engine"
	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/fluxcd/pkg/runtime/cel"
	"github.com/fluxcd/pkg/runtime/statusreaders"
	"github.com/fluxcd/pkg/ssa"
	ssautils "github.com/fluxcd/pkg/ssa/utils"
	"helm.sh/helm/v4/pkg/kube"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	k8s "github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
)

// WaitStrategy is how an action waits for its objects (the HelmRelease's
// spec.waitStrategy.name).
type WaitStrategy string

// Wait strategies.
const (
	// WaitLegacy is Helm 3's waiter: Deployments, StatefulSets,
	// DaemonSets, Jobs, Pods, Services and PVCs; anything else is ready
	// once it exists.
	WaitLegacy WaitStrategy = "legacy"
	// WaitPoller polls kstatus, as helm-controller's poller does: every
	// object that follows the Kubernetes status conventions, custom
	// resources included, and the health checks' CEL expressions first.
	WaitPoller WaitStrategy = "poller"
)

// pollInterval is how often the poller reads the objects.
const pollInterval = 1 * time.Second

// Poller waits as helm-controller's poller strategy does.
type Poller struct {
	// HealthChecks are CEL expressions of the status of kinds
	// (healthCheckExprs), evaluated before kstatus.
	HealthChecks []kustomize.CustomHealthCheck
	// Context ends the wait early (Helm's Wait takes none).
	Context context.Context
}

// NewHealthCheckReader checks health checks as the poller will use them:
// the error names the check and expression that does not compile.
func NewHealthCheckReader(checks []kustomize.CustomHealthCheck) (func(meta.RESTMapper) engine.StatusReader, error) {
	return cel.NewStatusReader(checks)
}

// kubeClient is Helm's kube client with the waiter of the action under way,
// as helm-controller's: Helm's legacy waiter when the action waits the
// legacy way (poller nil), else the Poller, which also watches the hooks.
type kubeClient struct {
	// The struct, not kube.Interface: Helm type-asserts its client for
	// methods outside the interface.
	*kube.Client
	getter genericclioptions.RESTClientGetter
	poller *Poller
	// reads answers Helm's object-by-object GETs of what Build made.
	reads *readAhead
}

var (
	_ kube.Interface            = (*kubeClient)(nil)
	_ kube.InterfaceWaitOptions = (*kubeClient)(nil)
)

func (k *kubeClient) GetWaiter(s kube.WaitStrategy) (kube.Waiter, error) {
	return k.GetWaiterWithOptions(s)
}

// GetWaiterWithOptions is the waiter of strategy s: kube.HookOnlyStrategy
// watches the hooks only. A test (kube.StatusWatcherStrategy with no
// poller set) is watched by a Poller too, as helm-controller watches it.
func (k *kubeClient) GetWaiterWithOptions(s kube.WaitStrategy, opts ...kube.WaitOption) (kube.Waiter, error) {
	var w kube.Waiter
	switch p := k.poller; {
	case p != nil:
		w = &pollWaiter{k: k, p: p}
	case s == kube.StatusWatcherStrategy:
		w = &pollWaiter{k: k, p: &Poller{}}
	default:
		legacy, err := k.Client.GetWaiterWithOptions(kube.LegacyStrategy, opts...)
		if err != nil {
			return nil, err
		}
		w = legacy
	}
	if s == kube.HookOnlyStrategy {
		return hooksOnly{w}, nil
	}
	return w, nil
}

// hooksOnly watches hooks and waits for nothing else.
type hooksOnly struct{ kube.Waiter }

func (hooksOnly) Wait(kube.ResourceList, time.Duration) error          { return nil }
func (hooksOnly) WaitWithJobs(kube.ResourceList, time.Duration) error  { return nil }
func (hooksOnly) WaitForDelete(kube.ResourceList, time.Duration) error { return nil }

// pollWaiter is helm-controller's waiter (v1.5 and later, for its poller
// strategy): fluxcd/pkg/ssa's polling of kstatus, health checks first.
type pollWaiter struct {
	k *kubeClient
	p *Poller
}

func (w *pollWaiter) Wait(resources kube.ResourceList, timeout time.Duration) error {
	return w.k.poll(w.p, resources, timeout, true, false)
}

func (w *pollWaiter) WaitWithJobs(resources kube.ResourceList, timeout time.Duration) error {
	return w.k.poll(w.p, resources, timeout, true, true)
}

// WatchUntilReady waits for hooks: Jobs to complete and Pods to succeed,
// anything else (but what a health check names) ready once it exists. It
// never fails early: a hook may be a migration that retries.
func (w *pollWaiter) WatchUntilReady(resources kube.ResourceList, timeout time.Duration) error {
	return w.k.poll(w.p, resources, timeout, false, true, newPodStatusReader, alwaysCurrent)
}

// WaitForDelete waits until every object of resources is gone
// (waitDeleted).
func (w *pollWaiter) WaitForDelete(resources kube.ResourceList, timeout time.Duration) error {
	c, err := w.k.controllerClient()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(w.p.context(), timeout)
	defer cancel()
	return waitDeleted(ctx, c, resources, pollInterval)
}

func (p *Poller) context() context.Context {
	if p.Context == nil {
		return context.Background()
	}
	return p.Context
}

var (
	deploymentGVK = appsv1.SchemeGroupVersion.WithKind("Deployment")
	jobGVK        = batchv1.SchemeGroupVersion.WithKind("Job")
)

// poll waits until every object is Current in kstatus terms, failing as
// soon as one is Failed when failFast; paused Deployments are skipped, and
// Jobs are waited for only withJobs (and may be deleted by their TTL).
// extra status readers come after the health checks' and the Job reader.
func (k *kubeClient) poll(p *Poller, resources kube.ResourceList, timeout time.Duration, failFast, withJobs bool, extra ...func(meta.RESTMapper) engine.StatusReader) error {
	var set object.ObjMetadataSet
	var jobs []*unstructured.Unstructured
	for _, res := range resources {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(res.Object)
		if err != nil {
			return fmt.Errorf("reading %s %s: %w", res.Mapping.GroupVersionKind.Kind, res.Name, err)
		}
		gvk := res.Object.GetObjectKind().GroupVersionKind()
		if gvk == deploymentGVK {
			if paused, _, _ := unstructured.NestedBool(u, "spec", "paused"); paused {
				continue
			}
		}
		if gvk == jobGVK {
			jobs = append(jobs, &unstructured.Unstructured{Object: u})
		}
		id, err := object.RuntimeToObjMeta(res.Object)
		if err != nil {
			return err
		}
		set = append(set, id)
	}
	mgr, err := k.resourceManager(p, withJobs, extra...)
	if err != nil {
		return err
	}
	return mgr.WaitForSetWithContext(p.context(), set, ssa.WaitOptions{
		Interval:    pollInterval,
		Timeout:     timeout,
		FailFast:    failFast,
		JobsWithTTL: ssautils.ExtractJobsWithTTL(jobs),
	})
}

// controllerClient is a client of the cluster for the poller, with the
// getter's REST mapping.
func (k *kubeClient) controllerClient() (client.Client, error) {
	cfg, err := k.getter.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("creating Kubernetes client for the poller: %w", err)
	}
	mapper, err := k.getter.ToRESTMapper()
	if err != nil {
		return nil, fmt.Errorf("creating Kubernetes client for the poller: %w", err)
	}
	c, err := k8s.NewControllerClient(cfg, client.Options{Scheme: scheme.Scheme, Mapper: mapper})
	if err != nil {
		return nil, fmt.Errorf("for the poller: %w", err)
	}
	return c, nil
}

// resourceManager reads statuses with the health checks first, then
// (withJobs) helm-controller's Job reader, then extra, then kstatus.
func (k *kubeClient) resourceManager(p *Poller, withJobs bool, extra ...func(meta.RESTMapper) engine.StatusReader) (*ssa.ResourceManager, error) {
	c, err := k.controllerClient()
	if err != nil {
		return nil, err
	}
	mapper := c.RESTMapper()
	var readers []engine.StatusReader
	if len(p.HealthChecks) > 0 {
		newReader, err := NewHealthCheckReader(p.HealthChecks)
		if err != nil {
			return nil, err
		}
		readers = append(readers, newReader(mapper))
	}
	if withJobs {
		readers = append(readers, statusreaders.NewCustomJobStatusReader(mapper))
	}
	for _, r := range extra {
		readers = append(readers, r(mapper))
	}
	poller := polling.NewStatusPoller(c, mapper, polling.Options{CustomStatusReaders: readers, ClusterReaderFactory: engine.ClusterReaderFactoryFunc(clusterReaderFor)})
	return ssa.NewResourceManager(c, poller, ssa.Owner{Field: FieldManager}), nil
}

// directReadMax is the largest set of objects the poller reads one by
// one; a larger one is read by listing its kinds.
const directReadMax = 32

// clusterReaderFor is the reader of a poll of ids. kstatus's caching
// reader lists, every poll, every object of the set's kinds in its
// namespaces (and the ReplicaSets and Pods of those namespaces for a
// Deployment's), and decodes them all: in a namespace many releases share,
// a release of a few objects paid for every release's. A fleet of 100
// releases of a few objects in one namespace spent 42% of its install's
// CPU there. A small set is read by GETs instead (and generated objects
// by their owner's label selector); a large one, where a list per kind
// is cheaper than an object at a time, is listed.
func clusterReaderFor(r client.Reader, mapper meta.RESTMapper, ids object.ObjMetadataSet) (engine.ClusterReader, error) {
	if len(ids) <= directReadMax {
		return clusterreader.NewDirectClusterReader(r, mapper, ids)
	}
	return clusterreader.NewCachingClusterReader(r, mapper, ids)
}

// IsPollerWaitError reports whether err is the poller's: objects not
// Current in time, or one Failed.
func IsPollerWaitError(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "timeout waiting for: [") || strings.Contains(err.Error(), "failed early due to stalled resources: ["))
}

// NotCurrent returns the objects of manifest the poller p would still wait
// for, in manifest order, each with why: which health check expression
// does not hold, or kstatus's status and message. It stops after limit
// objects (0: no limit), or when ctx ends.
func (c *Client) NotCurrent(ctx context.Context, namespace, manifest string, p *Poller, limit int) (notCurrent []k8s.ObjectRef, reasons []string, total int, err error) {
	infos, err := objectInfos(c.kube.Client, namespace, manifest)
	if err != nil {
		return nil, nil, 0, err
	}
	for _, info := range infos {
		if ctx.Err() != nil || (limit > 0 && len(notCurrent) == limit) {
			break
		}
		reason := objectStatus(info, p.HealthChecks)
		if reason == "" {
			continue
		}
		notCurrent = append(notCurrent, k8s.ObjectRef{GVK: info.Mapping.GroupVersionKind, Namespace: info.Namespace, Name: info.Name})
		reasons = append(reasons, reason)
	}
	return notCurrent, reasons, len(infos), nil
}

// objectStatus says why the live object of info is not Current, or "".
func objectStatus(info *resource.Info, checks []kustomize.CustomHealthCheck) string {
	live, err := resource.NewHelper(info.Client, info.Mapping).Get(info.Namespace, info.Name)
	if apierrors.IsNotFound(err) {
		return "not found"
	}
	if err != nil {
		return "not readable: " + err.Error()
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(live)
	if err != nil {
		return "not readable: " + err.Error()
	}
	obj := &unstructured.Unstructured{Object: u}
	gvk := obj.GroupVersionKind()
	if gvk == deploymentGVK {
		if paused, _, _ := unstructured.NestedBool(u, "spec", "paused"); paused {
			return ""
		}
	}
	for _, hc := range checks {
		gk := schema.FromAPIVersionAndKind(hc.APIVersion, hc.Kind).GroupKind()
		if gk.Group == gvk.Group && (hc.Kind == "" || gk.Kind == gvk.Kind) {
			return healthCheckStatus(hc, obj)
		}
	}
	res, err := status.Compute(obj)
	if err != nil {
		return "status not computable: " + err.Error()
	}
	if res.Status == status.CurrentStatus {
		return ""
	}
	return fmt.Sprintf("%s: %s", res.Status, res.Message)
}

// healthCheckStatus says which expression of hc keeps obj from Current,
// in the order they are evaluated, or "" when it is Current.
func healthCheckStatus(hc kustomize.CustomHealthCheck, obj *unstructured.Unstructured) string {
	gen, _, _ := unstructured.NestedInt64(obj.Object, "metadata", "generation")
	if observed, ok, err := unstructured.NestedInt64(obj.Object, "status", "observedGeneration"); err == nil && ok && observed != gen {
		return fmt.Sprintf("in progress: status.observedGeneration %d, metadata.generation %d", observed, gen)
	}
	ctx := context.Background()
	for _, e := range []struct{ name, expr, holds string }{
		{"inProgress", hc.InProgress, "in progress"},
		{"failed", hc.Failed, "failed"},
		{"current", hc.Current, ""},
	} {
		if e.expr == "" {
			continue
		}
		x, err := cel.NewExpression(e.expr)
		if err != nil {
			return fmt.Sprintf("health check %s `%s` does not compile: %s", e.name, e.expr, err)
		}
		ok, err := x.EvaluateBoolean(ctx, obj.Object)
		switch {
		case err != nil:
			return fmt.Sprintf("health check %s `%s` not evaluable: %s", e.name, e.expr, err)
		case ok && e.holds == "":
			return ""
		case ok:
			return fmt.Sprintf("%s: health check %s `%s` holds", e.holds, e.name, e.expr)
		}
	}
	return fmt.Sprintf("in progress: health check current `%s` does not hold", hc.Current)
}

// ParseHealthCheck parses each expression of hc, as the poller will;
// field names the one that does not parse (current, inProgress, failed).
func ParseHealthCheck(hc kustomize.CustomHealthCheck) (field string, err error) {
	for _, e := range []struct{ field, expr string }{{"current", hc.Current}, {"inProgress", hc.InProgress}, {"failed", hc.Failed}} {
		if e.expr == "" {
			continue
		}
		if _, err := cel.NewExpression(e.expr); err != nil {
			return e.field, err
		}
	}
	return "", nil
}
