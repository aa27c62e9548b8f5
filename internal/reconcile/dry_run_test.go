package reconcile

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
)

// operatorChart has a CRD in crds/ and an object of its kind in
// templates/, and a ConfigMap rendered only when .Capabilities has the
// kind: the pattern of charts that ship an operator with its first
// custom resource.
func operatorChart(group string) *chart.Chart {
	return &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: "v2", Name: "operator", Version: "1.0.0"},
		Files: []*common.File{{Name: "crds/widgets.yaml", Data: []byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.` + group + `
spec:
  group: ` + group + `
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
`)}},
		Templates: []*common.File{{Name: "templates/widget.yaml", Data: []byte(`apiVersion: ` + group + `/v1
kind: Widget
metadata:
  name: first
spec:
  size: 3
{{- if .Capabilities.APIVersions.Has "` + group + `/v1/Widget" }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: widgets-served
{{- end }}
`)}},
	}
}

// TestDryRunBeforeTheChartsCRDs: a chart whose custom resources are of a
// kind its own crds/ define plans on a cluster without the CRD (the
// objects rendered as the install will render them, with the kind in
// .Capabilities), and installs; with the CRD policy Skip the plan says the
// cluster lacks the kind, as the install would fail.
func TestDryRunBeforeTheChartsCRDs(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	group := f.ns + ".example.com"
	crds := dynamic.NewForConfigOrDie(testRESTConfig).Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	t.Cleanup(func() { _ = crds.Delete(context.Background(), "widgets."+group, metav1.DeleteOptions{}) })
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	skip := f.spec(func(s *Spec) { s.Install.CRDs = CRDSkip })
	if _, err := f.engine.DryRun(ctx, &Request{Spec: skip, Chart: operatorChart(group), Values: map[string]any{}, Status: &Status{}}); err == nil || !strings.Contains(err.Error(), `no matches for kind "Widget"`) {
		t.Errorf("dry run with CRDs skipped: %v, want the kind unknown to the cluster", err)
	}

	s := f.spec(nil)
	rel, err := f.engine.DryRun(ctx, &Request{Spec: s, Chart: operatorChart(group), Values: map[string]any{}, Status: &Status{}})
	if err != nil {
		t.Fatalf("dry run before the CRDs exist: %v", err)
	}
	for _, want := range []string{"kind: Widget\nmetadata:\n  name: first", "name: widgets-served"} {
		if !strings.Contains(rel.Manifest, want) {
			t.Errorf("planned manifest lacks %q:\n%s", want, rel.Manifest)
		}
	}
	if _, err := crds.Get(ctx, "widgets."+group, metav1.GetOptions{}); err == nil {
		t.Error("the dry run created the CRD")
	}
	st := &Status{}
	if err := f.engine.Reconcile(ctx, &Request{Spec: s, Chart: operatorChart(group), Values: map[string]any{}, Status: st}, nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(f.latest().Manifest); got != strings.TrimSpace(rel.Manifest) {
		t.Errorf("installed manifest differs from the planned one:\n%s\nplanned:\n%s", got, rel.Manifest)
	}
}

// TestActionTrustsItsPlan: the objects a plan's DryRun validated whole
// are not sent again by the first install or upgrade of an apply in
// another process given them (TrustedRender, from private state), once;
// other objects are.
func TestActionTrustsItsPlan(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var seen dryRuns
	// An engine with a discovery of its own: another process's.
	engine := func() *Reconciler {
		t.Helper()
		e := &Reconciler{Kube: kube.NewGetter(seen.wrap(testRESTConfig), f.ns, ""), Key: testDigests.Key, Logs: helm.NewLogBuffer(helm.DefaultLogLines, nil)}
		c, err := helm.NewClient(helm.ClientOptions{Getter: e.Kube, StorageNamespace: f.ns, Log: e.Logs, Observe: e.Observe})
		if err != nil {
			t.Fatal(err)
		}
		e.Helm = c
		return e
	}
	s := f.spec(nil)
	values := map[string]any{"replicas": 1}
	plan := engine()
	if _, err := plan.DryRun(ctx, &Request{Spec: s, Chart: engineChart("1.0.0"), Values: values, Status: &Status{}}); err != nil {
		t.Fatal(err)
	}
	planned := plan.Validated()
	if planned == nil || len(seen.take()) == 0 {
		t.Fatalf("the plan validated nothing whole (%v)", planned)
	}
	apply := engine()
	apply.TrustedRender = planned
	st := &Status{} // the resource's, from run to run
	if err := apply.Reconcile(ctx, &Request{Spec: s, Chart: engineChart("1.0.0"), Values: values, Status: st}, nil); err != nil {
		t.Fatal(err)
	}
	if got := seen.take(); len(got) > 0 {
		t.Errorf("the install sent again what its plan validated: %v", got)
	}
	if apply.TrustedRender != nil {
		t.Error("the plan's record is not used up")
	}
	// Other values: the plan's record vouches for nothing.
	other := engine()
	other.TrustedRender = planned
	if err := other.Reconcile(ctx, &Request{Spec: s, Chart: engineChart("1.0.0"), Values: map[string]any{"replicas": 2}, Status: st}, nil); err != nil {
		t.Fatal(err)
	}
	if got := seen.take(); len(got) == 0 {
		t.Error("the upgrade of other objects trusted the plan of the install")
	}
}

// TestDryRunKindsOfAnotherRelease: a release whose objects are of kinds
// the cluster does not serve renders when an operator's release planned
// before it brings their CRDs (PlannedKinds): its objects keep the scope
// the CRDs say (a cluster-scoped Gadget without a namespace), and
// UnservedKinds names them with the operator's release; a kind no planned
// release brings is named without one.
func TestDryRunKindsOfAnotherRelease(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	group := f.ns + ".example.com"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	planned := &kube.PlannedKinds{}
	f.engine.plannedKinds = planned
	newChart := func(name, templates string) *helm.Chart {
		return &helm.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: name, Version: "1.0.0"},
			Templates: []*common.File{{Name: "templates/objects.yaml", Data: []byte(templates)}}}
	}
	operator := newChart("operator", `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.`+group+`
spec:
  group: `+group+`
  names: {kind: Gadget, plural: gadgets}
  scope: Cluster
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`)
	if _, err := f.engine.DryRun(ctx, &Request{Spec: f.spec(func(s *Spec) { s.Name = "operator" }), Chart: operator, Values: map[string]any{}, Status: &Status{}}); err != nil {
		t.Fatal(err)
	}
	users := newChart("users", `apiVersion: `+group+`/v1
kind: Gadget
metadata:
  name: g1
{{- if .Capabilities.APIVersions.Has "`+group+`/v1/Gadget" }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: gadgets-served
{{- end }}
---
apiVersion: other.`+group+`/v1
kind: Thing
metadata:
  name: t1
`)
	rel, err := f.engine.DryRun(ctx, &Request{Spec: f.spec(func(s *Spec) { s.Name = "users" }), Chart: users, Values: map[string]any{}, Status: &Status{}})
	if err != nil {
		t.Fatalf("dry run of objects of kinds the cluster does not serve: %v", err)
	}
	if !strings.Contains(rel.Manifest, "name: gadgets-served") {
		t.Errorf("the planned kind is not among .Capabilities.APIVersions:\n%s", rel.Manifest)
	}
	got := f.engine.UnservedKinds()
	want := []UnservedKind{
		{GroupVersionKind: schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Gadget"}, Planned: f.ns + "/operator", Objects: []string{"g1"}},
		{GroupVersionKind: schema.GroupVersionKind{Group: "other." + group, Version: "v1", Kind: "Thing"}, Objects: []string{"t1"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("UnservedKinds = %+v, want %+v", got, want)
	}
	if namespaced, ok := f.engine.Scope()(want[0].GroupVersionKind); !ok || namespaced {
		t.Errorf("scope of Gadget: namespaced %v, known %v; want cluster-scoped, as its planned CRD says", namespaced, ok)
	}
	if _, ok := f.engine.Scope()(want[1].GroupVersionKind); ok {
		t.Error("the scope of Thing, which nothing defines, is known")
	}
}

// TestDryRunGatedOnAPlannedKind: a chart that renders objects only when
// .Capabilities has a kind, planned after the release that brings the
// kind's CRD and before the cluster serves it, renders them as its install
// will once that release is applied: a custom resource of the kind
// (rendered client-side, as it cannot be mapped yet), and objects of
// served kinds under the same gate (rendered server-side with the planned
// kind, and validated whole). Either way the apply, which sees the kind,
// renders what the plan showed.
func TestDryRunGatedOnAPlannedKind(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	group := f.ns + ".example.com"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	f.engine.plannedKinds = &kube.PlannedKinds{}
	if _, err := f.engine.DryRun(ctx, &Request{Spec: f.spec(func(s *Spec) { s.Name = "operator" }), Chart: operatorChart(group), Values: map[string]any{}, Status: &Status{}}); err != nil {
		t.Fatal(err)
	}
	gate := `{{- if .Capabilities.APIVersions.Has "` + group + `/v1/Widget" }}`
	for _, tc := range []struct {
		name, templates, want string
		validatedWhole        bool
	}{
		{"a custom resource of the kind", gate + `
apiVersion: ` + group + `/v1
kind: Widget
metadata:
  name: gated
{{- end }}
`, "name: gated", false},
		{"objects of served kinds", gate + `
apiVersion: v1
kind: ConfigMap
metadata:
  name: monitoring-on
{{- end }}
`, "name: monitoring-on", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := &helm.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "app", Version: "1.0.0"},
				Templates: []*common.File{{Name: "templates/gated.yaml", Data: []byte(tc.templates)}}}
			rel, err := f.engine.DryRun(ctx, &Request{Spec: f.spec(func(s *Spec) { s.Name = "app" }), Chart: app, Values: map[string]any{}, Status: &Status{}})
			if err != nil {
				t.Fatalf("dry run: %v", err)
			}
			if !strings.Contains(rel.Manifest, tc.want) {
				t.Errorf("the plan renders without the kind its operator's release brings; manifest:\n%s", rel.Manifest)
			}
			if got := f.engine.Validated() != nil; got != tc.validatedWhole {
				t.Errorf("validated whole: %v, want %v", got, tc.validatedWhole)
			}
		})
	}
}
