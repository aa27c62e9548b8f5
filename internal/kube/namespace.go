package kube

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// CreateNamespace creates the namespace name as Helm's install with
// CreateNamespace does (labelled name=<name>), unless it exists: so that the
// objects an install will create in it can be validated before the install
// writes them. fieldManager is the manager Helm's writes record. created
// is the UID of the namespace it created; empty when it existed.
func (g *Getter) CreateNamespace(ctx context.Context, name, fieldManager string) (created types.UID, err error) {
	client, err := dynamic.NewForConfig(g.config)
	if err != nil {
		return "", fmt.Errorf("creating dynamic client: %w", err)
	}
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(name)
	ns.SetLabels(map[string]string{"name": name})
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
