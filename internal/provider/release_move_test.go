package provider

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/tfvalue"
)

// helmReleaseFixture is the instance of helm_release in a state file the
// helm provider wrote: its attributes (JSON) and schema version.
func helmReleaseFixture(t *testing.T, version string) ([]byte, int64) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "helm_release", version, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var state struct {
		Resources []struct {
			Type      string `json:"type"`
			Instances []struct {
				SchemaVersion int64           `json:"schema_version"`
				Attributes    json.RawMessage `json:"attributes"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(b, &state); err != nil {
		t.Fatal(err)
	}
	inst := state.Resources[0].Instances[0]
	return inst.Attributes, inst.SchemaVersion
}

// moveFixture runs MoveState on a helm_release fixture.
func moveFixture(t *testing.T, attributes []byte, schemaVersion int64) (*releaseModel, *resource.MoveStateResponse) {
	t.Helper()
	ctx := context.Background()
	s := releaseSchema()
	resp := &resource.MoveStateResponse{TargetState: tfsdk.State{Schema: s, Raw: tftypes.NewValue(s.Type().TerraformType(ctx), nil)}}
	req := resource.MoveStateRequest{
		SourceProviderAddress: "registry.terraform.io/hashicorp/helm",
		SourceTypeName:        "helm_release",
		SourceSchemaVersion:   schemaVersion,
		SourceRawState:        &tfprotov6.RawState{JSON: attributes},
	}
	moveHelmRelease(ctx, req, resp)
	if resp.Diagnostics.HasError() {
		t.Fatalf("MoveState: %v", resp.Diagnostics)
	}
	var m releaseModel
	if d := resp.TargetState.Get(ctx, &m); d.HasError() {
		t.Fatalf("moved state: %v", d)
	}
	return &m, resp
}

// TestMoveState: the states the helm provider v3.1.2 (schema 2) and
// v2.17.0 (schema 1) wrote move into the same helmrelease_release: the
// release's identity, chart, values composed as Helm composed them (the
// set_sensitive value in sensitive_values only), and the options that
// have a counterpart; the status is left for the refresh to adopt.
func TestMoveState(t *testing.T) {
	for version, namespace := range map[string]string{"v3.1.2": "fixture-v3", "v2.17.0": "fixture-v2"} {
		t.Run(version, func(t *testing.T) {
			ctx := context.Background()
			attributes, schemaVersion := helmReleaseFixture(t, version)
			m, _ := moveFixture(t, attributes, schemaVersion)
			for name, got := range map[string]string{
				"id": m.ID.ValueString(), "name": m.Name.ValueString(), "namespace": m.Namespace.ValueString(),
				"release_name": m.ReleaseName.ValueString(), "storage_namespace": m.StorageNamespace.ValueString(),
				"timeout": m.Timeout.ValueString(), "sensitive_values": m.SensitiveValues.ValueString(),
			} {
				want := map[string]string{
					"id": namespace + "/app", "name": "app", "namespace": namespace, "release_name": "app", "storage_namespace": namespace,
					"timeout": "2m0s", "sensitive_values": `{"password":"fixture-secret"}`,
				}[name]
				if got != want {
					t.Errorf("%s = %q, want %q", name, got, want)
				}
			}
			if m.MaxHistory.ValueInt64() != 3 {
				t.Errorf("max_history = %v", m.MaxHistory)
			}
			values, err := tfvalue.ValuesMap(m.Values)
			if err != nil {
				t.Fatal(err)
			}
			// values documents, then set over them, then set_list.
			wantValues := map[string]any{"replicaCount": float64(2), "message": "from set", "extra": map[string]any{"items": []any{"a", "b"}}}
			if !reflect.DeepEqual(normalise(t, values), wantValues) {
				t.Errorf("values = %#v, want %#v", values, wantValues)
			}
			var chart releaseChartModel
			if d := m.Chart.As(ctx, &chart, objectAsOptions); d.HasError() {
				t.Fatal(d)
			}
			if chart.Name.ValueString() != "./chart" || !chart.Repository.IsNull() || !chart.Version.IsNull() || chart.ReconcileStrategy.ValueString() != "ChartVersion" {
				t.Errorf("chart = %+v: a local chart, its version its own, upgraded on a new version only as the helm provider did", chart)
			}
			var install installModel
			if d := m.Install.As(ctx, &install, objectAsOptions); d.HasError() {
				t.Fatal(d)
			}
			if !install.CreateNamespace.ValueBool() || install.Remediation == nil || !install.Remediation.RemediateLastFailure.ValueBool() {
				t.Errorf("install = %+v: create_namespace and atomic's uninstall of a failed install", install)
			}
			var upgrade upgradeModel
			if d := m.Upgrade.As(ctx, &upgrade, objectAsOptions); d.HasError() {
				t.Fatal(d)
			}
			if upgrade.Remediation == nil || !upgrade.Remediation.RemediateLastFailure.ValueBool() || !upgrade.Remediation.Strategy.IsNull() {
				t.Errorf("upgrade = %+v: atomic's rollback of a failed upgrade", upgrade)
			}
			if !m.Status.IsNull() || !m.Rollback.IsNull() || !m.DriftDetection.IsNull() {
				t.Errorf("status %v, rollback %v, drift_detection %v: want them null", m.Status, m.Rollback, m.DriftDetection)
			}
		})
	}
}

// TestMoveStateOtherShapes: repository charts, full OCI references,
// options the fixtures leave at their defaults, and what cannot move.
func TestMoveStateOtherShapes(t *testing.T) {
	ctx := context.Background()
	m, resp := moveFixture(t, []byte(`{
  "name": "web", "namespace": "apps", "chart": "oci://registry.example/charts/web", "version": "1.2.3",
  "repository_username": "bot", "repository_password": "token-s3cret",
  "wait": false, "timeout": 300, "max_history": 0, "skip_crds": true, "force_update": true, "reuse_values": true,
  "set": [{"name": "image.tag", "value": "1.0", "type": "string"}, {"name": "replicas", "value": "3", "type": "auto"}],
  "set_sensitive": [{"name": "db.password", "value": "db-s3cret"}],
  "postrender": {"binary_path": "./bin/label", "args": ["--team", "a b"]}
}`), 2)
	var chart releaseChartModel
	if d := m.Chart.As(ctx, &chart, objectAsOptions); d.HasError() {
		t.Fatal(d)
	}
	if chart.Repository.ValueString() != "oci://registry.example/charts" || chart.Name.ValueString() != "web" || chart.Version.ValueString() != "1.2.3" ||
		chart.Username.ValueString() != "bot" || chart.Password.ValueString() != "token-s3cret" {
		t.Errorf("chart = %+v", chart)
	}
	if !m.Timeout.IsNull() || !m.MaxHistory.IsNull() {
		t.Errorf("the helm provider's defaults moved as settings: timeout %v, max_history %v", m.Timeout, m.MaxHistory)
	}
	values, err := tfvalue.ValuesMap(m.Values)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"image": map[string]any{"tag": "1.0"}, "replicas": float64(3)}; !reflect.DeepEqual(normalise(t, values), want) {
		t.Errorf("values = %#v, want %#v (type string keeps 1.0 a string)", values, want)
	}
	if m.SensitiveValues.ValueString() != `{"db":{"password":"db-s3cret"}}` {
		t.Errorf("sensitive_values = %q", m.SensitiveValues.ValueString())
	}
	var install installModel
	if d := m.Install.As(ctx, &install, objectAsOptions); d.HasError() {
		t.Fatal(d)
	}
	if !install.DisableWait.ValueBool() || install.CRDs.ValueString() != "Skip" {
		t.Errorf("install = %+v", install)
	}
	var upgrade upgradeModel
	if d := m.Upgrade.As(ctx, &upgrade, objectAsOptions); d.HasError() {
		t.Fatal(d)
	}
	if !upgrade.DisableWait.ValueBool() || !upgrade.Force.ValueBool() || !upgrade.PreserveValues.ValueBool() {
		t.Errorf("upgrade = %+v", upgrade)
	}
	if len(resp.Diagnostics) != 0 {
		t.Errorf("diagnostics %v, want none", resp.Diagnostics)
	}
	// postrender: its binary and arguments, as an exec post-renderer.
	var renderers []postRendererModel
	if d := m.PostRenderers.ElementsAs(ctx, &renderers, false); d.HasError() {
		t.Fatal(d)
	}
	if len(renderers) != 1 || renderers[0].Exec == nil || renderers[0].Kustomize != nil {
		t.Fatalf("post_renderers = %+v, want one exec", renderers)
	}
	if x := renderers[0].Exec.exec(); x.Command != "./bin/label" || !reflect.DeepEqual(x.Args, []string{"--team", "a b"}) || x.Env != nil {
		t.Errorf("exec = %+v, want ./bin/label --team 'a b'", x)
	}
	// The helm provider's state v1 (SDKv2) holds it as a list of one.
	var legacy any
	if err := json.Unmarshal([]byte(`[{"binary_path": "yq", "args": []}]`), &legacy); err != nil {
		t.Fatal(err)
	}
	var diags diag.Diagnostics
	l := movedPostrender(legacy, m.PostRenderers.Type(ctx).(types.ListType), &diags)
	renderers = nil
	if d := l.ElementsAs(ctx, &renderers, false); d.HasError() || diags.HasError() || len(renderers) != 1 || renderers[0].Exec.Command.ValueString() != "yq" || !renderers[0].Exec.Args.IsNull() {
		t.Errorf("a state v1 postrender moves as %v (%v)", l, diags)
	}
}

// TestMoveStateLiteralValues: set entries of type literal compose as the
// helm provider composes them: the YAML value of a top-level key named by
// the whole name.
func TestMoveStateLiteralValues(t *testing.T) {
	m, _ := moveFixture(t, []byte(`{
  "name": "web", "namespace": "apps", "chart": "web",
  "set": [
    {"name": "a.b", "value": "1,2", "type": "literal"},
    {"name": "list", "value": "[1, two]", "type": "literal"},
    {"name": "object", "value": "{x: {k: true}}", "type": "literal"},
    {"name": "number", "value": "3", "type": "literal"},
    {"name": "auto.list", "value": "{1,2}", "type": "auto"}
  ],
  "set_sensitive": [{"name": "token.value", "value": "a,b", "type": "literal"}]
}`), 2)
	values, err := tfvalue.ValuesMap(m.Values)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"a.b": "1,2", "list": []any{float64(1), "two"}, "object": map[string]any{"x": map[string]any{"k": true}}, "number": float64(3),
		"auto": map[string]any{"list": []any{float64(1), float64(2)}},
	}
	if got := normalise(t, values); !reflect.DeepEqual(got, want) {
		t.Errorf("values = %#v, want %#v", got, want)
	}
	if m.SensitiveValues.ValueString() != `{"token.value":"a,b"}` {
		t.Errorf("sensitive_values = %q", m.SensitiveValues.ValueString())
	}
}

// TestMoveStateRefusals: other resource types are not taken, and a
// set_sensitive entry that does not parse fails without showing its value;
// a set type or a schema version the helm provider never wrote is refused
// with what to do.
func TestMoveStateRefusals(t *testing.T) {
	ctx := context.Background()
	s := releaseSchema()
	resp := &resource.MoveStateResponse{TargetState: tfsdk.State{Schema: s, Raw: tftypes.NewValue(s.Type().TerraformType(ctx), nil)}}
	moveHelmRelease(ctx, resource.MoveStateRequest{SourceProviderAddress: "registry.terraform.io/hashicorp/kubernetes", SourceTypeName: "kubernetes_manifest",
		SourceRawState: &tfprotov6.RawState{JSON: []byte(`{}`)}}, resp)
	if resp.Diagnostics.HasError() || !resp.TargetState.Raw.IsNull() {
		t.Errorf("another type was taken: %v", resp.Diagnostics)
	}
	resp = &resource.MoveStateResponse{TargetState: tfsdk.State{Schema: s, Raw: tftypes.NewValue(s.Type().TerraformType(ctx), nil)}}
	moveHelmRelease(ctx, resource.MoveStateRequest{SourceProviderAddress: "registry.terraform.io/hashicorp/helm", SourceTypeName: "helm_release",
		SourceRawState: &tfprotov6.RawState{JSON: []byte(`{"name": "web", "chart": "web", "set_sensitive": [{"name": "a[", "value": "leak-s3cret"}]}`)}}, resp)
	if !resp.Diagnostics.HasError() {
		t.Fatal("a set_sensitive entry that does not parse was moved")
	}
	for _, d := range resp.Diagnostics {
		if strings.Contains(d.Detail(), "leak-s3cret") {
			t.Errorf("the error shows the sensitive value: %s", d.Detail())
		}
	}
	for _, tc := range []struct {
		name    string
		version int64
		state   string
		want    string
	}{
		{"unknown set type", 2, `{"name": "web", "chart": "web", "set": [{"name": "a", "value": "1", "type": "json"}]}`, `type "json" is none of auto, string and literal`},
		{"literal that is no YAML", 2, `{"name": "web", "chart": "web", "set": [{"name": "a", "value": "[1", "type": "literal"}]}`, `set "a"`},
		{"schema version 0", 0, `{"name": "web", "chart": "web"}`, "schema version 0"},
		{"schema version 3", 3, `{"name": "web", "chart": "web"}`, "schema version 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := &resource.MoveStateResponse{TargetState: tfsdk.State{Schema: s, Raw: tftypes.NewValue(s.Type().TerraformType(ctx), nil)}}
			moveHelmRelease(ctx, resource.MoveStateRequest{SourceProviderAddress: "registry.terraform.io/hashicorp/helm", SourceTypeName: "helm_release",
				SourceSchemaVersion: tc.version, SourceRawState: &tfprotov6.RawState{JSON: []byte(tc.state)}}, resp)
			if !resp.Diagnostics.HasError() || !resp.TargetState.Raw.IsNull() {
				t.Fatalf("moved: %v", resp.Diagnostics)
			}
			if d := resp.Diagnostics.Errors()[0]; !strings.Contains(d.Detail(), tc.want) {
				t.Errorf("error %q does not say %q", d.Detail(), tc.want)
			}
		})
	}
}

// normalise round-trips v through JSON, so that numbers compare as float64.
func normalise(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMoveStateDependencyUpdate: a local chart's dependency_update moves
// as chart.dependency_update; a packaged chart's has no counterpart.
func TestMoveStateDependencyUpdate(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		chart string
		want  bool
	}{{"./charts/app", true}, {"./app-1.0.0.tgz", false}} {
		m, _ := moveFixture(t, []byte(`{"name": "app", "namespace": "apps", "chart": "`+tc.chart+`", "dependency_update": true}`), 2)
		var chart releaseChartModel
		if d := m.Chart.As(ctx, &chart, objectAsOptions); d.HasError() {
			t.Fatal(d)
		}
		if got := chart.DependencyUpdate.ValueBool(); got != tc.want {
			t.Errorf("chart %s: dependency_update = %v, want %v", tc.chart, got, tc.want)
		}
	}
}
