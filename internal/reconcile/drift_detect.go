package reconcile

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	ssajsondiff "github.com/fluxcd/pkg/ssa/jsondiff"
	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/manifest"
)

// DriftExclusionKey, as a label or annotation with the value "disabled",
// excludes an object from drift detection. Flux's key is honoured too, so
// charts written for Flux keep working.
const (
	DriftExclusionKey     = "helmrelease.terraform.io/driftDetection"
	FluxDriftExclusionKey = "helm.toolkit.fluxcd.io/driftDetection"
)

// DriftDetector returns the detector of spec's drift detection mode, or nil
// when it is disabled.
func (e *Reconciler) DriftDetector(s *Spec) DriftDetector {
	if s.Drift.Mode != DriftWarn && s.Drift.Mode != DriftEnabled {
		return nil
	}
	return func(ctx context.Context, rel *helm.Release) (*DriftReport, error) {
		return e.DetectDrift(ctx, rel, s.Drift.Ignore)
	}
}

// DetectDrift compares each object of the release manifest with the
// cluster: a server-side dry-run apply of the object, normalised, against
// the live object, ignore rules applied. It reads only. Objects are
// compared concurrently, in bounded number; objects the engine's
// InSyncRecord found in sync at their present resourceVersion, and objects
// provably as this provider's Helm actions wrote them (asWritten), are not
// compared (a metadata list per kind and namespace, and a full list where
// there are such objects, say which). The record of this detection
// replaces it.
func (e *Reconciler) DetectDrift(ctx context.Context, rel *helm.Release, ignore []IgnoreRule) (*DriftReport, error) {
	mapper, err := e.Kube.ToRESTMapper()
	if err != nil {
		return nil, err
	}
	objs, err := manifest.Parse(rel.Manifest, rel.Namespace, func(gvk schema.GroupVersionKind) (bool, bool) {
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return false, false
		}
		return m.Scope.Name() == "namespace", true
	})
	if err != nil {
		return nil, fmt.Errorf("reading the manifest of release %s: %w", describe(rel), err)
	}
	rules := make([]ssajsondiff.IgnoreRule, len(ignore))
	for i, r := range ignore {
		rules[i] = ssajsondiff.IgnoreRule{Paths: r.Paths}
		if t := r.Target; t != nil {
			rules[i].Selector = &ssajsondiff.Selector{Group: t.Group, Version: t.Version, Kind: t.Kind, Name: t.Name,
				Namespace: t.Namespace, LabelSelector: t.LabelSelector, AnnotationSelector: t.AnnotationSelector}
		}
	}
	compiled, err := ssajsondiff.CompileIgnoreRules(rules)
	if err != nil {
		return nil, fmt.Errorf("drift detection ignore rules: %w", err)
	}
	exclusion := ssajsondiff.ExclusionSelector{DriftExclusionKey: "disabled", FluxDriftExclusionKey: "disabled"}

	basis := inSyncBasis(rel, ignore)
	prev := e.InSync()
	if prev != nil && prev.Basis != basis {
		prev = nil
	}
	inSync := e.inSyncWithoutComparing(ctx, prev, objs, mapper)
	var compare []manifest.Object
	for _, o := range objs {
		if _, ok := inSync[o.Key]; !ok {
			compare = append(compare, o)
		}
	}
	report := &DriftReport{}
	var c client.Client
	if len(compare) > 0 {
		if c, err = e.controllerClient(); err != nil {
			return nil, err
		}
	}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(kube.ObjectConcurrency) // one read and one dry-run request each
	for _, o := range compare {
		g.Go(func() error {
			var paths ssajsondiff.IgnorePaths
			for sel, p := range compiled {
				if sel.MatchUnstructured(o.Object) {
					paths = append(paths, p...)
				}
			}
			diff, err := ssajsondiff.Unstructured(gctx, c, o.Object.DeepCopy(),
				ssajsondiff.FieldOwner(kube.FieldManager), exclusion, paths)
			if err != nil {
				return fmt.Errorf("comparing %s with the cluster: %w", o.Key, err)
			}
			drift, ok, err := objectDrift(o.Key, o.Object, diff, e.Key)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			if !ok {
				if diff.Type == ssajsondiff.DiffTypeNone && diff.ClusterObject != nil {
					inSync[o.Key] = diff.ClusterObject.GetResourceVersion()
				}
				return nil
			}
			report.Objects = append(report.Objects, drift)
			report.diffs = append(report.diffs, diff)
			return nil
		})
	}
	err = g.Wait()
	sort.Slice(report.Objects, func(i, j int) bool { return report.Objects[i].Key < report.Objects[j].Key })
	if err != nil {
		return report, err
	}
	e.logger().Debug("drift detection done", "release", describe(rel), "objects", len(objs), "unchanged", len(objs)-len(compare),
		"compared", keysOf(compare), "drifted", len(report.Objects))
	e.SetInSync(&InSyncRecord{Basis: basis, Versions: inSync})
	return report, nil
}

// keysOf lists the keys of objs, space-separated.
func keysOf(objs []manifest.Object) string {
	keys := make([]string, len(objs))
	for i, o := range objs {
		keys[i] = o.Key
	}
	return strings.Join(keys, " ")
}

func (e *Reconciler) controllerClient() (client.Client, error) {
	cfg, err := e.Kube.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	mapper, err := e.Kube.ToRESTMapper()
	if err != nil {
		return nil, err
	}
	return kube.NewControllerClient(cfg, client.Options{Mapper: mapper})
}

// objectDrift describes the diff of the object desired; ok is false when
// the object has not drifted.
func objectDrift(key string, desired *unstructured.Unstructured, d *ssajsondiff.Diff, hashKey []byte) (ObjectDrift, bool, error) {
	switch d.Type {
	case ssajsondiff.DiffTypeCreate:
		return ObjectDrift{Key: key, Missing: true}, true, nil
	case ssajsondiff.DiffTypeUpdate:
	default:
		return ObjectDrift{}, false, nil
	}
	live, ok := d.ClusterObject.(*unstructured.Unstructured)
	if !ok {
		return ObjectDrift{}, false, fmt.Errorf("unexpected cluster object %T for %s", d.ClusterObject, key)
	}
	secret := d.GroupVersionKind().Group == "" && d.GroupVersionKind().Kind == "Secret"
	drift := ObjectDrift{Key: key, Observed: desired.DeepCopy()}
	for _, op := range d.Patch {
		change := FieldChange{Path: op.Path}
		if op.Type != "remove" {
			change.Desired = show(op.Value, secret, hashKey)
		}
		if v, found := pointer(live.Object, op.Path); found {
			change.Live = show(v, secret, hashKey)
		}
		drift.Changes = append(drift.Changes, change)
	}
	// The patch's paths name the Secret as stored: a manifest written with
	// stringData is undone in that form, then shown in its own again.
	stringData, folded := map[string]any(nil), false
	if secret {
		if sd, ok := drift.Observed.Object["stringData"].(map[string]any); ok {
			if stored, ok := secretAsStored(drift.Observed.Object); ok {
				stringData, folded, drift.Observed.Object = sd, true, stored
			}
		}
	}
	// The patch turns the live object into the desired one, op by op: its
	// inverses, last op first, turn the desired object back into the live
	// one at the drifted paths (list elements added or removed included).
	for i := len(d.Patch) - 1; i >= 0; i-- {
		op := d.Patch[i]
		v, found := pointer(live.Object, op.Path)
		drift.Observed.Object = undo(drift.Observed.Object, op.Type, op.Path, v, found).(map[string]any)
	}
	if folded {
		unfoldStringData(drift.Observed.Object, stringData, desired.Object["data"] != nil)
	}
	return drift, true, nil
}

// unfoldStringData moves the keys of the manifest's stringData back from
// obj's data (as secretAsStored folded them) into stringData, decoded: a
// key the live Secret lost is in neither. data goes when the manifest had
// none and nothing else is left in it.
func unfoldStringData(obj, stringData map[string]any, hadData bool) {
	data, _ := obj["data"].(map[string]any)
	live := map[string]any{}
	for k := range stringData {
		v, ok := data[k]
		if !ok {
			continue
		}
		delete(data, k)
		s, _ := v.(string)
		if dec, err := base64.StdEncoding.DecodeString(s); err == nil {
			live[k] = string(dec)
		} else {
			live[k] = v
		}
	}
	obj["stringData"] = live
	if len(live) == 0 {
		delete(obj, "stringData")
	}
	if !hadData && len(data) == 0 {
		delete(obj, "data")
	}
}

// show renders a value as one line of YAML; Secret values only as hashes.
func show(v any, secret bool, hashKey []byte) string {
	if secret {
		b, _ := json.Marshal(v)
		return manifest.Hash(hashKey, b)
	}
	b, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSpace(string(b))
}

// undo applies to obj the inverse of the patch operation op at the JSON
// pointer ptr and returns obj: the field takes the live value v, or is
// removed when the live object has none (!found); an element a patch
// added to a list ("add") is removed, one it removed is put back. Maps on
// the way are created; a pointer into a list element that is not there is
// left alone, and the object then shows the desired value at that path.
func undo(obj any, op, ptr string, v any, found bool) any {
	tokens := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i := range tokens {
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(tokens[i], "~1", "/"), "~0", "~")
	}
	return undoAt(obj, tokens, op, v, found)
}

func undoAt(cur any, tokens []string, op string, v any, found bool) any {
	tok, last := tokens[0], len(tokens) == 1
	switch t := cur.(type) {
	case map[string]any:
		if last {
			if found {
				t[tok] = runtime.DeepCopyJSONValue(v)
			} else {
				delete(t, tok)
			}
			return t
		}
		next, ok := t[tok]
		if !ok {
			if !found {
				return t
			}
			next = map[string]any{}
		}
		t[tok] = undoAt(next, tokens[1:], op, v, found)
		return t
	case []any:
		idx := len(t) - 1 // "-": the end of the list
		if tok != "-" {
			if _, err := fmt.Sscanf(tok, "%d", &idx); err != nil {
				return t
			}
		}
		switch {
		case last && op == "add":
			if idx < 0 || idx >= len(t) {
				return t
			}
			return slices.Delete(t, idx, idx+1)
		case last && op == "remove":
			if !found || idx < 0 || idx > len(t) {
				return t
			}
			return slices.Insert(t, idx, runtime.DeepCopyJSONValue(v))
		case idx < 0 || idx >= len(t):
			return t
		case last:
			if found {
				t[idx] = runtime.DeepCopyJSONValue(v)
			}
			return t
		}
		t[idx] = undoAt(t[idx], tokens[1:], op, v, found)
		return t
	}
	return cur
}

// pointer resolves an RFC 6901 JSON pointer in obj.
func pointer(obj any, ptr string) (any, bool) {
	if ptr == "" {
		return obj, true
	}
	cur := obj
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch t := cur.(type) {
		case map[string]any:
			v, ok := t[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			var i int
			if _, err := fmt.Sscanf(tok, "%d", &i); err != nil || i < 0 || i >= len(t) {
				return nil, false
			}
			cur = t[i]
		default:
			return nil, false
		}
	}
	return cur, true
}
