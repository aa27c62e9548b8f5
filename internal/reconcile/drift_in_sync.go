package reconcile

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"maps"
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/manifest"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/postrender"
)

// InSyncRecord is what drift detection last found in sync: the
// resourceVersion of each object of one release revision whose dry run
// showed no drift under the same ignore rules, or that was provably as
// this provider's Helm actions wrote it (asWritten). The API server changes an
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
func inSyncBasis(rel *helm.Release, ignore []IgnoreRule) string {
	h := sha256.New()
	rules, _ := json.Marshal(ignore) // plain data
	for _, part := range []string{rel.Namespace, rel.Name, strconv.Itoa(rel.Version), rel.Manifest, string(rules)} {
		h.Write([]byte(strconv.Itoa(len(part)) + ":" + part))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// inSyncWithoutComparing returns the objects of objs that need no dry run,
// by key, with their resourceVersion: those still at the resourceVersion
// rec recorded for them (rec may be nil), and those provably as this
// provider's Helm actions wrote them from the manifest (asWritten). One
// metadata list per kind and namespace, selecting the release's origin
// labels, and a full list of the groups that hold candidates for the
// second kind; a list that fails (e.g. no RBAC permission to list) leaves
// its objects to be compared in full.
func (e *Reconciler) inSyncWithoutComparing(ctx context.Context, rec *InSyncRecord, objs []manifest.Object, mapper meta.RESTMapper) map[string]string {
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
	metaClient, err := metadata.NewForConfig(cfg)
	if err != nil {
		return out
	}
	var full *dynamic.DynamicClient
	for g, members := range groups {
		opts := metav1.ListOptions{LabelSelector: g.selector}
		list, err := metaClient.Resource(g.gvr).Namespace(g.namespace).List(ctx, opts)
		if err != nil {
			e.logger().Debug("drift detection compares in full", "resource", g.gvr.String(), "namespace", g.namespace, "error", err.Error())
			continue
		}
		live := make(map[string]*metav1.PartialObjectMetadata, len(list.Items))
		for i := range list.Items {
			live[list.Items[i].Namespace+"/"+list.Items[i].Name] = &list.Items[i]
		}
		var candidates []manifest.Object
		for _, o := range members {
			m := live[o.Object.GetNamespace()+"/"+o.Object.GetName()]
			switch {
			case m == nil || m.ResourceVersion == "":
			case rec != nil && m.ResourceVersion == rec.Versions[o.Key]:
				out[o.Key] = m.ResourceVersion
			case writtenByHelmAlone(m.ManagedFields):
				candidates = append(candidates, o)
			}
		}
		if len(candidates) == 0 {
			continue
		}
		if full == nil {
			if full, err = dynamic.NewForConfig(cfg); err != nil {
				return out
			}
		}
		objects, err := full.Resource(g.gvr).Namespace(g.namespace).List(ctx, opts)
		if err != nil {
			e.logger().Debug("drift detection compares in full", "resource", g.gvr.String(), "namespace", g.namespace, "error", err.Error())
			continue
		}
		byName := make(map[string]*unstructured.Unstructured, len(objects.Items))
		for i := range objects.Items {
			byName[objects.Items[i].GetNamespace()+"/"+objects.Items[i].GetName()] = &objects.Items[i]
		}
		for _, o := range candidates {
			if u := byName[o.Object.GetNamespace()+"/"+o.Object.GetName()]; u != nil && asWritten(u, o.Object) {
				out[o.Key] = u.GetResourceVersion()
			}
		}
	}
	return out
}

// writtenByHelmAlone reports whether every field of the object was last
// set by this provider's Helm actions, client-side (Update) or by
// server-side apply (Apply): its managedFields name no other manager and
// no subresource write. It is not enough on its own: the API server drops
// a manager whose fields are all removed, so an edit that only removes
// fields leaves no trace of its writer.
func writtenByHelmAlone(fields []metav1.ManagedFieldsEntry) bool {
	if len(fields) == 0 {
		return false
	}
	for _, f := range fields {
		if f.Manager != helm.FieldManager || f.Subresource != "" {
			return false
		}
		if f.Operation != metav1.ManagedFieldsOperationUpdate && f.Operation != metav1.ManagedFieldsOperationApply {
			return false
		}
	}
	return true
}

// asWritten reports whether live is provably the object desired as this
// provider's Helm actions wrote it, so that a server-side dry run of
// desired would show no drift: only Helm's writes are in its managedFields
// (no other writer, whose fields a forced apply would take over and reset)
// and every field of desired is in live with the same value (an edit that
// removed a field, which managedFields cannot show, fails this). Lists must
// match in length and item by item; fields the server added (defaults,
// Helm's own labels, status) are extra and allowed. Anything it cannot
// decide — a null, a value the server normalises ("0.5" CPU stored as
// "500m") — answers false, and the object is compared by a dry run.
func asWritten(live, desired *unstructured.Unstructured) bool {
	if !writtenByHelmAlone(live.GetManagedFields()) {
		return false
	}
	want := desired.Object
	if manifest.IsSecret(desired) {
		var ok bool
		if want, ok = secretAsStored(desired.Object); !ok {
			return false
		}
	}
	for k, v := range want {
		if k == "apiVersion" || k == "kind" {
			continue // the list's, by construction
		}
		got, ok := live.Object[k]
		if !ok || !covers(got, v) {
			return false
		}
	}
	return true
}

// covers reports whether live holds every field of want with an equal
// value (see asWritten).
func covers(live, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range w {
			lv, ok := l[k]
			if !ok || !covers(lv, v) {
				return false
			}
		}
		return true
	case []any:
		l, ok := live.([]any)
		if !ok || len(l) != len(w) {
			return false
		}
		for i := range w {
			if !covers(l[i], w[i]) {
				return false
			}
		}
		return true
	case string, bool:
		return live == want
	case nil:
		return false
	default:
		a, okA := number(live)
		b, okB := number(want)
		return okA && okB && a == b
	}
}

// number is v as a float64 when it is a JSON number of any Go type the
// YAML and JSON decoders produce.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// secretAsStored is a Secret manifest as the API server stores it:
// stringData folded into data, base64-encoded (stringData wins). ok is
// false when a stringData value is not a string.
func secretAsStored(obj map[string]any) (map[string]any, bool) {
	sd, has := obj["stringData"]
	if !has {
		return obj, true
	}
	strs, ok := sd.(map[string]any)
	if !ok {
		return nil, false
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "stringData" {
			out[k] = v
		}
	}
	data := map[string]any{}
	if d, ok := obj["data"].(map[string]any); ok {
		maps.Copy(data, d)
	} else if obj["data"] != nil {
		return nil, false
	}
	for k, v := range strs {
		s, ok := v.(string)
		if !ok {
			return nil, false
		}
		data[k] = base64.StdEncoding.EncodeToString([]byte(s))
	}
	out["data"] = data
	return out, true
}

// InSync returns the record of the newest drift detection, or the one
// given by SetInSync when none ran; nil when there is neither.
func (e *Reconciler) InSync() *InSyncRecord {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.inSync
}

// SetInSync gives the reconciler the record of an earlier detection of the
// same release (kept by the caller, e.g. in the resource's private
// state); each detection replaces it with its own. A record of another
// revision or other ignore rules is not used.
func (e *Reconciler) SetInSync(rec *InSyncRecord) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.inSync = rec
}
