package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// CreatedForAnnotation on a namespace names the release whose install
// created it, as <storage namespace>/<release name>: the release that may
// delete it again (NamespaceDeletion).
const CreatedForAnnotation = "helmrelease.terraform.io/created-for"

// CreateNamespace creates the namespace name as Helm's install with
// CreateNamespace does (labelled name=<name>), unless it exists: so that the
// objects an install will create in it can be validated before the install
// writes them. fieldManager is the manager Helm's writes record; createdFor
// the release, recorded as CreatedForAnnotation. created is the UID of the
// namespace it created; empty when it existed.
func (g *Getter) CreateNamespace(ctx context.Context, name, fieldManager, createdFor string) (created types.UID, err error) {
	client, err := dynamic.NewForConfig(g.config)
	if err != nil {
		return "", fmt.Errorf("creating dynamic client: %w", err)
	}
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(name)
	ns.SetLabels(map[string]string{"name": name})
	ns.SetAnnotations(map[string]string{CreatedForAnnotation: createdFor})
	out, err := client.Resource(namespacesResource).Create(ctx, ns, metav1.CreateOptions{FieldManager: fieldManager})
	switch {
	case apierrors.IsAlreadyExists(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return out.GetUID(), nil
}

// DeleteNamespace deletes the namespace name if it is still the one of
// UID uid (one CreateNamespace created), so that what a refused install
// leaves is nothing.
func (g *Getter) DeleteNamespace(ctx context.Context, name string, uid types.UID) error {
	client, err := dynamic.NewForConfig(g.config)
	if err != nil {
		return fmt.Errorf("creating dynamic client: %w", err)
	}
	err = client.Resource(namespacesResource).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting namespace %s: %w", name, err)
	}
	return nil
}

// NamespaceDeletion says which namespace DeleteCreatedNamespace deletes.
type NamespaceDeletion struct {
	// Name of the namespace.
	Name string
	// CreatedFor is the release that must have created it, as its
	// CreatedForAnnotation says; a namespace of another origin is kept.
	CreatedFor string
	// Timeout bounds the wait for the namespace to be gone.
	Timeout time.Duration
}

// NamespaceDeleted is what DeleteCreatedNamespace did.
type NamespaceDeleted struct {
	// Deleted: the namespace was deleted and is gone.
	Deleted bool
	// Absent: there was no such namespace.
	Absent bool
	// CreatedFor is the namespace's CreatedForAnnotation when it is not
	// the release's ("" when it has none): the namespace is kept.
	CreatedFor string
	// Left names what the namespace still holds besides what Kubernetes
	// keeps in every namespace, as <kind>[.<group>]/<name>: the namespace
	// is kept.
	Left []string
	// Unread names the API groups whose discovery failed and the kinds
	// that could not be listed: the namespace is kept, as what it holds
	// of them is unknown.
	Unread []string
}

// DeleteCreatedNamespace deletes the namespace a release's install
// created, once the release is uninstalled, and waits until it is gone.
// It is kept when another created it, when it cannot be read whole (an
// API group's discovery failed, a kind could not be listed), and when it
// holds anything but what Kubernetes and the uninstalled release leave
// behind:
//   - the default ServiceAccount (and its token Secret) and the
//     kube-root-ca.crt ConfigMap;
//   - objects being deleted, and objects whose owners are all gone or
//     going with the namespace (the garbage collector deletes them with
//     their owners); an owner outside the namespace (of a cluster-scoped
//     kind) keeps them;
//   - Events, Endpoints (of Services, named themselves) and Leases (the
//     leader elections of the release's controllers).
func (g *Getter) DeleteCreatedNamespace(ctx context.Context, d NamespaceDeletion) (*NamespaceDeleted, error) {
	client, err := dynamic.NewForConfig(g.config)
	if err != nil {
		return nil, fmt.Errorf("creating dynamic client: %w", err)
	}
	ns, err := client.Resource(namespacesResource).Get(ctx, d.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return &NamespaceDeleted{Absent: true}, nil
	case err != nil:
		return nil, fmt.Errorf("reading namespace %s: %w", d.Name, err)
	}
	if by := ns.GetAnnotations()[CreatedForAnnotation]; by != d.CreatedFor {
		return &NamespaceDeleted{CreatedFor: by}, nil
	}
	if ns.GetDeletionTimestamp() == nil {
		left, unread, err := g.namespaceContents(ctx, d.Name)
		if err != nil {
			return nil, err
		}
		if len(left) > 0 || len(unread) > 0 {
			return &NamespaceDeleted{CreatedFor: d.CreatedFor, Left: left, Unread: unread}, nil
		}
		uid := ns.GetUID()
		err = client.Resource(namespacesResource).Delete(ctx, d.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("deleting namespace %s: %w", d.Name, err)
		}
	}
	// The namespace controller deletes what it holds, then the namespace.
	err = wait.PollUntilContextTimeout(ctx, time.Second, d.Timeout, true, func(ctx context.Context) (bool, error) {
		cur, err := client.Resource(namespacesResource).Get(ctx, d.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return true, nil
		case err != nil:
			return false, nil // transient: asked again
		}
		return cur.GetUID() != ns.GetUID(), nil
	})
	if err != nil {
		return nil, fmt.Errorf("namespace %s is deleted but not gone after %s (its finalizers, or objects whose own finalizers hold it): %w", d.Name, d.Timeout, err)
	}
	return &NamespaceDeleted{Deleted: true, CreatedFor: d.CreatedFor}, nil
}

// namespaceContents names the objects of namespace that would keep it
// (see DeleteCreatedNamespace), in every listable namespaced kind the
// cluster serves, sorted; and the groups and kinds it could not read,
// which keep it too: what was never listed cannot be known disposable.
func (g *Getter) namespaceContents(ctx context.Context, namespace string) (left, unread []string, err error) {
	// Not the shared cache: kinds the release's CRDs brought may be gone.
	dc, err := discovery.NewDiscoveryClientForConfig(g.config)
	if err != nil {
		return nil, nil, fmt.Errorf("creating discovery client: %w", err)
	}
	lists, err := discovery.ServerPreferredNamespacedResources(dc)
	var failed *discovery.ErrGroupDiscoveryFailed
	switch {
	case errors.As(err, &failed):
		for gv, gerr := range failed.Groups {
			unread = append(unread, fmt.Sprintf("API group %s (discovery failed: %v)", gv, gerr))
		}
	case err != nil:
		return nil, nil, fmt.Errorf("discovering the kinds namespace %s may hold: %w", namespace, err)
	}
	mc, err := metadata.NewForConfig(g.config)
	if err != nil {
		return nil, nil, fmt.Errorf("creating metadata client: %w", err)
	}
	namespaced := map[schema.GroupKind]bool{}
	for _, list := range lists {
		gv, _ := schema.ParseGroupVersion(list.GroupVersion)
		for _, r := range list.APIResources {
			namespaced[schema.GroupKind{Group: gv.Group, Kind: r.Kind}] = true
		}
	}
	var objs []namespacedObject
	for _, list := range discovery.FilteredBy(discovery.SupportsAllVerbs{Verbs: []string{"list", "delete"}}, lists) {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range list.APIResources {
			if kubernetesOwn(gv.Group, r.Name, "") {
				continue
			}
			resource := gv.WithResource(r.Name)
			items, err := mc.Resource(resource).Namespace(namespace).List(ctx, metav1.ListOptions{})
			if err != nil {
				if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
					continue
				}
				unread = append(unread, fmt.Sprintf("%s (listing failed: %v)", resource.GroupResource(), err))
				continue
			}
			kind := r.Kind
			if gv.Group != "" {
				kind += "." + gv.Group
			}
			for _, o := range items.Items {
				objs = append(objs, namespacedObject{name: kind + "/" + o.Name, meta: o.ObjectMeta, own: kubernetesOwn(gv.Group, r.Name, o.Name)})
			}
		}
	}
	left = keptObjects(objs, namespaced)
	slices.Sort(left)
	slices.Sort(unread)
	return left, unread, nil
}

// namespacedObject is an object of the namespace as listed.
type namespacedObject struct {
	name string // <kind>[.<group>]/<name>
	meta metav1.ObjectMeta
	own  bool // one Kubernetes keeps (kubernetesOwn)
}

// keptObjects names the objects that keep the namespace: those not
// being deleted, not Kubernetes' own, and not owned only by objects that
// go with the namespace. An owned object goes when every owner is of a
// namespaced kind and either gone (the uninstall deleted it: the garbage
// collector follows) or in the namespace and going itself; an owner of a
// cluster-scoped or unknown kind keeps it.
func keptObjects(objs []namespacedObject, namespaced map[schema.GroupKind]bool) []string {
	byUID := map[types.UID]int{}
	for i, o := range objs {
		byUID[o.meta.UID] = i
	}
	const (
		unknown = iota
		visiting
		goes
		stays
	)
	state := make([]int, len(objs))
	var decide func(i int) bool
	decide = func(i int) bool {
		switch state[i] {
		case goes:
			return true
		case stays, visiting: // a cycle of owners: nothing deletes it
			return false
		}
		state[i] = visiting
		o := objs[i]
		ok := o.meta.DeletionTimestamp != nil || o.own
		if !ok && len(o.meta.OwnerReferences) > 0 {
			ok = true
			for _, ref := range o.meta.OwnerReferences {
				gv, err := schema.ParseGroupVersion(ref.APIVersion)
				if err != nil || !namespaced[schema.GroupKind{Group: gv.Group, Kind: ref.Kind}] {
					ok = false
					break
				}
				if j, in := byUID[ref.UID]; in && !decide(j) {
					ok = false
					break
				}
			}
		}
		state[i] = stays
		if ok {
			state[i] = goes
		}
		return ok
	}
	var kept []string
	for i := range objs {
		if !decide(i) {
			kept = append(kept, objs[i].name)
		}
	}
	return kept
}

// kubernetesOwn reports whether an object (of every name, when name is
// "") of group and resource is one Kubernetes keeps in a namespace, or
// one that goes with the uninstalled release (DeleteCreatedNamespace).
func kubernetesOwn(group, resource, name string) bool {
	switch {
	case group == "" && (resource == "events" || resource == "endpoints"),
		group == "events.k8s.io" && resource == "events",
		group == "coordination.k8s.io" && resource == "leases",
		group == "metrics.k8s.io":
		return true
	case name == "":
		return false
	case group == "" && resource == "serviceaccounts" && name == "default",
		group == "" && resource == "configmaps" && name == "kube-root-ca.crt",
		group == "" && resource == "secrets" && strings.HasPrefix(name, "default-token-"):
		return true
	}
	return false
}
