package provider

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
	"helm.sh/helm/v4/pkg/cli/values"
	"helm.sh/helm/v4/pkg/getter"
)

// TestMergeValuesFunction: provider::helmrelease::merge_values, called by
// the real terraform on files, gives what Helm's own merge of the same
// files gives (helm install -f a.yaml -f b.yaml …).
func TestMergeValuesFunction(t *testing.T) {
	t.Parallel() // no cluster, no environment of its own
	dir := t.TempDir()
	// The cases are outputs of one configuration: one apply for them all.
	var config string
	var checks []statecheck.StateCheck
	for i, docs := range [][]string{
		// Maps merge at every depth.
		{"image: {repository: app, tag: '1.0', pull: {policy: Always, secrets: [a]}}\n", "image: {tag: '2.0', pull: {policy: IfNotPresent}}\n"},
		// Lists are replaced whole, never appended.
		{"args: [a, b, c]\nports: [{name: http, port: 80}]\n", "args: [d]\nports: []\n"},
		// null is kept: at render it deletes the chart's default.
		{"resources: {limits: {cpu: 1}}\nnodeSelector: {disk: ssd}\n", "resources: {limits: null}\nnodeSelector: null\n"},
		// A map over a scalar and a scalar over a map.
		{"a: text\nb: {c: 1}\n", "a: {x: 1}\nb: plain\n"},
		// Empty documents add nothing; JSON is YAML; three documents in order.
		{"", "{\"replicas\": 2, \"flags\": {\"x\": true}}", "flags: {y: false}\nreplicas: 3\n", "# only a comment\n"},
		// Numbers, booleans and strings that look like them.
		{"n: 1\nf: 2.5\nbig: 1e3\nq: '3'\nyes: true\n", "n: 0\nf: -0.5\n"},
	} {
		var files, args []string
		for j, d := range docs {
			name := filepath.Join(dir, fmt.Sprintf("case%d-%d.yaml", i, j))
			if err := os.WriteFile(name, []byte(d), 0o600); err != nil {
				t.Fatal(err)
			}
			files = append(files, name)
			args = append(args, fmt.Sprintf("file(%q)", name))
		}
		helmMerged, err := (&values.Options{ValueFiles: files}).MergeValues(getter.Providers{})
		if err != nil {
			t.Fatalf("case %d: Helm's merge: %v", i, err)
		}
		want, err := json.Marshal(helmMerged)
		if err != nil {
			t.Fatal(err)
		}
		output := fmt.Sprintf("merged_%d", i)
		config += fmt.Sprintf("output %q {\n  value = jsonencode(provider::helmrelease::merge_values(%s))\n}\n", output, strings.Join(args, ", "))
		checks = append(checks, statecheck.ExpectKnownOutputValue(output, knownvalue.StringExact(string(want))))
	}
	// Objects and documents mix; null arguments add nothing.
	config += `output "merged_objects" {
  value = jsonencode(provider::helmrelease::merge_values({ a = { b = 1, c = [1, 2] } }, null, "a: {c: [3]}", { a = { d = "x" } }))
}
`
	checks = append(checks, statecheck.ExpectKnownOutputValue("merged_objects", knownvalue.StringExact(`{"a":{"b":1,"c":[3],"d":"x"}}`)))
	steps := []resource.TestStep{
		{Config: config, ConfigStateChecks: checks},
		{
			Config:      `output "merged" { value = provider::helmrelease::merge_values("a: 1", "- secret-item") }`,
			ExpectError: errorText(`document 2 of merge_values is not usable: a mapping is needed, not []interface {}`),
		},
		{
			Config:      `output "merged" { value = provider::helmrelease::merge_values("a: [unclosed, s3cret") }`,
			ExpectError: errorText(`document 1 of merge_values is not usable: not valid YAML or JSON`),
		},
		{
			Config:      `output "merged" { value = provider::helmrelease::merge_values(["a"]) }`,
			ExpectError: errorText(`values must be an object`),
		},
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_8_0)},
		Steps:                    steps,
	})
}
