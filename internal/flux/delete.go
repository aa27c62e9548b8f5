package flux

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Delete deletes the HelmRelease namespace/name and waits until it is
// gone, then deletes the source and Secrets written for it. With
// uninstall, the controller uninstalls the release as it removes its
// finalizer; without, the HelmRelease is suspended first and the
// controller lets the release go (helm-controller skips the uninstall of
// a suspended HelmRelease): the release stays installed, unmanaged.
func (e *Client) Delete(ctx context.Context, namespace, name string, uninstall bool, timeout time.Duration) (err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	hr, err := e.Get(ctx, namespace, name)
	if err != nil {
		return err
	}
	if hr != nil {
		defer func() {
			if err == nil {
				if rerr := e.Release(ctx, namespace, hr.UID); rerr != nil {
					// Kubernetes' garbage collector lets them go too,
					// on its own time: the deletion stands.
					err = &CleanupError{Err: rerr}
				}
			}
		}()
		if !uninstall {
			if err := e.suspend(ctx, hr); err != nil {
				return err
			}
		}
		if err := e.Kube.Delete(ctx, hr); err != nil && !apierrors.IsNotFound(err) {
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
func (e *Client) suspend(ctx context.Context, hr *helmv2.HelmRelease) error {
	if len(hr.Finalizers) == 0 {
		return nil
	}
	// A merge patch: the provider's apply owns the rest of the spec and
	// keeps it.
	patch := client.MergeFrom(hr.DeepCopy())
	suspended := hr.DeepCopy()
	suspended.Spec.Suspend = true
	if err := e.Kube.Patch(ctx, suspended, patch, client.FieldOwner(FieldManager)); err != nil {
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
func (e *Client) waitGone(ctx context.Context, hr *helmv2.HelmRelease, timeout time.Duration) error {
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

// DeleteWritten deletes the source and Secrets written for the release
// of objs, when a create failed before the HelmRelease was written: they
// would otherwise be left, in no state. A shared source is deleted only
// when no release owns it. It runs even when ctx is done (an apply
// interrupted), for a minute at most.
func (e *Client) DeleteWritten(ctx context.Context, objs *Objects) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	hr := objs.HelmRelease
	var errs []error
	for _, obj := range objs.sharedObjects() {
		// source-controller writes the status of a source it has just
		// seen: the change is read again, not taken for another
		// release's.
		errs = append(errs, retry.OnError(ownersBackoff, apierrors.IsConflict, func() error {
			return e.deleteUnowned(ctx, obj)
		}))
	}
	// The release's own Secrets go even when a shared source could not.
	errs = append(errs, e.deleteAuxiliary(ctx, hr.Namespace, hr.Name))
	return errors.Join(errs...)
}

// Release lets the shared sources and HelmCharts of namespace go that
// the HelmRelease of uid owns, but keep: its owner reference is removed,
// and an object left with no owner is deleted, a source with its
// credentials. A release never deletes what another release owns.
func (e *Client) Release(ctx context.Context, namespace string, uid types.UID, keep ...client.Object) error {
	kept := func(obj client.Object) bool {
		return slices.ContainsFunc(keep, func(k client.Object) bool {
			return k.GetName() == obj.GetName() && reflect.TypeOf(k) == reflect.TypeOf(obj)
		})
	}
	shared := []client.ListOption{client.InNamespace(namespace), client.MatchingLabels{SharedLabel: "true", ManagedByLabel: ManagedBy}}
	charts := &sourcev1.HelmChartList{}
	if err := e.Kube.List(ctx, charts, shared...); err != nil {
		return fmt.Errorf("listing the shared HelmCharts of namespace %s: %w", namespace, err)
	}
	for i := range charts.Items {
		if chart := &charts.Items[i]; !kept(chart) && ownedBy(chart, uid) {
			if err := e.disown(ctx, chart, uid); err != nil {
				return err
			}
		}
	}
	list := &sourcev1.HelmRepositoryList{}
	if err := e.Kube.List(ctx, list, shared...); err != nil {
		return fmt.Errorf("listing the shared HelmRepositories of namespace %s: %w", namespace, err)
	}
	for i := range list.Items {
		repo := &list.Items[i]
		if kept(repo) || !ownedBy(repo, uid) {
			continue
		}
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: SharedCredentialsName(repo.Name)}}
		for _, obj := range []client.Object{repo, secret} {
			if err := e.disown(ctx, obj, uid); err != nil {
				return err
			}
		}
	}
	return nil
}

func ownedBy(obj client.Object, uid types.UID) bool {
	return slices.ContainsFunc(obj.GetOwnerReferences(), func(r metav1.OwnerReference) bool { return r.UID == uid })
}

// ownersBackoff paces the tries of a change to a shared object that
// others change at once (releases destroyed together, the garbage
// collector, source-controller's status): each try reads it again, after
// a jittered wait, for up to about 20 seconds.
var ownersBackoff = wait.Backoff{Duration: 50 * time.Millisecond, Factor: 1.5, Jitter: 1, Steps: 14, Cap: 4 * time.Second}

// disown removes the owner reference of uid from obj, then deletes obj if
// no owner is left; a change made meanwhile by another release (its owner
// reference added) is read again.
func (e *Client) disown(ctx context.Context, obj client.Object, uid types.UID) error {
	return retry.OnError(ownersBackoff, func(err error) bool { return apierrors.IsConflict(err) || apierrors.IsInvalid(err) }, func() error {
		if err := e.Kube.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return client.IgnoreNotFound(err)
		}
		refs := obj.GetOwnerReferences()
		i := slices.IndexFunc(refs, func(r metav1.OwnerReference) bool { return r.UID == uid })
		if i >= 0 {
			patch := fmt.Sprintf(`[{"op":"test","path":"/metadata/ownerReferences/%d/uid","value":%q},{"op":"remove","path":"/metadata/ownerReferences/%d"}]`, i, uid, i)
			if err := e.Kube.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, []byte(patch))); err != nil {
				return client.IgnoreNotFound(err)
			}
		}
		return e.deleteUnowned(ctx, obj)
	})
}

// deleteUnowned deletes obj, written by this provider, when it has no
// owner reference left, unless it changed since it was read.
func (e *Client) deleteUnowned(ctx context.Context, obj client.Object) error {
	if err := e.Kube.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	if len(obj.GetOwnerReferences()) > 0 || obj.GetLabels()[ManagedByLabel] != ManagedBy {
		return nil
	}
	rv := obj.GetResourceVersion()
	if err := e.Kube.Delete(ctx, obj, client.Preconditions{ResourceVersion: &rv}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the shared %T %s/%s no release uses: %w", obj, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// deleteOwn deletes the source and credentials the release of objs wrote
// for itself before and no longer uses: those of a Helm repository before
// it was shared, or an OCI source when the chart moved to a Helm
// repository.
func (e *Client) deleteOwn(ctx context.Context, objs *Objects) error {
	hr := objs.HelmRelease
	for _, obj := range []client.Object{
		&sourcev1.HelmRepository{ObjectMeta: metav1.ObjectMeta{Namespace: hr.Namespace, Name: SourceName(hr.Name)}},
		&sourcev1.OCIRepository{ObjectMeta: metav1.ObjectMeta{Namespace: hr.Namespace, Name: SourceName(hr.Name)}},
		&sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: hr.Namespace, Name: SourceName(hr.Name)}},
		&sourcev1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: hr.Namespace, Name: SourceName(hr.Name)}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: hr.Namespace, Name: CredentialsName(hr.Name)}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: hr.Namespace, Name: VerificationName(hr.Name)}},
	} {
		if slices.ContainsFunc(objs.List(), func(o client.Object) bool {
			return o.GetName() == obj.GetName() && reflect.TypeOf(o) == reflect.TypeOf(obj)
		}) {
			continue
		}
		if err := e.deleteLabelled(ctx, obj, hr.Name); err != nil {
			return err
		}
	}
	return nil
}

// deleteAuxiliary deletes the source and Secrets written for the
// HelmRelease name (those labelled for it and managed by the provider).
func (e *Client) deleteAuxiliary(ctx context.Context, namespace, name string) error {
	for _, obj := range []client.Object{
		&sourcev1.HelmRepository{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: SourceName(name)}},
		&sourcev1.OCIRepository{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: SourceName(name)}},
		&sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: SourceName(name)}},
		&sourcev1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: SourceName(name)}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: ValuesName(name)}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: CredentialsName(name)}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: VerificationName(name)}},
	} {
		if err := e.deleteLabelled(ctx, obj, name); err != nil {
			return err
		}
	}
	return nil
}

// deleteLabelled deletes obj when it was written for the HelmRelease
// name (labelled for it and managed by the provider); another's is left.
func (e *Client) deleteLabelled(ctx context.Context, obj client.Object, name string) error {
	if err := e.Kube.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		if apierrors.IsNotFound(err) || apimeta.IsNoMatchError(err) {
			// None, or not even its kind (a source-controller without it).
			return nil
		}
		if apierrors.IsForbidden(err) && optionalKind(obj) {
			// Credentials that may not read the kind could not have
			// written one: releases of Helm repositories need no access
			// to GitRepositories or Buckets.
			return nil
		}
		return fmt.Errorf("reading %T %s/%s: %w", obj, obj.GetNamespace(), obj.GetName(), err)
	}
	if l := obj.GetLabels(); l[ManagedByLabel] != ManagedBy || l[ReleaseLabel] != name {
		return nil // not written for this release: left alone
	}
	if err := e.Kube.Delete(ctx, obj, client.Preconditions{UID: ptr(obj.GetUID())}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %T %s/%s: %w", obj, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

// optionalKind reports whether obj is of a source kind only releases from
// Git or buckets write.
func optionalKind(obj client.Object) bool {
	switch obj.(type) {
	case *sourcev1.GitRepository, *sourcev1.Bucket:
		return true
	}
	return false
}
