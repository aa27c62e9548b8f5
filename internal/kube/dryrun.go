package kube

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// FieldManager is the server-side apply field manager of the provider.
const FieldManager = "helmrelease"

// DryRunApply asks the API server to apply each object with dryRun=All and
// strict field validation: admission, schema validation (unknown and
// duplicate fields are errors, as Helm's client-side OpenAPI validation
// makes them) and defaulting run, nothing is stored. Kinds
// the cluster does not serve yet (CRDs of the same release) and objects in
// namespaces that do not exist yet are skipped: they can be judged only
// once their CRD or namespace exists. The errors of all objects are joined.
func (g *Getter) DryRunApply(ctx context.Context, objs []*unstructured.Unstructured) error {
	mapper, err := g.ToRESTMapper()
	if err != nil {
		return err
	}
	client, err := dynamic.NewForConfig(g.config)
	if err != nil {
		return fmt.Errorf("creating dynamic client: %w", err)
	}
	var errs []error
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", gvk.Kind, obj.GetName(), err))
			continue
		}
		var ri dynamic.ResourceInterface = client.Resource(mapping.Resource)
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			ri = client.Resource(mapping.Resource).Namespace(obj.GetNamespace())
		}
		data, err := obj.MarshalJSON()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", gvk.Kind, obj.GetName(), err))
			continue
		}
		force := true
		_, err = ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{
			FieldManager: FieldManager, Force: &force, DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict,
		})
		if apierrors.IsNotFound(err) && mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			continue // the namespace does not exist yet
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", gvk.Kind, obj.GetName(), err))
		}
	}
	return errors.Join(errs...)
}
