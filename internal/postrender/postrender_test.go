package postrender

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const manifestDoc = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    ` + OriginNameLabel + `: wrong
spec:
  replicas: 1
  template:
    spec:
      containers:
      - name: app
        image: example.com/app:1.0
`

func TestChainOrderAndOriginLabelsLast(t *testing.T) {
	chain := Build(context.Background(), []Renderer{
		{Kustomize: Kustomize{Patches: []Patch{{Patch: `[{"op": "replace", "path": "/spec/replicas", "value": 2}]`, Target: &Selector{Kind: "Deployment"}}}}},
		{Kustomize: Kustomize{Patches: []Patch{{Patch: `[{"op": "replace", "path": "/spec/replicas", "value": 3}]`, Target: &Selector{Kind: "Deploy.*"}}}}},
		{Kustomize: Kustomize{Images: []Image{{Name: "example.com/app", NewTag: "2.0"}}}},
	}, Metadata{Labels: map[string]string{"team": "a"}}, Origin{Name: "release", Namespace: "ns"})
	out, err := chain.Run(bytes.NewBufferString(manifestDoc))
	if err != nil {
		t.Fatal(err)
	}
	var obj struct {
		Metadata struct{ Labels map[string]string }
		Spec     struct {
			Replicas int
			Template struct {
				Spec struct{ Containers []struct{ Image string } }
			}
		}
	}
	if err := yaml.Unmarshal(out.Bytes(), &obj); err != nil {
		t.Fatal(err)
	}
	if obj.Spec.Replicas != 3 || obj.Spec.Template.Spec.Containers[0].Image != "example.com/app:2.0" {
		t.Errorf("post-renderers not applied in order:\n%s", out)
	}
	want := map[string]string{"team": "a", OriginNameLabel: "release", OriginNamespaceLabel: "ns"}
	if !reflect.DeepEqual(obj.Metadata.Labels, want) {
		t.Errorf("labels %v, want %v", obj.Metadata.Labels, want)
	}
	again, err := chain.Run(bytes.NewBufferString(manifestDoc))
	if err != nil || again.String() != out.String() {
		t.Errorf("a second run rendered differently:\n%s\n%s", out, again)
	}
}

func TestEmptyManifest(t *testing.T) {
	out, err := (&Kustomize{Images: []Image{{Name: "x", NewTag: "y"}}}).Run(bytes.NewBufferString("\n"))
	if err != nil || strings.TrimSpace(out.String()) != "" {
		t.Errorf("Run(empty) = %q, %v", out, err)
	}
}

func TestValidatePatch(t *testing.T) {
	for _, tc := range []struct {
		name      string
		patch     string
		hasTarget bool
		wantErr   string
	}{
		{"strategic merge", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: b}", false, ""},
		{"strategic merge with target", "data: {a: b}", true, ""},
		{"json6902 yaml", "- op: add\n  path: /a\n  value: 1", false, ""},
		{"json6902 json", `[{"op": "remove", "path": "/a"}]`, true, ""},
		{"empty", "  ", false, "the patch is empty"},
		{"not yaml", "a: [b", false, "not valid YAML or JSON"},
		{"scalar", "just text", false, "a patch must be an object"},
		{"unnamed", "data: {a: b}", false, "must name its object"},
		{"bad op", `[{"op": "jump", "path": "/a"}]`, false, `"jump" is not a JSON 6902 operation`},
		{"missing path", `[{"op": "add", "value": 1}]`, false, "operation 0"},
	} {
		err := ValidatePatch(tc.patch, tc.hasTarget)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tc.name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.wantErr)
		}
	}
}
