package postrender

import (
	"bytes"
	"context"
	"testing"
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
