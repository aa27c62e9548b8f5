package kube

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
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
// apply's (DryRunOptions.Trusted): long enough for a plan reviewed before
// it is applied, short enough that a change of the cluster's admission or
// schemas between two runs is seen.
const validatedFor = 10 * time.Minute

// ValidatedSet identifies a set of objects that passed a server-side dry
// run whole, and when: what a resource's plan hands its apply (in its
// private state), so that the apply does not send the same objects again.
type ValidatedSet struct {
	// Digest is a SHA-256 of the objects' JSON, in any order (a plan's
	// manifest and an action's post-rendered objects come in different
	// orders).
	Digest string    `json:"digest"`
	At     time.Time `json:"at"`
}

// DryRunOptions are the options of DryRunApply.
type DryRunOptions struct {
	// TrustPlan passes, without a request, objects a plan had the API
	// server validate whole less than validatedFor ago: those of Planned
	// (the resource's plan hands it over in private state), or the same
	// objects this process validated for the identity (Terraform's final plan of
	// an apply runs in the apply's process, and a create gets no private
	// state from its plan), once. What it trusts is that nothing the API
	// server would refuse changed in between; the server still checks each
	// write, so such a change fails the action at its write instead of
	// before it.
	TrustPlan bool
	Planned   *ValidatedSet
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
// passes whole (none skipped) is returned as a ValidatedSet; so is one
// opts.Trusted vouches for, which is not sent.
func (g *Getter) DryRunApply(ctx context.Context, objs []*unstructured.Unstructured, opts DryRunOptions) (*ValidatedSet, error) {
	mapper, err := g.ToRESTMapper()
	if err != nil {
		return nil, err
	}
	digest, digestErr := objectsDigest(objs)
	if digestErr == nil && opts.TrustPlan {
		if t := opts.Planned; t != nil && t.Digest == digest && time.Since(t.At) < validatedFor && !t.At.After(time.Now()) {
			return t, nil
		}
		if t := g.discovery.takeValidated(digest); t != nil && time.Since(t.At) < validatedFor {
			return t, nil
		}
	}
	var skipped atomic.Bool
	client, err := dynamic.NewForConfig(g.config)
	if err != nil {
		return nil, fmt.Errorf("creating dynamic client: %w", err)
	}
	at := time.Now()
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
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if digestErr != nil || skipped.Load() {
		return nil, nil
	}
	v := &ValidatedSet{Digest: digest, At: at}
	g.discovery.recordValidated(v)
	return v, nil
}

// recordValidated keeps v, a set of objects that passed whole for the
// identity, for takeValidated; the releases of one identity share the
// Discovery and plan in parallel, so each set is kept by its digest, and
// those older than validatedFor are forgotten.
func (d *Discovery) recordValidated(v *ValidatedSet) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.validated == nil {
		d.validated = map[string]*ValidatedSet{}
	}
	for k, old := range d.validated {
		if v.At.Sub(old.At) > validatedFor {
			delete(d.validated, k)
		}
	}
	d.validated[v.Digest] = v
}

// takeValidated returns the set of digest recordValidated kept, and
// forgets it: it vouches once.
func (d *Discovery) takeValidated(digest string) *ValidatedSet {
	d.mu.Lock()
	defer d.mu.Unlock()
	v := d.validated[digest]
	delete(d.validated, digest)
	return v
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

// objectsDigest identifies a set of objects by content, in any order.
func objectsDigest(objs []*unstructured.Unstructured) (string, error) {
	sums := make([][sha256.Size]byte, len(objs))
	for i, obj := range objs {
		data, err := obj.MarshalJSON()
		if err != nil {
			return "", err
		}
		sums[i] = sha256.Sum256(data)
	}
	slices.SortFunc(sums, func(a, b [sha256.Size]byte) int { return bytes.Compare(a[:], b[:]) })
	h := sha256.New()
	for _, s := range sums {
		h.Write(s[:])
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
