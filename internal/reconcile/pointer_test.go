package reconcile

import (
	"reflect"
	"testing"
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
