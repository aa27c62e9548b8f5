package helm

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"helm.sh/helm/v4/pkg/kube"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// listDeletedFrom is the number of objects of one kind in one namespace
// from which waitDeleted lists them (metadata only) instead of reading
// each: a list of a namespace's objects of a kind costs more than a few
// reads, less than hundreds.
const listDeletedFrom = 50

// deletedPageSize bounds each page of such a list.
const deletedPageSize = 500

// deleteGroup is the objects of one kind in one namespace ("" for
// cluster-scoped kinds) still to go.
type deleteGroup struct {
	gvk       schema.GroupVersionKind
	namespace string
	names     map[string]bool
}

// waitDeleted waits, polling every interval until ctx is done, until no
// object of resources exists: what is not found is gone, as is every
// object of a kind the cluster no longer serves (its CRD deleted with
// it). A kind with listDeletedFrom objects or more in a namespace is
// read with one metadata list per poll, not one read per object: the
// uninstall of a 1,000-object release waited seconds on reads one after
// another (fluxcd/pkg/ssa's WaitForTermination). The error names an
// object still there.
func waitDeleted(ctx context.Context, c client.Client, resources kube.ResourceList, interval time.Duration) error {
	var groups []*deleteGroup
	index := map[string]*deleteGroup{}
	for _, r := range resources {
		gvk := r.Object.GetObjectKind().GroupVersionKind()
		ns := r.Namespace
		if r.Mapping != nil && r.Mapping.Scope.Name() == meta.RESTScopeNameRoot {
			ns = ""
		}
		key := gvk.String() + "\x00" + ns
		g := index[key]
		if g == nil {
			g = &deleteGroup{gvk: gvk, namespace: ns, names: map[string]bool{}}
			index[key] = g
			groups = append(groups, g)
		}
		g.names[r.Name] = true
	}
	err := wait.PollUntilContextCancel(ctx, interval, true, func(ctx context.Context) (bool, error) {
		left := groups[:0]
		for _, g := range groups {
			if err := g.forget(ctx, c); err != nil {
				if ctx.Err() != nil {
					// The timeout, not what it cut short.
					return false, ctx.Err()
				}
				return false, err
			}
			if len(g.names) > 0 {
				left = append(left, g)
			}
		}
		groups = left
		return len(groups) == 0, nil
	})
	if err != nil && len(groups) > 0 {
		g := groups[0]
		name := slices.Min(slices.Collect(maps.Keys(g.names)))
		return fmt.Errorf("%s %s termination: %w", g.gvk.Kind, client.ObjectKey{Namespace: g.namespace, Name: name}, err)
	}
	return err
}

// forget removes from g the names of the objects that are gone.
func (g *deleteGroup) forget(ctx context.Context, c client.Client) error {
	if len(g.names) < listDeletedFrom {
		for name := range g.names {
			obj := &metav1.PartialObjectMetadata{}
			obj.SetGroupVersionKind(g.gvk)
			err := c.Get(ctx, client.ObjectKey{Namespace: g.namespace, Name: name}, obj)
			switch {
			case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
				delete(g.names, name)
			case err != nil:
				return fmt.Errorf("reading %s %s: %w", g.gvk.Kind, name, err)
			}
		}
		return nil
	}
	present := map[string]bool{}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(g.gvk.GroupVersion().WithKind(g.gvk.Kind + "List"))
	opts := []client.ListOption{client.InNamespace(g.namespace), client.Limit(deletedPageSize)}
	for {
		err := c.List(ctx, list, opts...)
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			clear(g.names)
			return nil
		}
		if err != nil {
			return fmt.Errorf("listing %s in %q: %w", g.gvk.Kind, g.namespace, err)
		}
		for i := range list.Items {
			present[list.Items[i].Name] = true
		}
		if list.Continue == "" {
			break
		}
		opts = append(opts[:2:2], client.Continue(list.Continue))
	}
	for name := range g.names {
		if !present[name] {
			delete(g.names, name)
		}
	}
	return nil
}
