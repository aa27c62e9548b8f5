package postrender

import (
	"bytes"
	"context"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
)

const fuzzManifest = `apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
  namespace: apps
data:
  message: hello
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: apps
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers: [{name: web, image: example.com/web:1.0}]
`

// FuzzPostRenderer: whatever the patches and image overrides, validating
// and running a post-renderer over a manifest neither panics nor hangs;
// what validation accepts either renders or fails with an error.
func FuzzPostRenderer(f *testing.F) {
	for _, seed := range []struct {
		patch                                 string
		targeted                              bool
		image, newName, newTag, digest, merge string
	}{
		{`[{"op": "replace", "path": "/spec/replicas", "value": 3}]`, true, "example.com/web", "", "2.0", "", ""},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-config}\ndata: {message: patched}", false, "web", "mirror/web", "", "sha256:0000000000000000000000000000000000000000000000000000000000000000", ""},
		{"$patch: delete\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-config}", false, "", "", "", "", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 2}"},
		{`[{"op": "add", "path": "/metadata/labels/a~1b", "value": "x"}]`, true, "*", "", "", "", ""},
		{`[{"op": "move", "from": "/spec", "path": "/spec/x"}]`, true, "", "", "", "", ""},
		{"{", true, "", "", "", "", "{"},
	} {
		f.Add(seed.patch, seed.targeted, seed.image, seed.newName, seed.newTag, seed.digest, seed.merge)
	}
	f.Fuzz(func(t *testing.T, patch string, targeted bool, image, newName, newTag, digest, merge string) {
		var target *Selector
		if targeted {
			target = &Selector{Kind: "Deployment|ConfigMap"}
		}
		_ = ValidatePatch(patch, targeted)
		_ = ValidateJSON6902(patch)
		_ = ValidatePatch(merge, false)
		k := Kustomize{Patches: []Patch{{Patch: patch, Target: target}}}
		if merge != "" {
			k.PatchesStrategicMerge = []string{merge}
		}
		if image != "" {
			k.Images = []Image{{Name: image, NewName: newName, NewTag: newTag, Digest: digest}}
		}
		out, err := Build(context.Background(), []Renderer{{Kustomize: k}}, Metadata{}, Origin{Name: "web", Namespace: "apps"}).Run(bytes.NewBufferString(fuzzManifest))
		if err == nil && out == nil {
			t.Fatal("no manifest and no error")
		}
	})
}

// FuzzMetadataLines: for any manifest and any label or annotation, the
// inserted lines are stored as kyaml's setters would be, or Run fails where
// they fail.
func FuzzMetadataLines(f *testing.F) {
	f.Add(fuzzManifest, "team", "a", "owner", "it's")
	f.Add("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n    x: 'y'\n  labels:\n    app: a\n  name: a\n", "app", "b", "x", "")
	f.Add("a: 1\nmetadata:\n  name: a\n  labels:\n    \"k\": v\n", "k", "true", "n", "1.0")
	f.Fuzz(func(t *testing.T, manifest, labelKey, labelValue, annotationKey, annotationValue string) {
		m := Metadata{Labels: map[string]string{labelKey: labelValue}, Annotations: map[string]string{annotationKey: annotationValue}}
		want, werr := parsedOnly(m).Run(bytes.NewBufferString(manifest))
		got, gerr := m.Run(bytes.NewBufferString(manifest))
		if werr != nil {
			return // kyaml cannot read it: the fallback says so
		}
		if gerr != nil {
			t.Fatalf("error %v where kyaml's setters give\n%s", gerr, want)
		}
		wantNodes, err := kio.ParseAll(want.String())
		if err != nil {
			return // Helm would refuse both
		}
		gotNodes, err := kio.ParseAll(got.String())
		if err != nil {
			t.Fatalf("Helm would not read\n%s\nwhere it reads kyaml's\n%s", got, want)
		}
		g, _ := kio.StringAll(gotNodes)
		w, _ := kio.StringAll(wantNodes)
		if g != w {
			t.Fatalf("Helm stores\n%s\nwhere kyaml's setters give\n%s", g, w)
		}
	})
}
