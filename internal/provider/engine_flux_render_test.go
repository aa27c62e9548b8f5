package provider

import (
	"maps"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/flux"
)

func objects(kv ...string) types.Map {
	elems := map[string]attr.Value{}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == "?" {
			elems[kv[i]] = types.StringUnknown()
		} else {
			elems[kv[i]] = types.StringValue(kv[i+1])
		}
	}
	return types.MapValueMust(types.StringType, elems)
}

// TestRenderDifferences: what the controller deployed otherwise than
// planned is named field by field, and the next plan of the same render
// shows the deployed object; any other change still shows.
func TestRenderDifferences(t *testing.T) {
	const cm = "v1/ConfigMap/ns/app"
	// The Services differ by nulls only: the same object to the API server.
	planned := objects(cm, "data:\n  script: |\n    run\n", "v1/Service/ns/app", "metadata:\n  annotations: null\nspec: {}\n", "v1/Service/ns/other", "spec:\n  ports: null\n  type: ClusterIP\n", "apps/v1/Deployment/ns/app", "?")
	deployed := objects(cm, "data:\n  script: run\n", "v1/Service/ns/app", "spec: {}\n", "v1/Service/ns/other", "metadata:\n  labels: null\nspec:\n  type: ClusterIP\n", "apps/v1/Deployment/ns/app", "spec: {}\n", "v1/Secret/ns/extra", "data: {}\n")
	// A dashboard's ConfigMap, its empty annotations dropped by one
	// render and kept by the other (kube-prometheus-stack's), or null.
	const dashboard = "v1/ConfigMap/ns/dashboard"
	planned = withObject(planned, dashboard, "data:\n  a.json: '{}'\nmetadata:\n  labels:\n    grafana_dashboard: \"1\"\n  name: dashboard\n")
	deployed = withObject(deployed, dashboard, "data:\n  a.json: '{}'\nmetadata:\n  annotations: {}\n  labels:\n    grafana_dashboard: \"1\"\n  name: dashboard\n  ownerReferences: []\n")
	const emptied = "v1/ConfigMap/ns/emptied"
	planned = withObject(planned, emptied, "metadata:\n  annotations:\n    a: null\n  name: emptied\n")
	deployed = withObject(deployed, emptied, "metadata:\n  annotations: {}\n  labels: {}\n  name: emptied\n")
	ds := differencesFrom(planned, deployed)
	want := map[string]flux.RenderDifference{
		cm + " /data/script":  {Planned: `"run\n"`, Deployed: `"run"`},
		"v1/Secret/ns/extra ": {Planned: "(none)", Deployed: "the object"},
	}
	got := map[string]flux.RenderDifference{}
	for key, fields := range ds {
		for ptr, d := range fields {
			got[key+" "+ptr] = d
		}
	}
	if len(got) != len(want) {
		t.Fatalf("differences %v, want %v", got, want)
	}
	for k, d := range want {
		if got[k] != d {
			t.Errorf("difference %q = %+v, want %+v", k, got[k], d)
		}
	}
	// A plan that knew none of the objects (a create whose chart is known
	// after apply) has nothing the controller could deploy otherwise.
	if ds := differencesFrom(types.MapUnknown(types.StringType), deployed); len(ds) != 0 {
		t.Errorf("differences from objects planned unknown: %v", ds)
	}
	if lines := ds.Lines(); !strings.Contains(lines, `- v1/ConfigMap/ns/app /data/script: planned "run\n", deployed "run"`) {
		t.Errorf("lines:\n%s", lines)
	}

	// The next render plans the fields as the controller deploys them,
	// where it still renders them as before.
	for _, tc := range []struct {
		name, render, want string
	}{
		{"the same render", "data:\n  script: |\n    run\n", "data:\n  script: run\n"},
		{"another change too", "data:\n  other: x\n  script: |\n    run\n", "data:\n  other: x\n  script: run\n"},
		{"another value of the field", "data:\n  script: |\n    stop\n", "data:\n  script: |\n    stop\n"},
		{"numbers written as rendered", "data:\n  script: |\n    run\n  size: 1000000\n", "data:\n  script: run\n  size: 1000000\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := asTheControllerRenders(objects(cm, tc.render), ds)
			if got := next.Elements()[cm].(types.String).ValueString(); got != tc.want {
				t.Errorf("planned %q, want %q", got, tc.want)
			}
		})
	}
}

func withObject(m types.Map, key, yaml string) types.Map {
	elems := maps.Clone(m.Elements())
	elems[key] = types.StringValue(yaml)
	return types.MapValueMust(types.StringType, elems)
}
