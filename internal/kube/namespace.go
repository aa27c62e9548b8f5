package kube

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// CreateNamespace creates the namespace name as Helm's install with
// CreateNamespace does (labelled name=<name>), unless it exists: so that the
// objects an install will create in it can be validated before the install
// writes them. fieldManager is the manager Helm's writes record.
func (g *Getter) CreateNamespace(ctx context.Context, name, fieldManager string) error {
	client, err := dynamic.NewForConfig(g.config)
	if err != nil {
		return fmt.Errorf("creating dynamic client: %w", err)
	}
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(name)
	ns.SetLabels(map[string]string{"name": name})
	_, err = client.Resource(namespacesResource).Create(ctx, ns, metav1.CreateOptions{FieldManager: fieldManager})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}
