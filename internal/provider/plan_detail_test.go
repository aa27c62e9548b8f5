package provider

import (
	"maps"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestPlannedChanges(t *testing.T) {
	const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {tier: web, "example.com/part": a}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: web
        env:
        - {name: A, value: "1"}
`
	const scaled = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {tier: web, "example.com/part": b}
spec:
  replicas: 3
  template:
    spec:
      containers:
      - name: web
        env: []
`
	before := map[string]string{"apps/v1/Deployment/apps/web": deployment, "v1/ConfigMap/apps/old": "data: {a: b}\n"}
	after := types.MapValueMust(types.StringType, map[string]attr.Value{
		"apps/v1/Deployment/apps/web": types.StringValue(scaled),
		"v1/ConfigMap/apps/new":       types.StringValue("data: {a: b}\n"),
		"v1/Secret/apps/token":        types.StringUnknown(),
	})
	got := map[string]string{}
	for k, v := range plannedChanges(before, after).Elements() {
		got[k] = v.(types.String).ValueString()
	}
	want := map[string]string{
		"apps/v1/Deployment/apps/web /metadata/labels/example.com~1part":           `"a" → "b"`,
		"apps/v1/Deployment/apps/web /spec/replicas":                               `2 → 3`,
		"apps/v1/Deployment/apps/web /spec/template/spec/containers/0/env/0/name":  `"A" → (none)`,
		"apps/v1/Deployment/apps/web /spec/template/spec/containers/0/env/0/value": `"1" → (none)`,
		"apps/v1/Deployment/apps/web /spec/template/spec/containers/0/env":         `(none) → []`,
		"v1/ConfigMap/apps/new": "created",
		"v1/ConfigMap/apps/old": "deleted",
		"v1/Secret/apps/token":  "known after apply",
	}
	if !maps.Equal(got, want) {
		t.Errorf("planned changes:\n got %v\nwant %v", got, want)
	}
	if c := plannedChanges(before, types.MapUnknown(types.StringType)); !c.IsUnknown() {
		t.Errorf("changes of unknown resources: %v, want unknown", c)
	}
	same := types.MapValueMust(types.StringType, map[string]attr.Value{"apps/v1/Deployment/apps/web": types.StringValue(deployment), "v1/ConfigMap/apps/old": types.StringValue("data: {a: b}\n")})
	if c := plannedChanges(before, same); len(c.Elements()) != 0 {
		t.Errorf("changes of unchanged objects: %v, want none", c)
	}
}

func TestObjectDigests(t *testing.T) {
	in := types.MapValueMust(types.StringType, map[string]attr.Value{
		"v1/ConfigMap/apps/a": types.StringValue("data: {a: b}\n"),
		"v1/Secret/apps/s":    types.StringUnknown(),
	})
	once := objectDigests(in)
	twice := objectDigests(once)
	if !once.Equal(twice) {
		t.Errorf("digests of digests: %v, then %v", once, twice)
	}
	if v := once.Elements()["v1/ConfigMap/apps/a"].(types.String).ValueString(); len(v) != len("sha256:")+64 || v[:7] != "sha256:" {
		t.Errorf("digest %q", v)
	}
	if !once.Elements()["v1/Secret/apps/s"].IsUnknown() {
		t.Error("an unknown object is not unknown after digests")
	}
	if !showsDigests(once) || showsDigests(in) {
		t.Error("showsDigests does not tell digests from YAML")
	}
}
