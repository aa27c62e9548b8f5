package flux

import (
	"context"
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Delete deletes the HelmRelease namespace/name and waits until it is
// gone, then deletes the source and Secrets written for it. With
// uninstall, the controller uninstalls the release as it removes its
// finalizer; without, the HelmRelease is suspended first and the
// controller lets the release go (helm-controller skips the uninstall of
// a suspended HelmRelease): the release stays installed, unmanaged.
func (e *Engine) Delete(ctx context.Context, namespace, name string, uninstall bool, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	hr, err := e.Get(ctx, namespace, name)
	if err != nil {
		return err
	}
	if hr != nil {
		if !uninstall {
			if err := e.suspend(ctx, hr); err != nil {
				return err
			}
		}
		if err := e.Client.Delete(ctx, hr); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting HelmRelease %s/%s: %w", namespace, name, err)
		}
		if err := e.waitGone(ctx, hr, timeout); err != nil {
			return err
		}
	}
	return e.deleteAuxiliary(ctx, namespace, name)
}

// suspend sets spec.suspend and waits until the controller has observed
// it (or there is no finalizer, so no controller to tell).
func (e *Engine) suspend(ctx context.Context, hr *helmv2.HelmRelease) error {
	if len(hr.Finalizers) == 0 {
		return nil
	}
	// A merge patch: the provider's apply owns the rest of the spec and
	// keeps it.
	patch := client.MergeFrom(hr.DeepCopy())
	suspended := hr.DeepCopy()
	suspended.Spec.Suspend = true
	if err := e.Client.Patch(ctx, suspended, patch, client.FieldOwner(FieldManager)); err != nil {
		return fmt.Errorf("suspending HelmRelease %s/%s: %w", hr.Namespace, hr.Name, err)
	}
	for {
		cur, err := e.Get(ctx, hr.Namespace, hr.Name)
		if err != nil || cur == nil {
			return err
		}
		if cur.Status.ObservedGeneration >= suspended.Generation {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("HelmRelease %s/%s: no controller observed the suspension (generation %d), so deleting it could uninstall the release; check that helm-controller runs: %w", hr.Namespace, hr.Name, suspended.Generation, ctx.Err())
		case <-time.After(e.poll()):
		}
	}
}

// waitGone waits until the HelmRelease no longer exists.
func (e *Engine) waitGone(ctx context.Context, hr *helmv2.HelmRelease, timeout time.Duration) error {
	for {
		cur, err := e.Get(ctx, hr.Namespace, hr.Name)
		if err != nil {
			return err
		}
		if cur == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			why := "the controller has not removed its finalizer (uninstall still running, or no helm-controller running)"
			if c := readyCondition(cur); c != nil {
				why += fmt.Sprintf("; Ready=%s (%s): %s", c.Status, c.Reason, c.Message)
			}
			return fmt.Errorf("HelmRelease %s/%s still exists %s after it was deleted: %s", hr.Namespace, hr.Name, timeout, why)
		case <-time.After(e.poll()):
		}
	}
}

func readyCondition(hr *helmv2.HelmRelease) *metav1.Condition {
	for i := range hr.Status.Conditions {
		if hr.Status.Conditions[i].Type == "Ready" {
			return &hr.Status.Conditions[i]
		}
	}
	return nil
}

// DeleteWritten deletes the source and Secrets written for the
// HelmRelease name, when a create failed before the HelmRelease was
// written: they would otherwise be left, in no state. It runs even when
// ctx is done (an apply interrupted), for a minute at most.
func (e *Engine) DeleteWritten(ctx context.Context, namespace, name string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	return e.deleteAuxiliary(ctx, namespace, name)
}

// deleteAuxiliary deletes the source and Secrets written for the
// HelmRelease name (those labelled for it and managed by the provider).
func (e *Engine) deleteAuxiliary(ctx context.Context, namespace, name string) error {
	for _, obj := range []client.Object{
		&sourcev1.HelmRepository{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: SourceName(name)}},
		&sourcev1.OCIRepository{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: SourceName(name)}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: ValuesName(name)}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: CredentialsName(name)}},
	} {
		if err := e.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return fmt.Errorf("reading %T %s/%s: %w", obj, namespace, obj.GetName(), err)
		}
		if l := obj.GetLabels(); l[ManagedByLabel] != ManagedBy || l[ReleaseLabel] != name {
			continue // not written for this release: left alone
		}
		if err := e.Client.Delete(ctx, obj, client.Preconditions{UID: ptr(obj.GetUID())}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s %s/%s: %w", obj.GetObjectKind().GroupVersionKind().Kind, namespace, obj.GetName(), err)
		}
	}
	return nil
}

func ptr[T any](v T) *T { return &v }
