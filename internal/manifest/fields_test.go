package manifest

import "testing"

// TestWithFields: fields set, added and removed through maps and list
// elements, each only while it still has its former value.
func TestWithFields(t *testing.T) {
	const obj = "metadata:\n  name: app\nspec:\n  containers:\n  - image: app:1\n    name: app\n"
	for _, tc := range []struct {
		name     string
		from, to map[string]string
		want     string // "": unchanged
	}{
		{"a list element's field", map[string]string{"/spec/containers/0/image": `"app:1"`}, map[string]string{"/spec/containers/0/image": `"app:1-controller"`},
			"metadata:\n  name: app\nspec:\n  containers:\n  - image: app:1-controller\n    name: app\n"},
		{"a field added", map[string]string{"/metadata/annotations": Absent}, map[string]string{"/metadata/annotations": "null"},
			"metadata:\n  annotations: null\n  name: app\nspec:\n  containers:\n  - image: app:1\n    name: app\n"},
		{"a field dropped", map[string]string{"/metadata/name": `"app"`}, map[string]string{"/metadata/name": Absent},
			"metadata: {}\nspec:\n  containers:\n  - image: app:1\n    name: app\n"},
		{"a field of another value now", map[string]string{"/spec/containers/0/image": `"app:0"`}, map[string]string{"/spec/containers/0/image": `"app:0-controller"`}, ""},
		{"a list element the object lacks", map[string]string{"/spec/containers/1/image": `"side:1"`}, map[string]string{"/spec/containers/1/image": `"side:2"`}, ""},
		{"the whole object", map[string]string{"": "the object"}, map[string]string{"": Absent}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := WithFields(obj, tc.from, tc.to)
			if tc.want == "" {
				if ok {
					t.Errorf("changed to %q, want it left as it was", got)
				}
				return
			}
			if !ok || got != tc.want {
				t.Errorf("got %q (%t), want %q", got, ok, tc.want)
			}
		})
	}
}
