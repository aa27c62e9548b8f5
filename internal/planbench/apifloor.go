package main

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/manifest"
)

// floorInFlight are the numbers of requests in flight the API floor is
// measured at; the floor is the fastest of them.
var floorInFlight = []int{1, 16, 32, 64}

// floorFieldManager is the field manager of the floor's server-side applies.
const floorFieldManager = "planbench-floor"

// apiFloor sends a release's objects straight to the API server, as a
// small client-go program would: server-side apply to create them and to
// change them, DELETE to remove them, one request per object, many in
// flight, no client-side rate limit. What it takes is what the cluster
// itself needs for the objects: nothing a provider does can be faster.
type apiFloor struct {
	core   kubernetes.Interface
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func newAPIFloor(kubeconfig string) (*apiFloor, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", kubeconfig, err)
	}
	cfg.QPS = -1 // no client-side rate limit
	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	f := &apiFloor{core: core, dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}
	// Discovery once, before any write is timed, as a client that has
	// been running would have it.
	if _, err := f.mapper.RESTMapping(schema.GroupKind{Kind: "ConfigMap"}, "v1"); err != nil {
		return nil, fmt.Errorf("discovering the API: %w", err)
	}
	return f, nil
}

// The floor's three writes, in order.
const (
	floorCreate = iota
	floorChange
	floorDelete
)

// floorTimes are the floor's wall times of a release's three writes at
// inFlight requests at once.
type floorTimes struct {
	inFlight int
	wall     [3]time.Duration
	requests [3]float64 // API requests of each, net of the cluster's idle rate
}

// floorRuns are the floor measured at each of floorInFlight.
type floorRuns []floorTimes

// best is the floor of a write: its fastest run.
func (r floorRuns) best(write int) time.Duration {
	var b time.Duration
	for _, t := range r {
		if b == 0 || t.wall[write] < b {
			b = t.wall[write]
		}
	}
	return b
}

func (r floorRuns) print() {
	fmt.Printf("\nthe API floor: the same objects sent straight to the API server, server-side apply (create, change) and DELETE, one request per object, no client-side rate limit\n%-10s %10s %10s %10s %10s\n", "in flight", "create", "change", "delete", "requests")
	for _, t := range r {
		fmt.Printf("%-10d %10s %10s %10s %10.0f\n", t.inFlight, t.wall[floorCreate].Round(10*time.Millisecond), t.wall[floorChange].Round(10*time.Millisecond), t.wall[floorDelete].Round(10*time.Millisecond), t.requests[floorCreate]+t.requests[floorChange]+t.requests[floorDelete])
	}
	fmt.Printf("%-10s %10s %10s %10s\n", "floor", r.best(floorCreate).Round(10*time.Millisecond), r.best(floorChange).Round(10*time.Millisecond), r.best(floorDelete).Round(10*time.Millisecond))
}

// measureFloor measures the API floor of the compared chart's objects at
// each of floorInFlight, each in a namespace of its own.
func measureFloor(tf terraform, kubeconfig string, c comparedChart) (floorRuns, error) {
	f, err := newAPIFloor(kubeconfig)
	if err != nil {
		return nil, err
	}
	var runs floorRuns
	for _, n := range floorInFlight {
		namespace := fmt.Sprintf("%s-floor-%d", c.namespace, n)
		create, change, err := floorManifests(tf.ctx, c, namespace)
		if err != nil {
			return nil, err
		}
		t, err := f.measure(tf.ctx, tf.api, namespace, create, change, n)
		if err != nil {
			return nil, fmt.Errorf("%d in flight: %w", n, err)
		}
		runs = append(runs, t)
	}
	return runs, nil
}

// measure creates the objects of create in namespace, applies those of
// change over them, and deletes them, at inFlight requests at once; the
// namespace is created before and deleted after, outside the times.
func (f *apiFloor) measure(ctx context.Context, api *apiCounter, namespace, create, change string, inFlight int) (floorTimes, error) {
	ft := floorTimes{inFlight: inFlight}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := f.core.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return ft, fmt.Errorf("creating namespace %s: %w", namespace, err)
	}
	created, err := objectsOf(create, namespace)
	if err != nil {
		return ft, err
	}
	changed, err := objectsOf(change, namespace)
	if err != nil {
		return ft, err
	}
	writes := [3]func() error{
		floorCreate: func() error { return f.apply(ctx, namespace, created, inFlight) },
		floorChange: func() error { return f.apply(ctx, namespace, changed, inFlight) },
		floorDelete: func() error { return f.delete(ctx, namespace, changed, inFlight) },
	}
	for i, write := range writes {
		before, err := api.total()
		if err != nil {
			return ft, err
		}
		start := time.Now()
		if err := write(); err != nil {
			return ft, err
		}
		ft.wall[i] = time.Since(start)
		after, err := api.total()
		if err != nil {
			return ft, err
		}
		ft.requests[i] = max(0, after-before-api.idleRate*ft.wall[i].Seconds())
	}
	if err := f.core.CoreV1().Namespaces().Delete(ctx, namespace, metav1.DeleteOptions{}); err != nil {
		return ft, fmt.Errorf("deleting namespace %s: %w", namespace, err)
	}
	// The next run and the providers create the same cluster-scoped
	// objects (CRDs): they must be gone first, not terminating.
	return ft, f.waitGone(ctx, namespace, changed)
}

// waitGone waits, untimed, for the cluster-scoped objects among objs and
// for namespace to be gone.
func (f *apiFloor) waitGone(ctx context.Context, namespace string, objs []*unstructured.Unstructured) error {
	gone := func(get func(context.Context) error) error {
		return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			err := get(ctx)
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		})
	}
	for _, o := range objs {
		m, err := f.mapping(ctx, o)
		if err != nil {
			return err
		}
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			continue
		}
		r := f.dyn.Resource(m.Resource)
		if err := gone(func(ctx context.Context) error { _, err := r.Get(ctx, o.GetName(), metav1.GetOptions{}); return err }); err != nil {
			return fmt.Errorf("waiting for %s %s to be deleted: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return gone(func(ctx context.Context) error {
		_, err := f.core.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{})
		return err
	})
}

// apply server-side applies objs, CustomResourceDefinitions first (the
// kinds they define are mapped once they are served), inFlight at once.
func (f *apiFloor) apply(ctx context.Context, namespace string, objs []*unstructured.Unstructured, inFlight int) error {
	var crds, rest []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, o)
		} else {
			rest = append(rest, o)
		}
	}
	for _, part := range [][]*unstructured.Unstructured{crds, rest} {
		err := f.each(ctx, namespace, part, inFlight, func(ctx context.Context, r dynamic.ResourceInterface, o *unstructured.Unstructured) error {
			_, err := r.Apply(ctx, o.GetName(), o, metav1.ApplyOptions{FieldManager: floorFieldManager, Force: true})
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// delete deletes objs, inFlight at once.
func (f *apiFloor) delete(ctx context.Context, namespace string, objs []*unstructured.Unstructured, inFlight int) error {
	return f.each(ctx, namespace, objs, inFlight, func(ctx context.Context, r dynamic.ResourceInterface, o *unstructured.Unstructured) error {
		return r.Delete(ctx, o.GetName(), metav1.DeleteOptions{})
	})
}

// each sends one request per object, inFlight at once.
func (f *apiFloor) each(ctx context.Context, namespace string, objs []*unstructured.Unstructured, inFlight int, request func(context.Context, dynamic.ResourceInterface, *unstructured.Unstructured) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(inFlight)
	for _, o := range objs {
		r, err := f.resource(ctx, namespace, o)
		if err != nil {
			return err
		}
		g.Go(func() error {
			if err := request(ctx, r, o); err != nil {
				return fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
			}
			return nil
		})
	}
	return g.Wait()
}

// resource is the client of o's resource, in namespace if it is
// namespaced.
func (f *apiFloor) resource(ctx context.Context, namespace string, o *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	m, err := f.mapping(ctx, o)
	if err != nil {
		return nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return f.dyn.Resource(m.Resource).Namespace(namespace), nil
	}
	return f.dyn.Resource(m.Resource), nil
}

// mapping is the REST mapping of o's kind. A kind not yet served (a CRD
// just created) is looked up again until it is, for up to a minute.
func (f *apiFloor) mapping(ctx context.Context, o *unstructured.Unstructured) (*meta.RESTMapping, error) {
	gvk := o.GroupVersionKind()
	var mapping *meta.RESTMapping
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		m, err := f.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) {
			f.mapper.Reset()
			return false, nil
		}
		mapping = m
		return err == nil, err
	})
	if err != nil {
		return nil, fmt.Errorf("mapping %s: %w", gvk, err)
	}
	return mapping, nil
}

// objectsOf splits a rendered manifest into its objects, namespaced ones
// in namespace.
func objectsOf(rendered, namespace string) ([]*unstructured.Unstructured, error) {
	objs, err := manifest.Parse(rendered, namespace, nil)
	if err != nil {
		return nil, fmt.Errorf("splitting the manifest: %w", err)
	}
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		out[i] = o.Object
	}
	return out, nil
}

// floorManifests renders the compared chart as the providers install it
// (CRDs included), with var.message "hello" and "changed".
func floorManifests(ctx context.Context, c comparedChart, namespace string) (create, change string, err error) {
	render := func(message string) (string, error) {
		values, err := hclValues(c.values, message)
		if err != nil {
			return "", fmt.Errorf("evaluating the values %s: %w", c.values, err)
		}
		r, err := helm.Render(ctx, helm.RenderOptions{ReleaseName: "r", Namespace: namespace, Chart: c.loaded, Values: values, IncludeCRDs: true})
		if err != nil {
			return "", err
		}
		return r.Manifest, nil
	}
	if create, err = render("hello"); err != nil {
		return "", "", err
	}
	change, err = render("changed")
	return create, change, err
}

// hclValues evaluates the values expression of a compared chart, given
// var.message, as Terraform would.
func hclValues(expr, message string) (map[string]any, error) {
	e, diags := hclsyntax.ParseExpression([]byte(expr), "values", hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diags
	}
	v, diags := e.Value(&hcl.EvalContext{Variables: map[string]cty.Value{"var": cty.ObjectVal(map[string]cty.Value{"message": cty.StringVal(message)})}})
	if diags.HasErrors() {
		return nil, diags
	}
	b, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := yaml.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}
