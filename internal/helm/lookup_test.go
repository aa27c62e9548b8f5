package helm

import (
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
)

// TestLookupRead: what every write changes (resourceVersion,
// managedFields) reads the same; data, and found or not, do not.
func TestLookupRead(t *testing.T) {
	object := func(rv, color string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "a", "resourceVersion": rv, "managedFields": []any{map[string]any{"manager": rv}}},
			"data":     map[string]any{"color": color}}
	}
	list := func(rv, color string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMapList", "metadata": map[string]any{"resourceVersion": rv}, "items": []any{object(rv, color)}}
	}
	read := func(m map[string]any) LookupRead {
		t.Helper()
		r, err := lookupRead(m)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, tc := range []struct {
		name string
		a, b map[string]any
		same bool
	}{
		{"written again, same data", object("1", "red"), object("2", "red"), true},
		{"other data", object("1", "red"), object("1", "blue"), false},
		{"a list written again, same items", list("1", "red"), list("2", "red"), true},
		{"a list with other items", list("1", "red"), list("1", "blue"), false},
		{"found, then not", object("1", "red"), map[string]any{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if same := read(tc.a) == read(tc.b); same != tc.same {
				t.Errorf("same read = %v, want %v", same, tc.same)
			}
		})
	}
	if read(map[string]any{}).Found || !read(object("1", "red")).Found {
		t.Error("Found does not tell an empty result from an object")
	}
}

// TestUsesLookup: a template of the chart or of a subchart, or a values
// string, that names lookup.
func TestUsesLookup(t *testing.T) {
	withTemplate := func(text string) *chart.Chart {
		return &chart.Chart{Metadata: &chart.Metadata{Name: "c"}, Templates: []*common.File{{Name: "templates/a.yaml", Data: []byte(text)}}}
	}
	parent := withTemplate("kind: ConfigMap")
	parent.AddDependency(withTemplate(`{{ lookup "v1" "Secret" "ns" "s" }}`))
	for _, tc := range []struct {
		name   string
		chart  *Chart
		values map[string]any
		want   bool
	}{
		{"a template", withTemplate(`{{ $s := lookup "v1" "Secret" .Release.Namespace "s" }}`), nil, true},
		{"a subchart's template", parent, nil, true},
		{"a values string for tpl", withTemplate("{{ tpl .Values.t . }}"), map[string]any{"a": []any{map[string]any{"t": `{{ lookup "v1" "Namespace" "" "" }}`}}}, true},
		{"neither", withTemplate("lookups: 0\nname: {{ .Values.lookupName }}"), map[string]any{"lookupName": "x"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := UsesLookup(tc.chart, tc.values); got != tc.want {
				t.Errorf("UsesLookup = %v, want %v", got, tc.want)
			}
		})
	}
}
