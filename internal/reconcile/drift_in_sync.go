package reconcile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"

	"helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/manifest"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/postrender"
)

// InSyncRecord is what drift detection last found in sync: the
// resourceVersion of each object of one release revision whose dry run
// showed no drift under the same ignore rules, or that only this
// provider's Helm actions had written (writtenByHelmAlone). The API server changes an
// object's resourceVersion with every write to it, so an object still at
// its recorded version is the object that was compared: its dry run
// would show no drift again, and drift detection skips it (one metadata
// list per kind and namespace instead of a read and a dry-run apply per
// object). What it cannot see is a change of the server's own behaviour
// (new defaults of a CRD, a new mutating webhook) to an object nobody
// wrote; such an object is compared again once anything writes it, or on
// the next revision.
type InSyncRecord struct {
	// Basis identifies the revision's manifest and the ignore rules the
	// versions hold for.
	Basis string `json:"basis"`
	// Versions maps object keys to resourceVersions.
	Versions map[string]string `json:"versions"`
}

// inSyncBasis is the Basis of a record of rel under ignore.
func inSyncBasis(rel *release.Release, ignore []IgnoreRule) string {
	h := sha256.New()
	rules, _ := json.Marshal(ignore) // plain data
	for _, part := range []string{rel.Namespace, rel.Name, strconv.Itoa(rel.Version), rel.Manifest, string(rules)} {
		h.Write([]byte(strconv.Itoa(len(part)) + ":" + part))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// inSyncWithoutComparing returns the objects of objs that need no dry run,
// by key, with their resourceVersion: those still at the resourceVersion
// rec recorded for them (rec may be nil), and, when the release is
// deployed, those that only this provider's Helm actions ever wrote
// (writtenByHelmAlone). One metadata
// list per kind and namespace, selecting the release's origin labels; a
// list that fails (e.g. no RBAC permission to list) leaves its objects to
// be compared in full.
func (e *Engine) inSyncWithoutComparing(ctx context.Context, rec *InSyncRecord, deployed bool, objs []manifest.Object, mapper meta.RESTMapper) map[string]string {
	type group struct {
		gvr       schema.GroupVersionResource
		namespace string
		selector  string
	}
	groups := map[group][]manifest.Object{}
	for _, o := range objs {
		l := o.Object.GetLabels()
		name, ns := l[postrender.OriginNameLabel], l[postrender.OriginNamespaceLabel]
		if name == "" {
			continue
		}
		gvk := o.Object.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			continue
		}
		g := group{gvr: m.Resource, selector: labels.SelectorFromSet(labels.Set{
			postrender.OriginNameLabel: name, postrender.OriginNamespaceLabel: ns,
		}).String()}
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			g.namespace = o.Object.GetNamespace()
		}
		groups[g] = append(groups[g], o)
	}
	out := map[string]string{}
	if len(groups) == 0 {
		return out
	}
	cfg, err := e.Kube.ToRESTConfig()
	if err != nil {
		return out
	}
	client, err := metadata.NewForConfig(cfg)
	if err != nil {
		return out
	}
	for g, members := range groups {
		list, err := client.Resource(g.gvr).Namespace(g.namespace).List(ctx, metav1.ListOptions{LabelSelector: g.selector})
		if err != nil {
			e.logger().Debug("drift detection compares in full", "resource", g.gvr.String(), "namespace", g.namespace, "error", err.Error())
			continue
		}
		live := make(map[string]*metav1.PartialObjectMetadata, len(list.Items))
		for i := range list.Items {
			live[list.Items[i].Namespace+"/"+list.Items[i].Name] = &list.Items[i]
		}
		for _, o := range members {
			m := live[o.Object.GetNamespace()+"/"+o.Object.GetName()]
			switch {
			case m == nil || m.ResourceVersion == "":
			case rec != nil && m.ResourceVersion == rec.Versions[o.Key]:
				out[o.Key] = m.ResourceVersion
			case deployed && writtenByHelmAlone(m):
				out[o.Key] = m.ResourceVersion
			}
		}
	}
	return out
}

// writtenByHelmAlone reports whether every field of the object was last set
// by this provider's Helm actions (its managedFields name no other manager,
// no server-side apply and no subresource write). Helm writes an object as
// the manifest of the revision that last changed it, and skips it when a
// revision leaves it unchanged: such an object is the release's manifest as
// admitted, which its dry run would show again. A write by anyone else
// (kubectl, a controller, this provider's drift correction, Helm from
// another tool) adds its manager, and the object is compared.
func writtenByHelmAlone(m *metav1.PartialObjectMetadata) bool {
	if len(m.ManagedFields) == 0 {
		return false
	}
	for _, f := range m.ManagedFields {
		if f.Manager != helm.FieldManager || f.Operation != metav1.ManagedFieldsOperationUpdate || f.Subresource != "" {
			return false
		}
	}
	return true
}

// InSync returns the record of the newest drift detection, or the one
// given by SetInSync when none ran; nil when there is neither.
func (e *Engine) InSync() *InSyncRecord {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.inSync
}

// SetInSync gives the engine the record of an earlier detection of the
// same release (kept by the caller, e.g. in the resource's private
// state); each detection replaces it with its own. A record of another
// revision or other ignore rules is not used.
func (e *Engine) SetInSync(rec *InSyncRecord) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.inSync = rec
}
