package kube

import (
	"context"
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
}

// DeleteCreatedNamespace deletes the namespace a release's install
// created, once the release is uninstalled, and waits until it is gone.
// It is kept when another created it, and when it holds anything but what
// Kubernetes and the uninstalled release leave behind:
//   - the default ServiceAccount (and its token Secret) and the
//     kube-root-ca.crt ConfigMap;
//   - objects being deleted, and objects with an owner (the garbage
//     collector deletes them with their owner, which, if it stays, is
//     named itself);
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
		left, err := g.namespaceContents(ctx, d.Name)
		if err != nil {
			return nil, err
		}
		if len(left) > 0 {
			return &NamespaceDeleted{CreatedFor: d.CreatedFor, Left: left}, nil
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
// cluster serves, sorted.
func (g *Getter) namespaceContents(ctx context.Context, namespace string) ([]string, error) {
	// Not the shared cache: kinds the release's CRDs brought may be gone.
	dc, err := discovery.NewDiscoveryClientForConfig(g.config)
	if err != nil {
		return nil, fmt.Errorf("creating discovery client: %w", err)
	}
	lists, err := discovery.ServerPreferredNamespacedResources(dc)
	if err != nil && len(lists) == 0 {
		return nil, fmt.Errorf("discovering the kinds namespace %s may hold: %w", namespace, err)
	}
	// A group whose discovery failed (an aggregated API down) is not
	// read: the namespace controller would not finish deleting it either,
	// which the wait reports.
	mc, err := metadata.NewForConfig(g.config)
	if err != nil {
		return nil, fmt.Errorf("creating metadata client: %w", err)
	}
	var left []string
	for _, list := range discovery.FilteredBy(discovery.SupportsAllVerbs{Verbs: []string{"list", "delete"}}, lists) {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range list.APIResources {
			if kubernetesOwn(gv.Group, r.Name, "") {
				continue
			}
			items, err := mc.Resource(gv.WithResource(r.Name)).Namespace(namespace).List(ctx, metav1.ListOptions{})
			if err != nil {
				if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
					continue
				}
				return nil, fmt.Errorf("listing %s in namespace %s: %w", gv.WithResource(r.Name).GroupResource(), namespace, err)
			}
			kind := r.Kind
			if gv.Group != "" {
				kind += "." + gv.Group
			}
			for _, o := range items.Items {
				if o.DeletionTimestamp != nil || len(o.OwnerReferences) > 0 || kubernetesOwn(gv.Group, r.Name, o.Name) {
					continue
				}
				left = append(left, kind+"/"+o.Name)
			}
		}
	}
	slices.Sort(left)
	return left, nil
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
