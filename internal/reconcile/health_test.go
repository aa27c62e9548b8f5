package reconcile

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/kustomize"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	releasecommon "helm.sh/helm/v4/pkg/release/common"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
)

// TestHealthChecks: a custom resource that no controller reconciles is
// ready the moment it exists for Helm 3's waiter; with a health check (the
// poller) the install waits until its CEL expression holds, fails naming
// the expression when it never does, and fails at once when the failed
// expression holds.
func TestHealthChecks(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	group := f.ns + ".example.com"
	crds := dynamic.NewForConfigOrDie(testRESTConfig).Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	t.Cleanup(func() { _ = crds.Delete(context.Background(), "databases."+group, metav1.DeleteOptions{}) })
	databases := dynamic.NewForConfigOrDie(testRESTConfig).Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "databases"}).Namespace(f.ns)
	dbChart := func(version string) *chart.Chart {
		c := engineChart(version)
		c.Files = append(c.Files, &common.File{Name: "crds/databases.yaml", Data: []byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: databases.` + group + `
spec:
  group: ` + group + `
  names: {kind: Database, plural: databases}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`)})
		c.Templates = append(c.Templates, &common.File{Name: "templates/database.yaml", Data: []byte(`apiVersion: ` + group + `/v1
kind: Database
metadata:
  name: db
spec:
  version: "{{ .Chart.Version }}"
status:
  phase: {{ .Values.phase | default "Pending" }}
`)})
		return c
	}
	check := kustomize.CustomHealthCheck{APIVersion: group + "/v1", Kind: "Database", HealthCheckExpressions: kustomize.HealthCheckExpressions{
		Current: "status.phase == 'Ready'",
		Failed:  "status.phase == 'Broken'",
	}}
	st := &Status{} // the resource's, from run to run
	run := func(s *Spec, version string, values ...string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		req := &Request{Spec: s, Chart: dbChart(version), Status: st}
		if len(values) > 0 {
			req.Values = map[string]any{"phase": values[0]}
		}
		return f.engine.Reconcile(ctx, req, nil)
	}
	setPhase := func(phase string) {
		t.Helper()
		patch := []byte(`{"status":{"phase":"` + phase + `"}}`)
		if _, err := databases.Patch(context.Background(), "db", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	uninstall := func() {
		t.Helper()
		if _, err := f.engine.Helm.Uninstall("app", helm.UninstallOptions{Timeout: 5 * time.Minute, Wait: true}); err != nil {
			t.Fatal(err)
		}
		st = &Status{} // the next install is a new resource's
	}

	// Helm's legacy waiter: ready as soon as it exists.
	if err := run(f.spec(func(s *Spec) { s.WaitStrategy = helm.WaitLegacy }), "1.0.0"); err != nil {
		t.Fatalf("legacy wait: %v", err)
	}
	uninstall()

	// The poller with a health check: never Ready, the install fails
	// naming the expression.
	withCheck := func(s *Spec) {
		s.HealthChecks = []kustomize.CustomHealthCheck{check}
		// Time for the hook Job too, on a busy machine.
		s.Install.Timeout = 20 * time.Second
	}
	err := run(f.spec(withCheck), "1.0.0")
	var we *WaitError
	if !errors.As(err, &we) {
		t.Fatalf("a health check that never holds: %v, want a wait error", err)
	}
	if got := we.Error(); !strings.Contains(got, "Database "+f.ns+"/db: in progress: health check current `status.phase == 'Ready'` does not hold") {
		t.Errorf("the error does not name the expression that did not hold:\n%s", got)
	}
	if rel := f.latest(); rel.Info.Status != releasecommon.StatusFailed {
		t.Errorf("release %s, want failed", rel.Info.Status)
	}
	uninstall()

	// Made Ready while the install waits: it succeeds.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx := context.Background(); ; time.Sleep(500 * time.Millisecond) {
			if _, err := databases.Get(ctx, "db", metav1.GetOptions{}); err == nil {
				setPhase("Ready")
				return
			}
		}
	}()
	err = run(f.spec(func(s *Spec) { withCheck(s); s.Install.Timeout = 5 * time.Minute }), "1.0.0")
	<-done
	if err != nil {
		t.Fatalf("the health check held during the wait: %v", err)
	}

	// The failed expression holds: the upgrade fails without waiting out
	// its timeout, naming it. (It writes the status its template has, by
	// server-side apply: the CRD has no status subresource.)
	err = run(f.spec(func(s *Spec) { withCheck(s); s.Upgrade.Timeout = 5 * time.Minute }), "1.1.0", "Broken")
	if !errors.As(err, &we) || !strings.Contains(we.Error(), "failed: health check failed `status.phase == 'Broken'` holds") {
		t.Fatalf("a failed health check: %v", err)
	}
	if !strings.Contains(err.Error(), "failed early due to stalled resources") {
		t.Errorf("the poller did not stop at the failure (fail fast): %v", err)
	}
}
