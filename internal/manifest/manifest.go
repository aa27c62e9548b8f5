// Package manifest splits a rendered release manifest into objects and keys
// them the way the provider shows them: <group>/<version>/<Kind>/<namespace>/<name>.
package manifest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Scope tells whether a kind is namespaced. ok is false when it is unknown.
type Scope func(gvk schema.GroupVersionKind) (namespaced bool, ok bool)

// Object is one object of a manifest.
type Object struct {
	Key    string
	Object *unstructured.Unstructured
}

// Parse splits manifest into objects. Objects of namespaced kinds without a
// namespace get defaultNamespace, as Helm's client does when applying them.
// scope may be nil; kinds it does not know are decided by KnownClusterScoped
// and by the CRDs of the manifest itself, and are otherwise namespaced.
func Parse(manifest, defaultNamespace string, scope Scope) ([]Object, error) {
	objs, err := decodeOnce(manifest)
	if err != nil {
		return nil, err
	}
	crdScopes := map[schema.GroupKind]bool{}
	for _, u := range objs {
		if u.GetKind() == "CustomResourceDefinition" && u.GroupVersionKind().Group == "apiextensions.k8s.io" {
			group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
			sc, _, _ := unstructured.NestedString(u.Object, "spec", "scope")
			crdScopes[schema.GroupKind{Group: group, Kind: kind}] = sc != "Cluster"
		}
	}
	out := make([]Object, 0, len(objs))
	seen := map[string]bool{}
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		namespaced, ok := false, false
		if scope != nil {
			namespaced, ok = scope(gvk)
		}
		if !ok {
			namespaced, ok = crdScopes[gvk.GroupKind()]
		}
		if !ok {
			namespaced = !KnownClusterScoped[gvk.GroupKind()]
		}
		if namespaced && u.GetNamespace() == "" {
			u.SetNamespace(defaultNamespace)
		}
		if !namespaced {
			u.SetNamespace("")
		}
		key := Key(gvk, u.GetNamespace(), u.GetName())
		if seen[key] {
			return nil, fmt.Errorf("the manifest holds %s twice", key)
		}
		seen[key] = true
		out = append(out, Object{Key: key, Object: u})
	}
	return out, nil
}

// Key is <group>/<version>/<Kind>/<namespace>/<name>; the core group is
// written as its version alone (v1/ConfigMap/ns/name) and cluster-scoped
// objects have no namespace segment.
func Key(gvk schema.GroupVersionKind, namespace, name string) string {
	parts := []string{gvk.GroupVersion().String(), gvk.Kind}
	if namespace != "" {
		parts = append(parts, namespace)
	}
	return strings.Join(append(parts, name), "/")
}

// KnownClusterScoped are the built-in cluster-scoped kinds, used when no
// cluster is at hand to ask.
var KnownClusterScoped = map[schema.GroupKind]bool{
	{Kind: "Namespace"}:        true,
	{Kind: "Node"}:             true,
	{Kind: "PersistentVolume"}: true,
	{Kind: "ComponentStatus"}:  true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:                         true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:                  true,
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:                 true,
	{Group: "apiregistration.k8s.io", Kind: "APIService"}:                             true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}:   true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:     true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}:        true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicy"}:          true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicyBinding"}:   true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                                   true,
	{Group: "storage.k8s.io", Kind: "CSIDriver"}:                                      true,
	{Group: "storage.k8s.io", Kind: "CSINode"}:                                        true,
	{Group: "storage.k8s.io", Kind: "VolumeAttachment"}:                               true,
	{Group: "storage.k8s.io", Kind: "VolumeAttributesClass"}:                          true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:                               true,
	{Group: "node.k8s.io", Kind: "RuntimeClass"}:                                      true,
	{Group: "networking.k8s.io", Kind: "IngressClass"}:                                true,
	{Group: "networking.k8s.io", Kind: "IPAddress"}:                                   true,
	{Group: "networking.k8s.io", Kind: "ServiceCIDR"}:                                 true,
	{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"}:                 true,
	{Group: "certificates.k8s.io", Kind: "ClusterTrustBundle"}:                        true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "FlowSchema"}:                       true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "PriorityLevelConfiguration"}:       true,
	{Group: "resource.k8s.io", Kind: "DeviceClass"}:                                   true,
	{Group: "resource.k8s.io", Kind: "ResourceSlice"}:                                 true,
}

// Display returns the YAML shown for an object: keys sorted, and the values
// of a Secret's data and stringData replaced by Hash(key, value), so that a
// change shows without the secret. redact, when not nil, rewrites every
// string value of the object (map keys stay), e.g. to hide secrets a chart
// copied into a ConfigMap or an environment variable.
func Display(u *unstructured.Unstructured, key []byte, redact func(string) string) (string, error) {
	obj := u.DeepCopy()
	if IsSecret(obj) {
		if err := maskSecret(obj, key); err != nil {
			return "", err
		}
	}
	if redact != nil {
		obj.Object = mapStrings(obj.Object, redact).(map[string]any)
	}
	b, err := yaml.Marshal(obj.Object)
	if err != nil {
		return "", fmt.Errorf("encoding %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return string(b), nil
}

// mapStrings is v with f applied to every string in it, maps and lists
// walked.
func mapStrings(v any, f func(string) string) any {
	switch t := v.(type) {
	case string:
		return f(t)
	case map[string]any:
		for k, e := range t {
			t[k] = mapStrings(e, f)
		}
	case []any:
		for i, e := range t {
			t[i] = mapStrings(e, f)
		}
	}
	return v
}

// IsSecret reports whether obj is a core Secret.
func IsSecret(obj *unstructured.Unstructured) bool {
	return obj.GroupVersionKind().GroupKind() == (schema.GroupKind{Kind: "Secret"})
}

// SecretValues are the values of the data and stringData of the Secrets
// of manifest: each as written, and a data value decoded too.
func SecretValues(manifest string) ([]string, error) {
	objs, err := Parse(manifest, "", nil)
	if err != nil {
		return nil, err
	}
	var out []string
	for i := range objs {
		obj := objs[i].Object
		if !IsSecret(obj) {
			continue
		}
		for _, field := range []string{"data", "stringData"} {
			m, _, _ := unstructured.NestedMap(obj.Object, field)
			for _, v := range m {
				s := fmt.Sprint(v)
				out = append(out, s)
				if dec, err := base64.StdEncoding.DecodeString(s); field == "data" && err == nil {
					out = append(out, string(dec))
				}
			}
		}
	}
	return out, nil
}

// MaskedPrefix starts a masked Secret value.
const MaskedPrefix = "(sensitive value)"

func maskSecret(obj *unstructured.Unstructured, key []byte) error {
	for _, field := range []string{"data", "stringData"} {
		m, found, err := unstructured.NestedMap(obj.Object, field)
		if err != nil || !found {
			continue
		}
		for k, v := range m {
			s := fmt.Sprint(v)
			raw := []byte(s)
			if field == "data" {
				if dec, err := base64.StdEncoding.DecodeString(s); err == nil {
					raw = dec
				}
			}
			m[k] = Hash(key, raw)
		}
		if err := unstructured.SetNestedMap(obj.Object, m, field); err != nil {
			return fmt.Errorf("masking Secret %s: %w", obj.GetName(), err)
		}
	}
	// The last-applied annotation would carry the data in clear.
	if ann := obj.GetAnnotations(); ann != nil {
		if _, ok := ann["kubectl.kubernetes.io/last-applied-configuration"]; ok {
			ann["kubectl.kubernetes.io/last-applied-configuration"] = Hash(key, []byte(ann["kubectl.kubernetes.io/last-applied-configuration"]))
			obj.SetAnnotations(ann)
		}
	}
	return nil
}

// Hash is how a secret value is shown: an HMAC-SHA256 of it under key, a
// secret of the resource that shows it, so that the same value shows the
// same way in every plan of that resource and a change shows, while a
// guess cannot be checked against a published plan (as a plain digest of
// a weak password could). Without a key only MaskedPrefix is shown.
func Hash(key, b []byte) string {
	if len(key) == 0 {
		return MaskedPrefix
	}
	mac := hmac.New(sha256.New, key)
	mac.Write(b)
	return MaskedPrefix + " hmac-sha256:" + hex.EncodeToString(mac.Sum(nil))
}

// KindOfKey is the group, version and kind a Key names; false when key is
// not one.
func KindOfKey(key string) (schema.GroupVersionKind, bool) {
	parts := strings.Split(key, "/")
	if len(parts) < 3 {
		return schema.GroupVersionKind{}, false
	}
	// The core group's keys start with the version and a kind (upper
	// case); the others' with a group, a version, then a kind.
	if isKind(parts[1]) {
		return schema.GroupVersionKind{Version: parts[0], Kind: parts[1]}, true
	}
	if len(parts) < 4 || !isKind(parts[2]) {
		return schema.GroupVersionKind{}, false
	}
	return schema.GroupVersionKind{Group: parts[0], Version: parts[1], Kind: parts[2]}, true
}

func isKind(s string) bool { return s != "" && s[0] >= 'A' && s[0] <= 'Z' }

// decode is the objects of manifest, decoded (lists flattened).
func decode(manifest string) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifest), 4096)
	for i := 0; ; i++ {
		var raw map[string]any
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("parsing document %d of the manifest: %w", i+1, err)
		}
		if len(raw) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: raw}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("document %d of the manifest has no apiVersion or kind", i+1)
		}
		if u.IsList() {
			list, err := u.ToList()
			if err != nil {
				return nil, fmt.Errorf("document %d of the manifest: %w", i+1, err)
			}
			for j := range list.Items {
				objs = append(objs, &list.Items[j])
			}
			continue
		}
		objs = append(objs, u)
	}
	return objs, nil
}
