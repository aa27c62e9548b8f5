package values

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestComposeWithoutReferences(t *testing.T) {
	got, err := Compose(context.Background(), nil, Input{
		Values:          map[string]any{"a": map[string]any{"b": 1, "c": 2}, "list": []any{1}},
		SensitiveValues: map[string]any{"a": map[string]any{"c": "secret"}, "list": []any{2, 3}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": map[string]any{"b": 1, "c": "secret"}, "list": []any{2, 3}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Compose = %v, want %v", got, want)
	}
}

func TestComposeReferencesNeedACluster(t *testing.T) {
	_, err := Compose(context.Background(), nil, Input{References: []Reference{{Kind: KindConfigMap, Name: "x"}}})
	var refErr *ReferenceError
	if !errors.As(err, &refErr) || refErr.Index != 0 || refErr.Reason != ReasonRead {
		t.Fatalf("Compose error = %v, want a read error of reference 0", err)
	}
}

func TestSetPath(t *testing.T) {
	for _, tc := range []struct {
		path, value string
		want        string
	}{
		// As with helm --set, only integers, booleans and null are typed.
		{"image.tag", "1.2", "image:\n  tag: \"1.2\"\n"},
		{"enabled", "true", "enabled: true\n"},
		{"image.tag", `"1.2"`, "image:\n  tag: \"1.2\"\n"},
		{"count", "5", "count: 5\n"},
		{"count", "'5'", "count: \"5\"\n"},
		{"hosts[1]", "b", "hosts:\n- null\n- b\n"},
		{"list", "{a,b}", "list:\n- a\n- b\n"},
		{`annotations.example\.com/key`, "v", "annotations:\n  example.com/key: v\n"},
	} {
		values := map[string]any{}
		if err := SetPath(values, tc.path, tc.value); err != nil {
			t.Errorf("SetPath(%q, %q): %v", tc.path, tc.value, err)
			continue
		}
		got, _ := yaml.Marshal(values)
		if string(got) != tc.want {
			t.Errorf("SetPath(%q, %q) = %q, want %q", tc.path, tc.value, got, tc.want)
		}
	}
}

// TestSetLiteral: valuesFrom[].literal sets the data as it is, whatever
// --set would read in it, at a path that keeps --set's syntax.
func TestSetLiteral(t *testing.T) {
	for _, tc := range []struct {
		path, value string
		want        any
	}{
		{"config", "a,b=c", "a,b=c"},
		{"config", "{a,b}", "{a,b}"},
		{"config", "[1]", "[1]"},
		{"config", `C:\dir\`, `C:\dir\`},
		{"config", `"quoted"`, `"quoted"`},
		{"config", "5", "5"},
		{"config", "true", "true"},
		{"config", "null", "null"},
		{"config", "", ""},
		{"config", "line one,\nline [two]\n", "line one,\nline [two]\n"},
		{"config", `{"json": [1, 2], "k": "v=w"}`, `{"json": [1, 2], "k": "v=w"}`},
		{`annotations.example\.com/key`, "x,y", map[string]any{"example.com/key": "x,y"}},
		{"hosts[1]", "a,b", []any{nil, "a,b"}},
	} {
		values := map[string]any{}
		if err := SetLiteral(values, tc.path, tc.value); err != nil {
			t.Errorf("SetLiteral(%q, %q): %v", tc.path, tc.value, err)
			continue
		}
		got := values["config"]
		switch {
		case strings.HasPrefix(tc.path, "annotations"):
			got = values["annotations"]
		case strings.HasPrefix(tc.path, "hosts"):
			got = values["hosts"]
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("SetLiteral(%q, %q) = %#v, want %#v", tc.path, tc.value, got, tc.want)
		}
	}
}

func TestValidateTargetPath(t *testing.T) {
	for _, ok := range []string{"a", "a.b", "a[0].b", `a\.b`} {
		if err := ValidateTargetPath(ok); err != nil {
			t.Errorf("ValidateTargetPath(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"a[b", "a=b", "a[-1]", "a[x]"} {
		if err := ValidateTargetPath(bad); err == nil {
			t.Errorf("ValidateTargetPath(%q) = nil, want an error", bad)
		}
	}
}

func TestMergeDoesNotModifyItsInputs(t *testing.T) {
	a := map[string]any{"m": map[string]any{"x": 1}}
	b := map[string]any{"m": map[string]any{"y": 2}}
	got := Merge(a, b)
	if !reflect.DeepEqual(got, map[string]any{"m": map[string]any{"x": 1, "y": 2}}) {
		t.Errorf("Merge = %v", got)
	}
	if !reflect.DeepEqual(a, map[string]any{"m": map[string]any{"x": 1}}) {
		t.Errorf("Merge modified its first argument: %v", a)
	}
}

func TestYAMLErrorsHideContent(t *testing.T) {
	var v map[string]any
	// A tag the value does not fit: YAML's error quotes the value.
	err := yaml.Unmarshal([]byte("password: !!int hunter2"), &v)
	if err == nil || !strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("want an error quoting the content, got %v", err)
	}
	msg := scrubYAMLError(err)
	if strings.Contains(msg, "hunter2") {
		t.Errorf("scrubbed error still shows the content: %s", msg)
	}
	if !strings.Contains(msg, "cannot decode") {
		t.Errorf("scrubbed error lost its meaning: %s", msg)
	}
}
