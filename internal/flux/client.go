package flux

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
)

// FieldManager writes every object of a release handed to Flux.
const FieldManager = "terraform-provider-helmrelease"

// DefaultPollInterval is how often a wait reads the HelmRelease.
const DefaultPollInterval = 500 * time.Millisecond

// Client writes, waits for and deletes the Flux objects of releases on one
// cluster. Safe for concurrent use.
type Client struct {
	Kube client.Client
	// PollInterval of waits; zero is DefaultPollInterval.
	PollInterval time.Duration
	// ControllerGrace: a wait ends once a HelmRelease written has shown
	// for this long that no controller handles it; zero is
	// DefaultControllerGrace.
	ControllerGrace time.Duration
	// specFields holds the fields HasSpecField found.
	specFields sync.Map
}

// NewScheme is a scheme of the kinds the client reads and writes.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, helmv2.AddToScheme, sourcev1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("building the Flux scheme: %w", err)
		}
	}
	return s, nil
}

// New returns a client of the Flux objects on the cluster of cfg.
func New(cfg *rest.Config) (*Client, error) {
	s, err := NewScheme()
	if err != nil {
		return nil, err
	}
	c, err := kube.NewControllerClient(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, fmt.Errorf("creating the Flux client: %w", err)
	}
	return &Client{Kube: c}, nil
}

func (e *Client) poll() time.Duration {
	if e.PollInterval > 0 {
		return e.PollInterval
	}
	return DefaultPollInterval
}

// ErrCRDsMissing: the cluster does not serve Flux's HelmRelease or source
// kinds.
var ErrCRDsMissing = errors.New("the cluster does not serve Flux's kinds")

// CheckCRDs returns an error wrapping ErrCRDsMissing, naming the kinds,
// when the cluster lacks the HelmRelease, HelmRepository or OCIRepository
// kinds of the versions the client writes.
func (e *Client) CheckCRDs() error {
	var missing []string
	for _, gvk := range []struct{ group, version, kind string }{
		{helmv2.GroupVersion.Group, helmv2.GroupVersion.Version, helmv2.HelmReleaseKind},
		{sourcev1.GroupVersion.Group, sourcev1.GroupVersion.Version, sourcev1.HelmRepositoryKind},
		{sourcev1.GroupVersion.Group, sourcev1.GroupVersion.Version, sourcev1.OCIRepositoryKind},
	} {
		gv := helmv2.GroupVersion
		gv.Group, gv.Version = gvk.group, gvk.version
		if _, err := e.Kube.RESTMapper().RESTMapping(gv.WithKind(gvk.kind).GroupKind(), gvk.version); err != nil {
			if !meta.IsNoMatchError(err) {
				return fmt.Errorf("looking up %s %s: %w", gv, gvk.kind, err)
			}
			missing = append(missing, gv.String()+" "+gvk.kind)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %v", ErrCRDsMissing, missing)
	}
	return nil
}

// HasSpecField reports whether the cluster's HelmRelease CRD declares
// spec.<field> at API version v2; field is a dotted path, through lists'
// elements ("valuesFrom.literal"). helm-controller v1.5 added waitStrategy,
// healthCheckExprs and the serverSideApply fields, which an older CRD would
// drop silently; v1.6 postRenderStrategy, valuesFrom[].literal and
// upgrade.chartNameChangeStrategy. A CRD gains fields as Flux is upgraded, which a
// provider process may outlive: a field found is remembered for the
// client's life, one missing is looked up again.
func (e *Client) HasSpecField(ctx context.Context, field string) (bool, error) {
	return e.hasField(ctx, "helmreleases."+helmv2.GroupVersion.Group, helmv2.GroupVersion.Version, field)
}

// HasOCIRepositorySpecField is HasSpecField for the OCIRepository CRD at
// API version v1: source-controller v1.9 added
// verify.trustedRootSecretRef.
func (e *Client) HasOCIRepositorySpecField(ctx context.Context, field string) (bool, error) {
	return e.hasField(ctx, "ocirepositories."+sourcev1.GroupVersion.Group, sourcev1.GroupVersion.Version, field)
}

func (e *Client) hasField(ctx context.Context, crdName, version, field string) (bool, error) {
	key := crdName + "\x00" + field
	if _, ok := e.specFields.Load(key); ok {
		return true, nil
	}
	found, err := e.hasSpecField(ctx, crdName, version, field)
	if found {
		e.specFields.Store(key, true)
	}
	return found, err
}

func (e *Client) hasSpecField(ctx context.Context, name, version, field string) (bool, error) {
	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	if err := e.Kube.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
		return false, fmt.Errorf("reading CRD %s: %w", name, err)
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		m, _ := v.(map[string]any)
		if m["name"] != version {
			continue
		}
		node, _, _ := unstructured.NestedMap(m, "schema", "openAPIV3Schema", "properties", "spec")
		for _, name := range strings.Split(field, ".") {
			if items, ok := node["items"].(map[string]any); ok {
				node = items // a list's elements
			}
			next, found, _ := unstructured.NestedMap(node, "properties", name)
			if !found {
				return false, nil
			}
			node = next
		}
		return true, nil
	}
	return false, nil
}

// Apply writes objs by server-side apply under FieldManager, in order,
// taking over fields other managers set, and returns the HelmRelease as
// written. A shared source and its credentials are written under the
// release's own field manager (SharedManager), with the HelmRelease as one
// of their owners: each release owns its owner reference, which another
// release's apply keeps, and Kubernetes deletes them with their last
// owner. The sources and credentials the release used before and no
// longer does are let go (Release).
func (e *Client) Apply(ctx context.Context, objs *Objects) (*helmv2.HelmRelease, error) {
	ns, name := objs.HelmRelease.Namespace, objs.HelmRelease.Name
	switch foreign, err := e.foreign(ctx, objs); {
	case err != nil:
		return nil, err
	case len(foreign) > 0:
		return nil, fmt.Errorf("%w: %s in namespace %q exist and are not this provider's (no %s=%s label): written over, another's chart source or Secret would change hands and be deleted with the release. Rename or delete them if they are left over, or name the release otherwise", ErrForeignObjects, strings.Join(foreign, ", "), ns, ManagedByLabel, ManagedBy)
	}
	var owner *metav1.OwnerReference
	if objs.Shared {
		cur, err := e.Get(ctx, ns, name)
		if err != nil {
			return nil, err
		}
		owner = ownerOf(cur)
	}
	var written *unstructured.Unstructured
	for _, obj := range objs.List() {
		if objs.shared(obj) {
			if err := e.applyShared(ctx, obj, name, owner); err != nil {
				return nil, err
			}
			continue
		}
		u, err := applied(obj)
		if err != nil {
			return nil, err
		}
		// The apply writes the object as it is now into its argument.
		want := u.DeepCopy()
		if u.GetKind() == helmv2.HelmReleaseKind {
			// First too: a HelmRelease another writer made (imported) may
			// hold spec.chart where the apply writes spec.chartRef, and
			// the API server refuses one with both.
			if _, err := e.replaceForeignFields(ctx, want.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
				return nil, err
			}
		}
		if err := e.Kube.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
			return nil, fmt.Errorf("applying %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
		live, err := e.replaceForeignFields(ctx, want)
		if err != nil {
			return nil, err
		}
		written = live
	}
	hr := &helmv2.HelmRelease{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(written.Object, hr); err != nil {
		return nil, fmt.Errorf("reading the HelmRelease written: %w", err)
	}
	if objs.Shared && owner == nil {
		// Created now: its owner reference can be written only now. A
		// source its last other owner's deletion took meanwhile is
		// written again.
		for _, obj := range objs.sharedObjects() {
			if err := e.applyShared(ctx, obj, name, ownerOf(hr)); err != nil {
				return nil, err
			}
		}
	}
	var keep []client.Object
	if objs.Shared {
		keep = objs.sharedObjects()
	}
	if err := errors.Join(e.Release(ctx, ns, hr.UID, keep...), e.deleteOwn(ctx, objs)); err != nil {
		return hr, &CleanupError{Err: err}
	}
	return hr, nil
}

// ErrForeignObjects is Apply's refusal to write over objects of the
// release's names that the provider did not write.
var ErrForeignObjects = errors.New("objects of the release's names belong to another")

// foreign names the objects objs writes for its release alone that exist
// and are not this provider's. Its HelmRelease, which an import takes
// over, and shared sources, which carry their own label, are not looked
// at.
func (e *Client) foreign(ctx context.Context, objs *Objects) ([]string, error) {
	var out []string
	for _, obj := range objs.List() {
		if objs.shared(obj) || obj == client.Object(objs.HelmRelease) {
			continue
		}
		gvk := obj.GetObjectKind().GroupVersionKind()
		kind := gvk.Kind
		cur := &unstructured.Unstructured{}
		cur.SetGroupVersionKind(gvk)
		if err := e.Kube.Get(ctx, client.ObjectKeyFromObject(obj), cur); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("reading %s %s/%s: %w", kind, obj.GetNamespace(), obj.GetName(), err)
		}
		if cur.GetLabels()[ManagedByLabel] != ManagedBy {
			out = append(out, kind+" "+obj.GetName())
		}
	}
	return out, nil
}

// CleanupError is the failure of Apply to let go the sources and Secrets
// the release no longer uses, once the HelmRelease was written: the
// release is written, and those objects are left.
type CleanupError struct{ Err error }

func (e *CleanupError) Error() string { return e.Err.Error() }

func (e *CleanupError) Unwrap() error { return e.Err }

// SharedManager is the field manager of the release name's writes of a
// shared source and its credentials.
func SharedManager(name string) string {
	m := FieldManager + ":" + name
	if len(m) > 128 { // the API server's limit
		sum := sha256.Sum256([]byte(name))
		m = FieldManager + ":" + hex.EncodeToString(sum[:16])
	}
	return m
}

// ownerOf is the owner reference to hr, nil for none.
func ownerOf(hr *helmv2.HelmRelease) *metav1.OwnerReference {
	if hr == nil || hr.UID == "" {
		return nil
	}
	return &metav1.OwnerReference{APIVersion: helmv2.GroupVersion.String(), Kind: helmv2.HelmReleaseKind, Name: hr.Name, UID: hr.UID}
}

// applyShared writes a shared object under the release's own field
// manager, with owner among its owner references when known. Every
// release writes the same content; a rotated password is the newest
// apply's.
func (e *Client) applyShared(ctx context.Context, obj client.Object, release string, owner *metav1.OwnerReference) error {
	u, err := applied(obj)
	if err != nil {
		return err
	}
	if owner != nil {
		u.SetOwnerReferences([]metav1.OwnerReference{*owner})
	}
	if err := e.Kube.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(SharedManager(release)), client.ForceOwnership); err != nil {
		return fmt.Errorf("applying the shared %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return nil
}

// contentFields are the top-level fields the provider writes whole: what
// an object says, as opposed to its metadata and status.
var contentFields = []string{"spec", "data", "stringData", "type"}

// replaceForeignFields makes the content of the object applied as u what
// u says: a server-side apply takes over the fields it names, but leaves
// those another writer added (a key added to a HelmRelease's values by
// kubectl edit stays). When another manager owns content fields, the
// object is replaced with u's content, its metadata merged. It returns
// the object as it is now.
func (e *Client) replaceForeignFields(ctx context.Context, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	var live *unstructured.Unstructured
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		live = &unstructured.Unstructured{}
		live.SetGroupVersionKind(u.GroupVersionKind())
		if err := e.Kube.Get(ctx, client.ObjectKeyFromObject(u), live); err != nil {
			return err
		}
		if !foreignContent(live) {
			return nil
		}
		for _, f := range contentFields {
			if v, ok := u.Object[f]; ok {
				live.Object[f] = v
			} else {
				delete(live.Object, f)
			}
		}
		labels, annotations := live.GetLabels(), live.GetAnnotations()
		if labels == nil {
			labels = map[string]string{}
		}
		if annotations == nil {
			annotations = map[string]string{}
		}
		maps.Copy(labels, u.GetLabels())
		maps.Copy(annotations, u.GetAnnotations())
		live.SetLabels(labels)
		live.SetAnnotations(annotations)
		return e.Kube.Update(ctx, live, client.FieldOwner(FieldManager))
	})
	if err != nil {
		return nil, fmt.Errorf("writing back %s %s/%s over another writer's fields: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return live, nil
}

// foreignContent reports whether a manager other than the provider owns
// content fields of obj (status and metadata are others' to write).
func foreignContent(obj *unstructured.Unstructured) bool {
	for _, m := range obj.GetManagedFields() {
		if m.Manager == FieldManager || m.Subresource != "" || m.FieldsV1 == nil {
			continue
		}
		var owned map[string]any
		if json.Unmarshal(m.FieldsV1.GetRawBytes(), &owned) != nil {
			continue
		}
		for _, f := range contentFields {
			if _, ok := owned["f:"+f]; ok {
				return true
			}
		}
	}
	return false
}

// applied is obj as an apply request: no status, no creation time.
func applied(obj client.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("encoding %T: %w", obj, err)
	}
	delete(m, "status")
	unstructured.RemoveNestedField(m, "metadata", "creationTimestamp")
	return &unstructured.Unstructured{Object: m}, nil
}

// Get returns the HelmRelease, nil when there is none.
func (e *Client) Get(ctx context.Context, namespace, name string) (*helmv2.HelmRelease, error) {
	hr := &helmv2.HelmRelease{}
	if err := e.Kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, hr); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading HelmRelease %s/%s: %w", namespace, name, err)
	}
	return hr, nil
}

// CreateNamespace creates the namespace name unless it exists, for the
// HelmRelease of a release installed with createNamespace (the controller
// creates only the release's target namespace, in which the HelmRelease
// need not be), marked as created for the release createdFor
// (kube.CreatedForAnnotation).
func (e *Client) CreateNamespace(ctx context.Context, name, createdFor string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"name": name}, Annotations: map[string]string{kube.CreatedForAnnotation: createdFor}}}
	if err := e.Kube.Create(ctx, ns, client.FieldOwner(FieldManager)); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}

// WrittenByProvider reports whether hr was written by this provider (its
// ManagedByLabel), for a helmrelease_release.
func WrittenByProvider(hr *helmv2.HelmRelease) bool {
	return hr.Labels[ManagedByLabel] == ManagedBy
}

// Managers says who wrote hr, for a diagnostic: the Flux Kustomization
// or the managers of its fields.
func Managers(hr *helmv2.HelmRelease) string {
	if name := hr.Labels["kustomize.toolkit.fluxcd.io/name"]; name != "" {
		return fmt.Sprintf("Flux Kustomization %s/%s", hr.Labels["kustomize.toolkit.fluxcd.io/namespace"], name)
	}
	var managers []string
	for _, f := range hr.ManagedFields {
		if f.Subresource == "" && !slices.Contains(managers, f.Manager) {
			managers = append(managers, f.Manager)
		}
	}
	if len(managers) == 0 {
		return "an unknown writer"
	}
	return "field managers " + strings.Join(managers, ", ")
}

// ControllerVersion says which helm-controller runs, best effort, for a
// diagnostic: the image of a Deployment labelled as Flux installs it
// (app.kubernetes.io/component=helm-controller), else the Flux version
// its HelmRelease CRD is labelled with; "helm-controller of unknown
// version" when neither can be read.
func (e *Client) ControllerVersion(ctx context.Context) string {
	list := &appsv1.DeploymentList{}
	if e.Kube.List(ctx, list, client.MatchingLabels{"app.kubernetes.io/component": "helm-controller"}) == nil {
		for _, d := range list.Items {
			for _, c := range d.Spec.Template.Spec.Containers {
				if strings.Contains(c.Image, "helm-controller") {
					return "helm-controller " + c.Image[strings.LastIndex(c.Image, "/")+1:]
				}
			}
		}
	}
	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	if e.Kube.Get(ctx, client.ObjectKey{Name: "helmreleases." + helmv2.GroupVersion.Group}, crd) == nil {
		if v := crd.GetLabels()["app.kubernetes.io/version"]; v != "" {
			return "helm-controller of Flux " + v
		}
	}
	return "helm-controller of unknown version (no Deployment labelled app.kubernetes.io/component=helm-controller is readable)"
}
