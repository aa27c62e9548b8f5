package reconcile

import (
	"reflect"
	"testing"
)

// TestSetPointer: the observed view of a drifted object takes the live
// value at each drifted path, or loses the field.
func TestSetPointer(t *testing.T) {
	for name, tc := range map[string]struct {
		ptr   string
		v     any
		found bool
		want  map[string]any
	}{
		"replace":          {"/spec/replicas", int64(5), true, map[string]any{"spec": map[string]any{"replicas": int64(5), "list": []any{"a"}}}},
		"remove":           {"/spec/replicas", nil, false, map[string]any{"spec": map[string]any{"list": []any{"a"}}}},
		"create maps":      {"/metadata/labels/a~1b", "x", true, map[string]any{"metadata": map[string]any{"labels": map[string]any{"a/b": "x"}}, "spec": map[string]any{"replicas": int64(2), "list": []any{"a"}}}},
		"list element":     {"/spec/list/0", "b", true, map[string]any{"spec": map[string]any{"replicas": int64(2), "list": []any{"b"}}}},
		"no such element":  {"/spec/list/3", "b", true, map[string]any{"spec": map[string]any{"replicas": int64(2), "list": []any{"a"}}}},
		"absent, not live": {"/status/x", nil, false, map[string]any{"spec": map[string]any{"replicas": int64(2), "list": []any{"a"}}}},
	} {
		obj := map[string]any{"spec": map[string]any{"replicas": int64(2), "list": []any{"a"}}}
		setPointer(obj, tc.ptr, tc.v, tc.found)
		if !reflect.DeepEqual(obj, tc.want) {
			t.Errorf("%s: got %v, want %v", name, obj, tc.want)
		}
	}
}
