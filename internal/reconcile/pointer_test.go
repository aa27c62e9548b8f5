package reconcile

import (
	"encoding/base64"
	"maps"
	"reflect"
	"strings"
	"testing"

	ssajsondiff "github.com/fluxcd/pkg/ssa/jsondiff"
	"github.com/wI2L/jsondiff"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestUndo: the observed view of a drifted object takes the live value at
// each drifted path, loses the field, or the list element the patch adds,
// or gets back the element the patch removes.
func TestUndo(t *testing.T) {
	for name, tc := range map[string]struct {
		op    string
		ptr   string
		v     any
		found bool
		want  map[string]any
	}{
		"replace":          {"replace", "/spec/replicas", int64(5), true, map[string]any{"spec": map[string]any{"replicas": int64(5), "list": []any{"a"}}}},
		"remove":           {"add", "/spec/replicas", nil, false, map[string]any{"spec": map[string]any{"list": []any{"a"}}}},
		"create maps":      {"add", "/metadata/labels/a~1b", "x", true, map[string]any{"metadata": map[string]any{"labels": map[string]any{"a/b": "x"}}, "spec": map[string]any{"replicas": int64(2), "list": []any{"a"}}}},
		"list element":     {"replace", "/spec/list/0", "b", true, map[string]any{"spec": map[string]any{"replicas": int64(2), "list": []any{"b"}}}},
		"no such element":  {"replace", "/spec/list/3", "b", true, map[string]any{"spec": map[string]any{"replicas": int64(2), "list": []any{"a"}}}},
		"absent, not live": {"add", "/status/x", nil, false, map[string]any{"spec": map[string]any{"replicas": int64(2), "list": []any{"a"}}}},
		"element added":    {"add", "/spec/list/0", nil, false, map[string]any{"spec": map[string]any{"replicas": int64(2), "list": []any{}}}},
		"element appended": {"add", "/spec/list/-", nil, false, map[string]any{"spec": map[string]any{"replicas": int64(2), "list": []any{}}}},
		"element removed":  {"remove", "/spec/list/1", "z", true, map[string]any{"spec": map[string]any{"replicas": int64(2), "list": []any{"a", "z"}}}},
		"field in element": {"add", "/spec/list/0/x", nil, false, map[string]any{"spec": map[string]any{"replicas": int64(2), "list": []any{"a"}}}},
	} {
		var obj any = map[string]any{"spec": map[string]any{"replicas": int64(2), "list": []any{"a"}}}
		obj = undo(obj, tc.op, tc.ptr, tc.v, tc.found)
		if !reflect.DeepEqual(obj, tc.want) {
			t.Errorf("%s: got %v, want %v", name, obj, tc.want)
		}
	}
}

// TestObjectDriftSecret: a Secret's drift, whose patch names data, shows
// the live Secret in the manifest's own form: a key removed from data is
// gone from stringData too, a changed one shows its live value, a Secret
// that lost all its data shows none.
func TestObjectDriftSecret(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	secret := func(fields map[string]any) *unstructured.Unstructured {
		obj := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s", "namespace": "ns"}}
		maps.Copy(obj, fields)
		return &unstructured.Unstructured{Object: obj}
	}
	stringData := map[string]any{"stringData": map[string]any{"password": "p", "user": "u"}}
	data := map[string]any{"data": map[string]any{"password": b64("p"), "user": b64("u")}}
	for name, tc := range map[string]struct {
		desired map[string]any
		live    map[string]any
		patch   jsondiff.Patch
		want    map[string]any
	}{
		"stringData key removed": {stringData, map[string]any{"data": map[string]any{"user": b64("u")}},
			jsondiff.Patch{{Type: "add", Path: "/data/password", Value: b64("p")}},
			map[string]any{"stringData": map[string]any{"user": "u"}}},
		"stringData value changed": {stringData, map[string]any{"data": map[string]any{"password": b64("x"), "user": b64("u")}},
			jsondiff.Patch{{Type: "replace", Path: "/data/password", Value: b64("p")}},
			map[string]any{"stringData": map[string]any{"password": "x", "user": "u"}}},
		"stringData all data removed": {stringData, map[string]any{},
			jsondiff.Patch{{Type: "add", Path: "/data", Value: data["data"]}},
			map[string]any{}},
		"data key removed": {data, map[string]any{"data": map[string]any{"user": b64("u")}},
			jsondiff.Patch{{Type: "add", Path: "/data/password", Value: b64("p")}},
			map[string]any{"data": map[string]any{"user": b64("u")}}},
		"data all removed": {data, map[string]any{},
			jsondiff.Patch{{Type: "add", Path: "/data", Value: data["data"]}},
			map[string]any{}},
	} {
		desired, live, want := secret(tc.desired), secret(tc.live), secret(tc.want)
		d := &ssajsondiff.Diff{Type: ssajsondiff.DiffTypeUpdate, DesiredObject: desired, ClusterObject: live, Patch: tc.patch}
		drift, ok, err := objectDrift("v1/Secret/ns/s", desired, d, []byte("key"))
		if err != nil || !ok {
			t.Fatalf("%s: drift %v, %v", name, ok, err)
		}
		if !reflect.DeepEqual(drift.Observed.Object, want.Object) {
			t.Errorf("%s: observed %v, want %v", name, drift.Observed.Object, want.Object)
		}
		for _, c := range drift.Changes {
			if strings.Contains(c.Live+c.Desired, b64("p")) || !strings.HasPrefix(c.Desired, "(sensitive value)") {
				t.Errorf("%s: change shows a value: %+v", name, c)
			}
		}
	}
}
