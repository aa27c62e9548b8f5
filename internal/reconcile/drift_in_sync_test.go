package reconcile

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/postrender"
)

// dryRuns records the paths of the server-side dry-run applies sent
// through a REST config.
type dryRuns struct {
	mu    sync.Mutex
	paths []string
}

func (d *dryRuns) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodPatch && r.URL.Query().Get("dryRun") == "All" {
				d.mu.Lock()
				d.paths = append(d.paths, r.URL.Path)
				d.mu.Unlock()
			}
			return rt.RoundTrip(r)
		})
	})
	return cfg
}

// take returns the names of the objects dry-run since the last call.
func (d *dryRuns) take() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var names []string
	for _, p := range d.paths {
		names = append(names, p[strings.LastIndex(p, "/")+1:])
	}
	d.paths = nil
	slices.Sort(names)
	return names
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// An object provably as Helm wrote it is not compared; an object is compared again
// only when it was written since drift detection last found it in sync;
// out-of-band changes and deletions are still seen, and a record of other
// ignore rules or of another engine's detection (kept as JSON, as the
// provider keeps it) is honoured only for the same basis.
func TestDriftDetectionSkipsUnchangedObjects(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	s := f.spec(func(s *Spec) { s.Drift.Mode = DriftEnabled })
	if err := f.engine.Reconcile(ctx, &Request{Spec: s, Chart: driftChart(), Values: map[string]any{"replicas": 1}, Status: &Status{}}, f.engine.DriftDetector(s)); err != nil {
		t.Fatal(err)
	}
	var seen dryRuns
	e := &Reconciler{Kube: kube.NewGetter(seen.wrap(testRESTConfig), f.ns, ""), Helm: f.engine.Helm, Key: testDigests.Key, Logs: helm.NewLogBuffer(helm.DefaultLogLines, nil)}
	detect := func(e *Reconciler, ignore []IgnoreRule) []string {
		t.Helper()
		r, err := e.DetectDrift(ctx, f.latest(), ignore)
		if err != nil {
			t.Fatal(err)
		}
		var drifted []string
		for _, o := range r.Objects {
			drifted = append(drifted, o.Key)
		}
		return drifted
	}
	// The Deployment's status (and so its resourceVersion) may change
	// while its pods start: only the ConfigMap and the Secret are sure to
	// be left alone.
	stable := func(names []string) []string {
		return slices.DeleteFunc(names, func(n string) bool { return n == "app" })
	}

	if d := detect(e, nil); len(d) > 0 {
		t.Fatalf("drift right after install: %v", d)
	}
	if got := stable(seen.take()); len(got) > 0 {
		t.Fatalf("first detection dry-ran %v, which only Helm wrote", got)
	}
	if rec := e.InSync(); rec == nil || rec.Versions["v1/ConfigMap/"+f.ns+"/app-config"] == "" || rec.Versions["v1/Secret/"+f.ns+"/app-secret"] == "" {
		t.Fatalf("objects only Helm wrote are not recorded in sync: %+v", rec)
	}
	if d := detect(e, nil); len(d) > 0 {
		t.Fatalf("drift without a change: %v", d)
	}
	if got := stable(seen.take()); len(got) > 0 {
		t.Errorf("unchanged objects dry-run again: %v", got)
	}

	// Edits that only remove fields leave no manager of their own in
	// managedFields (the API server drops a manager whose field set is
	// empty): each is still seen, and the object recorded in sync only
	// once it is put back.
	for _, edit := range []struct {
		name, patch, restore string
		kind                 types.PatchType
	}{
		{"JSON patch removing a data key", `[{"op":"remove","path":"/data/greeting"}]`, `{"data":{"greeting":"hello"}}`, types.JSONPatchType},
		{"merge patch setting a data key to null", `{"data":{"greeting":null}}`, `{"data":{"greeting":"hello"}}`, types.MergePatchType},
		{"label removed", `{"metadata":{"labels":{"` + postrender.OriginNameLabel + `":null}}}`, `{"metadata":{"labels":{"` + postrender.OriginNameLabel + `":"app"}}}`, types.MergePatchType},
	} {
		if _, err := f.cs.CoreV1().ConfigMaps(f.ns).Patch(ctx, "app-config", edit.kind, []byte(edit.patch), metav1.PatchOptions{}); err != nil {
			t.Fatalf("%s: %v", edit.name, err)
		}
		cm, err := f.cs.CoreV1().ConfigMaps(f.ns).Get(ctx, "app-config", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !writtenByHelmAlone(cm.ManagedFields) {
			t.Fatalf("%s: the edit left a manager of its own, so this case tests nothing: %+v", edit.name, cm.ManagedFields)
		}
		if d := detect(e, nil); !slices.Equal(d, []string{"v1/ConfigMap/" + f.ns + "/app-config"}) {
			t.Errorf("%s: drift %v, want the ConfigMap", edit.name, d)
		}
		seen.take()
		if _, err := f.cs.CoreV1().ConfigMaps(f.ns).Patch(ctx, "app-config", types.MergePatchType, []byte(edit.restore), metav1.PatchOptions{FieldManager: helm.FieldManager}); err != nil {
			t.Fatal(err)
		}
		if d := detect(e, nil); len(d) > 0 {
			t.Errorf("%s: drift after putting it back: %v", edit.name, d)
		}
		seen.take()
	}

	// Written out of band: compared again, and the drift seen.
	if _, err := f.cs.CoreV1().ConfigMaps(f.ns).Patch(ctx, "app-config", types.MergePatchType, []byte(`{"data":{"greeting":"changed"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := detect(e, nil); !slices.Equal(d, []string{"v1/ConfigMap/" + f.ns + "/app-config"}) {
		t.Errorf("drift after editing the ConfigMap: %v", d)
	}
	if got := stable(seen.take()); !slices.Equal(got, []string{"app-config"}) {
		t.Errorf("after editing the ConfigMap, dry-ran %v, want just it", got)
	}
	// Still drifted: a drifted object is never recorded as in sync.
	if d := detect(e, nil); len(d) != 1 {
		t.Errorf("drift reported once only: %v", d)
	}
	seen.take()

	// Deleted: missing.
	if err := f.cs.CoreV1().Secrets(f.ns).Delete(ctx, "app-secret", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if d := detect(e, nil); !slices.Contains(d, "v1/Secret/"+f.ns+"/app-secret") {
		t.Errorf("deleted Secret not reported: %v", d)
	}
	seen.take()

	// Other ignore rules: a new basis, every object compared.
	other := []IgnoreRule{{Paths: []string{"/data/greeting"}}}
	if d := detect(e, other); slices.Contains(d, "v1/ConfigMap/"+f.ns+"/app-config") {
		t.Errorf("ignored field still reported: %v", d)
	}
	if got := stable(seen.take()); !slices.Equal(got, []string{"app-config", "app-secret"}) {
		t.Errorf("under new ignore rules dry-ran %v, want every object", got)
	}

	// A record kept as JSON and given to another engine.
	raw, err := json.Marshal(e.InSync())
	if err != nil {
		t.Fatal(err)
	}
	var rec InSyncRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	e2 := &Reconciler{Kube: kube.NewGetter(seen.wrap(testRESTConfig), f.ns, ""), Helm: f.engine.Helm, Key: testDigests.Key}
	e2.SetInSync(&rec)
	detect(e2, other)
	if got := stable(seen.take()); !slices.Equal(got, []string{"app-secret"}) {
		t.Errorf("with the kept record dry-ran %v, want only the missing Secret", got)
	}

	// Allowed to read and apply the objects but not to list them: the
	// record cannot be checked, and every object is compared as before.
	if _, err := f.cs.CoreV1().ServiceAccounts(f.ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "nolist"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.cs.RbacV1().Roles(f.ns).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "nolist"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"", "apps"}, Resources: []string{"configmaps", "secrets", "deployments"},
			Verbs: []string{"get", "patch", "create"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.cs.RbacV1().RoleBindings(f.ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "nolist"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "nolist"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "nolist", Namespace: f.ns}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e3 := &Reconciler{Kube: kube.NewGetter(seen.wrap(testRESTConfig), f.ns, kube.ServiceAccountUser(f.ns, "nolist")), Helm: f.engine.Helm, Key: testDigests.Key}
	e3.SetInSync(&rec)
	// The API server's RBAC cache takes a moment to see the binding.
	deadline := time.Now().Add(30 * time.Second)
	_, err = e3.DetectDrift(ctx, f.latest(), other)
	for ; apierrors.IsForbidden(err) && time.Now().Before(deadline); _, err = e3.DetectDrift(ctx, f.latest(), other) {
		time.Sleep(250 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("without permission to list: %v", err)
	}
	if got := stable(seen.take()); !slices.Contains(got, "app-config") {
		t.Errorf("without permission to list dry-ran %v, want the recorded ConfigMap compared again", got)
	}
}

// asWritten holds an object to be as written only when every field of
// the manifest's object is in the live one with an equal value, and only
// Helm's own writes are recorded; anything it cannot decide is compared.
func TestAsWritten(t *testing.T) {
	helmOnly := []any{map[string]any{"manager": helm.FieldManager, "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1"}}
	obj := func(fields string, managed []any) *unstructured.Unstructured {
		t.Helper()
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal([]byte(fields), &u.Object); err != nil {
			t.Fatal(err)
		}
		if managed != nil {
			_ = unstructured.SetNestedSlice(u.Object, managed, "metadata", "managedFields")
		}
		return u
	}
	const desired = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"l":"1"}},"data":{"k":"v"},"spec":{"n":2,"list":[{"a":1},{"b":"x"}]}}`
	for _, tc := range []struct {
		name          string
		live, desired string
		managed       []any
		want          bool
	}{
		{"same", desired, desired, helmOnly, true},
		{"server added fields", `{"metadata":{"name":"a","uid":"u","labels":{"l":"1","managed-by":"Helm"}},"data":{"k":"v"},"spec":{"n":2,"list":[{"a":1,"d":true},{"b":"x"}]}}`, desired, helmOnly, true},
		{"integer as float", `{"metadata":{"name":"a","labels":{"l":"1"}},"data":{"k":"v"},"spec":{"n":2.0,"list":[{"a":1},{"b":"x"}]}}`, desired, helmOnly, true},
		{"data key removed", `{"metadata":{"name":"a","labels":{"l":"1"}},"data":{},"spec":{"n":2,"list":[{"a":1},{"b":"x"}]}}`, desired, helmOnly, false},
		{"label removed", `{"metadata":{"name":"a"},"data":{"k":"v"},"spec":{"n":2,"list":[{"a":1},{"b":"x"}]}}`, desired, helmOnly, false},
		{"list item removed", `{"metadata":{"name":"a","labels":{"l":"1"}},"data":{"k":"v"},"spec":{"n":2,"list":[{"a":1}]}}`, desired, helmOnly, false},
		{"list item added", `{"metadata":{"name":"a","labels":{"l":"1"}},"data":{"k":"v"},"spec":{"n":2,"list":[{"a":1},{"b":"x"},{"c":1}]}}`, desired, helmOnly, false},
		{"value changed", `{"metadata":{"name":"a","labels":{"l":"1"}},"data":{"k":"w"},"spec":{"n":2,"list":[{"a":1},{"b":"x"}]}}`, desired, helmOnly, false},
		{"type changed", `{"metadata":{"name":"a","labels":{"l":"1"}},"data":{"k":"v"},"spec":{"n":"2","list":[{"a":1},{"b":"x"}]}}`, desired, helmOnly, false},
		{"another writer", desired, desired, append([]any{map[string]any{"manager": "kubectl-edit", "operation": "Update"}}, helmOnly...), false},
		{"a server-side apply by Helm's manager", desired, desired, []any{map[string]any{"manager": helm.FieldManager, "operation": "Apply"}}, true},
		{"a server-side apply by another manager", desired, desired, append([]any{map[string]any{"manager": "kubectl", "operation": "Apply"}}, helmOnly...), false},
		{"a subresource write", desired, desired, []any{map[string]any{"manager": helm.FieldManager, "operation": "Update", "subresource": "scale"}}, false},
		{"no managed fields", desired, desired, nil, false},
		{"a null in the manifest", `{"metadata":{"name":"a"}}`, `{"metadata":{"name":"a","annotations":null}}`, helmOnly, false},
		{"a normalised quantity", `{"spec":{"cpu":"500m"}}`, `{"spec":{"cpu":"0.5"}}`, helmOnly, false},
		{"Secret stringData stored as data", `{"kind":"Secret","data":{"p":"czNjcmV0","q":"eA=="}}`, `{"apiVersion":"v1","kind":"Secret","stringData":{"p":"s3cret"},"data":{"q":"eA=="}}`, helmOnly, true},
		{"Secret stringData changed", `{"kind":"Secret","data":{"p":"b3RoZXI="}}`, `{"apiVersion":"v1","kind":"Secret","stringData":{"p":"s3cret"}}`, helmOnly, false},
		{"Secret key removed", `{"kind":"Secret","data":{}}`, `{"apiVersion":"v1","kind":"Secret","stringData":{"p":"s3cret"}}`, helmOnly, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := asWritten(obj(tc.live, tc.managed), obj(tc.desired, nil)); got != tc.want {
				t.Errorf("asWritten = %v, want %v", got, tc.want)
			}
		})
	}
}
