package flux

import (
	"context"
	"fmt"

	"github.com/fluxcd/pkg/apis/meta"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"
)

// indexRequest is the request token to write on objs' shared
// HelmRepository, empty for none. source-controller downloads the index
// again for every new token, which for a large index is most of a fleet's
// source work, so a release asks only when the shared HelmChart of its
// version is not built yet: a built one needs no newer index. A request
// that source-controller has not handled yet is written again rather than
// a new one, so that a fleet's releases of a new version ask once.
func (e *Client) indexRequest(ctx context.Context, objs *Objects, token string) (string, error) {
	chart := &sourcev1.HelmChart{}
	switch err := e.Kube.Get(ctx, client.ObjectKeyFromObject(objs.Chart), chart); {
	case apierrors.IsNotFound(err):
		return e.pendingIndexRequest(ctx, objs.Source, token)
	case err != nil:
		return "", fmt.Errorf("reading the shared HelmChart %s/%s: %w", objs.Chart.GetNamespace(), objs.Chart.GetName(), err)
	}
	built := chart.Status.Artifact != nil && chart.Status.ObservedGeneration >= chart.Generation &&
		apimeta.IsStatusConditionTrue(chart.Status.Conditions, meta.ReadyCondition)
	if built {
		return "", nil
	}
	return e.pendingIndexRequest(ctx, objs.Source, token)
}

// pendingIndexRequest is the request of the shared HelmRepository repo
// that source-controller has not handled yet, or token when there is none.
func (e *Client) pendingIndexRequest(ctx context.Context, repo client.Object, token string) (string, error) {
	live := &sourcev1.HelmRepository{}
	switch err := e.Kube.Get(ctx, client.ObjectKeyFromObject(repo), live); {
	case apierrors.IsNotFound(err):
		return token, nil
	case err != nil:
		return "", fmt.Errorf("reading the shared HelmRepository %s/%s: %w", repo.GetNamespace(), repo.GetName(), err)
	}
	if pending := live.Annotations[RequestedAtAnnotation]; pending != "" && pending != live.Status.LastHandledReconcileAt {
		return pending, nil
	}
	return token, nil
}

// setRequest writes token as obj's reconcile request, or none when empty.
func setRequest(obj client.Object, token string) {
	annotations := obj.GetAnnotations()
	if token == "" {
		delete(annotations, RequestedAtAnnotation)
	} else {
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[RequestedAtAnnotation] = token
	}
	if len(annotations) == 0 {
		annotations = nil
	}
	obj.SetAnnotations(annotations)
}
