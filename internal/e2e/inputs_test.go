//go:build unix

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// contractSavedPlanValuesFrom: a saved plan whose values_from Secret is
// written again before its apply (by another pipeline, or by a resource
// applied before the release in the same run) fails with this provider's
// error naming the reference and the write, deploys nothing and shows
// none of the Secret's data; a new plan reads it anew and deploys it.
func contractSavedPlanValuesFrom(t *testing.T, env *engineEnv) {
	const name = "from"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	secrets := env.cs.CoreV1().Secrets(env.ns)
	setMessage := func(message string) {
		t.Helper()
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "from-values"}, Data: map[string][]byte{"values.yaml": []byte("message: " + message + "\n")}}
		if _, err := secrets.Update(ctx, s, metav1.UpdateOptions{FieldManager: "other-pipeline"}); err != nil {
			if _, err := secrets.Create(ctx, s, metav1.CreateOptions{FieldManager: "other-pipeline"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	setMessage("first-value")
	w := env.workspace(t, "values-from")
	w.write(env.c.hcl(map[string]string{name: env.body(`values_from = [{ kind = "Secret", name = "from-values" }]`)}))
	w.apply()
	revision := env.st.latest(name).Version

	setMessage("planned-value")
	res := w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=tfplan")
	if !has(res.stdout, "values changed") {
		t.Errorf("the plan does not show the upgrade the Secret's new data makes:\n%s", res.stdout)
	}
	setMessage("unplanned-value")
	res = w.must(1, "apply", "-input=false", "-no-color", "tfplan")
	for _, want := range []string{"Values changed since the plan", "values_from[0]", `Secret "from-values"`, `written at`, `"other-pipeline", after that refresh`, "sensitive_values"} {
		if !has(res.stderr, want) {
			t.Errorf("the apply's error lacks %q:\n%s", want, res.stderr)
		}
	}
	for _, leaked := range []string{"inconsistent", "planned-value", "unplanned-value", "first-value"} {
		if strings.Contains(res.stdout+res.stderr, leaked) {
			t.Errorf("the apply's output has %q:\n%s", leaked, res)
		}
	}
	if latest := env.st.latest(name); latest == nil || latest.Version != revision {
		t.Errorf("the refused apply made a revision: %s (was %d)", env.st.describe(name), revision)
	}
	w.apply()
	if got := configMessageOn(t, env.cs, env.ns, name); got != "unplanned-value" {
		t.Errorf("message %q after a new plan's apply, want the Secret's data", got)
	}
	w.planIsEmpty()
}

// TestPostRendererProgramEdited: a post-renderer command's script edited
// with its command line unchanged is planned as an upgrade and deployed;
// a saved plan whose script is edited again before its apply fails with
// this provider's error and deploys nothing.
func TestPostRendererProgramEdited(t *testing.T) {
	parallelMatrix(t)
	ns := newNamespace(t)
	c := config{namespace: ns, repo: newRepository(t), cacheDir: t.TempDir()}
	store := newStorage(t, ns)
	w := newWorkspace(t, "program")
	script := func(message string) {
		t.Helper()
		body := "#!/bin/sh\nexec sed -e 's/message: .*/message: " + message + "/'\n"
		if err := os.WriteFile(filepath.Join(w.dir, "render.sh"), []byte(body), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	script("by-script-one")
	w.write(c.hcl(map[string]string{"svc": `  post_renderers = [{ exec = { command = "./render.sh" } }]`}))
	w.apply()
	if got := configMessage(t, ns, "svc"); got != "by-script-one" {
		t.Fatalf("message %q, want by-script-one", got)
	}
	w.planIsEmpty()

	script("by-script-two")
	res := w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=tfplan")
	if !has(res.stdout, "post_renderers changed") || !has(res.stdout, "by-script-two") {
		t.Errorf("the plan after the script's edit does not show the upgrade:\n%s", res.stdout)
	}
	revision := store.latest("svc").Version
	script("by-script-three")
	res = w.must(1, "apply", "-input=false", "-no-color", "tfplan")
	if !has(res.stderr, "Post-renderer program changed since the plan") || strings.Contains(res.stderr, "inconsistent") {
		t.Errorf("the apply of a plan whose script changed:\n%s", res.stderr)
	}
	if got := store.latest("svc").Version; got != revision {
		t.Errorf("the refused apply made revision %d (was %d)", got, revision)
	}
	w.apply()
	if got := configMessage(t, ns, "svc"); got != "by-script-three" {
		t.Errorf("message %q, want by-script-three", got)
	}
	w.planIsEmpty()
}

// lookupTemplate copies the color of the ConfigMap lookup-source.
const lookupTemplate = `{{- $src := lookup "v1" "ConfigMap" .Release.Namespace "lookup-source" }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-copy
data:
  color: {{ if $src }}{{ $src.data.color }}{{ else }}none{{ end }}
  revision: {{ .Values.revision | quote }}
`

// contractSavedPlanLookup: a saved plan whose chart looks up an object
// that is written again before its apply fails with this provider's
// error naming the lookup, deploying nothing; a new plan reads it anew
// and deploys it. On the Flux engine the lookups are recorded from the
// first upgrade on (a create's plan hands its apply nothing, and the
// controller's install renders out of the provider's sight). A chart
// whose CRD the cluster does not serve yet, which the plan renders
// client-side, plans what its lookup reads as the install's render does.
func contractSavedPlanLookup(t *testing.T, env *engineEnv) {
	const name = "looks"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	env.c.repo.Add(t, &chart.Chart{
		Metadata:  &chart.Metadata{APIVersion: "v2", Name: "lookup", Version: "1.0.0"},
		Templates: []*common.File{{Name: "templates/cm.yaml", Data: []byte(lookupTemplate)}},
	}, nil)
	configMaps := env.cs.CoreV1().ConfigMaps(env.ns)
	setColor := func(color string) {
		t.Helper()
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "lookup-source"}, Data: map[string]string{"color": color}}
		if _, err := configMaps.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "other-pipeline"}); err != nil {
			if _, err := configMaps.Create(ctx, cm, metav1.CreateOptions{FieldManager: "other-pipeline"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	c := env.c
	c.chart = "lookup"
	w := env.workspace(t, "lookup")
	setColor("red")
	w.write(c.hcl(map[string]string{name: env.body(`values = { revision = "1" }`)}))
	w.apply()
	if got := configMapOn(t, env.cs, env.ns, name+"-copy").Data["color"]; got != "red" {
		t.Fatalf("the copy says %q, want red", got)
	}
	if env.flux() {
		// helm-controller's install makes the calls out of the
		// provider's sight: an upgrade's plan records them.
		w.write(c.hcl(map[string]string{name: env.body(`values = { revision = "1b" }`)}))
		w.apply()
	}
	revision := env.st.latest(name).Version

	setColor("blue")
	w.write(c.hcl(map[string]string{name: env.body(`values = { revision = "2" }`)}))
	res := w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=tfplan")
	if !has(res.stdout, "color: blue") {
		t.Errorf("the plan does not show what the lookup reads now:\n%s", res.stdout)
	}
	setColor("green")
	res = w.must(1, "apply", "-input=false", "-no-color", "tfplan")
	for _, want := range []string{"Object read by lookup changed since the plan", "v1 ConfigMap " + env.ns + "/lookup-source", "Nothing was deployed"} {
		if !has(res.stderr, want) {
			t.Errorf("the apply's error lacks %q:\n%s", want, res.stderr)
		}
	}
	if has(res.stdout+res.stderr, "inconsistent") {
		t.Errorf("the apply ends in Terraform's error:\n%s", res)
	}
	if latest := env.st.latest(name); latest == nil || latest.Version != revision {
		t.Errorf("the refused apply made a revision: %s (was %d)", env.st.describe(name), revision)
	}
	w.apply()
	if got := configMapOn(t, env.cs, env.ns, name+"-copy").Data["color"]; got != "green" {
		t.Errorf("the copy says %q after a new plan's apply, want green", got)
	}
	w.planIsEmpty()

	// The chart's objects cannot be dry-run before its CRD exists: the
	// plan renders them client-side, where Helm's lookup finds nothing.
	group := env.ns + ".lookup.example.com"
	env.c.repo.Add(t, &chart.Chart{
		Metadata:  &chart.Metadata{APIVersion: "v2", Name: "lookup", Version: "1.1.0"},
		Templates: []*common.File{{Name: "templates/cm.yaml", Data: []byte(lookupTemplate)}},
		Files:     []*common.File{{Name: "crds/gadgets.yaml", Data: []byte(namespacedCRD(group, "Gadget"))}},
	}, nil)
	deleteCRDAfter(t, env, "gadgets."+group)
	c.version = "1.1.0"
	w = env.workspace(t, "lookup-crds")
	w.write(c.hcl(map[string]string{name + "-crds": env.body(`values = { revision = "1" }`)}))
	res = w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode")
	if !has(res.stdout, "color: green") {
		t.Errorf("the plan of a chart rendered before its CRD exists does not show what its lookup reads:\n%s", res.stdout)
	}
	w.apply()
	if got := configMapOn(t, env.cs, env.ns, name+"-crds-copy").Data["color"]; got != "green" {
		t.Errorf("the copy says %q, want green", got)
	}
	w.planIsEmpty()
}

// namespacedCRD is the CRD of a namespaced kind of group (served as v1,
// plural the kind's name in lower case with an s), whose objects hold
// anything.
func namespacedCRD(group, kind string) string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[3]s.%[1]s
spec:
  group: %[1]s
  names: {kind: %[2]s, plural: %[3]s}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`, group, kind, strings.ToLower(kind)+"s")
}

// deleteCRDAfter deletes the CRD name when t ends: Helm leaves a CRD of
// crds/ behind its release.
func deleteCRDAfter(t *testing.T, env *engineEnv, name string) {
	t.Cleanup(func() {
		_ = dynamic.NewForConfigOrDie(env.rest).Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}).
			Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}
