package kube

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// FieldManager is the server-side apply field manager of the provider.
const FieldManager = "helmrelease"

// validatedFor is how long a plan's dry run of a set of objects spares the
// apply's (DryRunOptions.TrustPlan): long enough for Terraform's final
// plan of an apply and the apply itself, short enough that a change of the
// cluster's admission or schemas between two runs is seen.
const validatedFor = 10 * time.Minute

// DryRunOptions are the options of DryRunApply.
type DryRunOptions struct {
	// TrustPlan skips the requests when a dry run of this process and
	// identity (the plan's) passed the byte-identical objects whole less
	// than validatedFor ago, and uses up that record: an apply trusts the
	// plan it applies, once. What it trusts is that nothing the server
	// would refuse changed in between; the server still validates each
	// write, so such a change fails the action at the write instead of
	// before it. Without TrustPlan, every object is sent.
	TrustPlan bool
}

// ObjectConcurrency bounds the requests for independent objects the
// provider has in flight at once, per release: enough to hide the round
// trip to a distant API server, few enough that one release does not
// crowd its priority level's seats.
const ObjectConcurrency = 8

// DryRunApply asks the API server to apply each object with dryRun=All and
// strict field validation: admission, schema validation (unknown and
// duplicate fields are errors, as Helm's client-side OpenAPI validation
// makes them) and defaulting run, nothing is stored. Kinds
// the cluster does not serve yet (CRDs of the same release) and objects in
// namespaces that do not exist yet are skipped: they can be judged only
// once their CRD or namespace exists. Objects are sent ObjectConcurrency at
// a time; the errors of all objects are joined, in their order. A set that
// passes whole (none skipped) is recorded for opts.TrustPlan.
func (g *Getter) DryRunApply(ctx context.Context, objs []*unstructured.Unstructured, opts DryRunOptions) error {
	mapper, err := g.ToRESTMapper()
	if err != nil {
		return err
	}
	key, keyErr := objectsDigest(objs)
	if keyErr == nil && opts.TrustPlan && g.discovery.takeValidated(key, time.Now().Add(-validatedFor)) {
		return nil
	}
	var skipped atomic.Bool
	client, err := dynamic.NewForConfig(g.config)
	if err != nil {
		return fmt.Errorf("creating dynamic client: %w", err)
	}
	errs := make([]error, len(objs))
	namespaces := map[string]bool{}
	var wg sync.WaitGroup
	slots := make(chan struct{}, ObjectConcurrency)
	for i, obj := range objs {
		gvk := obj.GroupVersionKind()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) {
			skipped.Store(true)
			continue
		}
		if err != nil {
			errs[i] = fmt.Errorf("%s %s: %w", gvk.Kind, obj.GetName(), err)
			continue
		}
		var ri dynamic.ResourceInterface = client.Resource(mapping.Resource)
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			if !namespaceExists(ctx, client, obj.GetNamespace(), namespaces) {
				skipped.Store(true)
				continue
			}
			ri = client.Resource(mapping.Resource).Namespace(obj.GetNamespace())
		}
		data, err := obj.MarshalJSON()
		if err != nil {
			errs[i] = fmt.Errorf("%s %s: %w", gvk.Kind, obj.GetName(), err)
			continue
		}
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			force := true
			_, err := ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{
				FieldManager: FieldManager, Force: &force, DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict,
			})
			if apierrors.IsNotFound(err) && mapping.Scope.Name() == meta.RESTScopeNameNamespace {
				skipped.Store(true)
				return // the namespace does not exist yet
			}
			if err != nil {
				errs[i] = fmt.Errorf("%s %s: %w", gvk.Kind, obj.GetName(), err)
			}
		})
	}
	wg.Wait()
	err = errors.Join(errs...)
	if err == nil && keyErr == nil && !skipped.Load() {
		g.discovery.markValidated(key, time.Now())
	}
	return err
}

// namespaceExists tells whether the namespace ns exists, asking the API
// server once per dry run (known caches the answers): objects of a
// namespace the install will create are not sent, each to be refused as
// not found (the install creates the namespace before it validates). Only
// a namespace the server says is not found counts as missing; without
// permission to read namespaces, the objects are sent and judged one by
// one.
func namespaceExists(ctx context.Context, client dynamic.Interface, ns string, known map[string]bool) bool {
	if ns == "" {
		return true
	}
	exists, ok := known[ns]
	if !ok {
		_, err := client.Resource(namespacesResource).Get(ctx, ns, metav1.GetOptions{})
		exists = !apierrors.IsNotFound(err)
		known[ns] = exists
	}
	return exists
}

var namespacesResource = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// objectsDigest identifies a set of objects, in order, by content.
func objectsDigest(objs []*unstructured.Unstructured) ([32]byte, error) {
	h := sha256.New()
	for _, obj := range objs {
		data, err := obj.MarshalJSON()
		if err != nil {
			return [32]byte{}, err
		}
		fmt.Fprintf(h, "%d:", len(data))
		h.Write(data)
	}
	return [32]byte(h.Sum(nil)), nil
}

// takeValidated reports whether the objects of digest key passed a dry
// run after since, and forgets it.
func (d *Discovery) takeValidated(key [32]byte, since time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	at, ok := d.validated[key]
	delete(d.validated, key)
	return ok && at.After(since)
}

// markValidated records that the objects of digest key passed a dry run at
// at, forgetting what is too old to be used.
func (d *Discovery) markValidated(key [32]byte, at time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.validated == nil {
		d.validated = map[[32]byte]time.Time{}
	}
	for k, t := range d.validated {
		if at.Sub(t) > validatedFor {
			delete(d.validated, k)
		}
	}
	d.validated[key] = at
}
