package reconcile

import (
	"context"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/postrender"
)

func driftChart() *chart.Chart {
	c := engineChart("1.0.0")
	c.Templates = append(c.Templates,
		&common.File{Name: "templates/configmap.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\ndata:\n  greeting: hello\n")},
		&common.File{Name: "templates/secret.yaml", Data: []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Release.Name }}-secret\nstringData:\n  password: chart-secret-value\n")},
	)
	return c
}

func TestDriftDetectionAndCorrection(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	st := &Status{}
	s := f.spec(func(s *Spec) { s.Drift.Mode = DriftEnabled })
	if err := f.engine.Reconcile(ctx, &Request{Spec: s, Chart: driftChart(), Values: map[string]any{"replicas": 2}, Status: st}, f.engine.DriftDetector(s)); err != nil {
		t.Fatal(err)
	}
	detect := func(ignore []IgnoreRule) *DriftReport {
		t.Helper()
		r, err := f.engine.DetectDrift(ctx, f.latest(), ignore)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := detect(nil); r.HasChanges() {
		t.Fatalf("drift right after install: %+v", r.Objects)
	}

	// Out-of-band changes: scale, delete, edit a Secret, edit an excluded object.
	patch := func(kind, name, p string) {
		t.Helper()
		var err error
		switch kind {
		case "Deployment":
			_, err = f.cs.AppsV1().Deployments(f.ns).Patch(ctx, name, types.MergePatchType, []byte(p), metav1.PatchOptions{})
		case "Secret":
			_, err = f.cs.CoreV1().Secrets(f.ns).Patch(ctx, name, types.MergePatchType, []byte(p), metav1.PatchOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	patch("Deployment", "app", `{"spec":{"replicas":5}}`)
	patch("Secret", "app-secret", `{"stringData":{"password":"changed-by-hand"}}`)
	if err := f.cs.CoreV1().ConfigMaps(f.ns).Delete(ctx, "app-config", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	r := detect(nil)
	byKey := map[string]ObjectDrift{}
	for _, o := range r.Objects {
		byKey[o.Key] = o
	}
	dep := byKey["apps/v1/Deployment/"+f.ns+"/app"]
	if len(dep.Changes) != 1 || dep.Changes[0].Path != "/spec/replicas" || dep.Changes[0].Desired != "2" || dep.Changes[0].Live != "5" {
		t.Errorf("Deployment drift %+v, want /spec/replicas 2 (desired) vs 5 (live)", dep)
	}
	if cm := byKey["v1/ConfigMap/"+f.ns+"/app-config"]; !cm.Missing {
		t.Errorf("deleted ConfigMap not reported missing: %+v", cm)
	}
	sec := byKey["v1/Secret/"+f.ns+"/app-secret"]
	if len(sec.Changes) == 0 {
		t.Errorf("Secret drift not reported")
	}
	for _, c := range sec.Changes {
		if strings.Contains(c.Desired+c.Live, "chart-secret-value") || strings.Contains(c.Desired+c.Live, "changed-by-hand") || !strings.HasPrefix(c.Live, "(sensitive value)") {
			t.Errorf("Secret drift shows values: %+v", c)
		}
	}
	if len(r.Objects) != 3 {
		t.Errorf("drifted objects %d, want 3: %+v", len(r.Objects), r.Objects)
	}

	// Ignore rules: a path for a target kind.
	r = detect([]IgnoreRule{{Paths: []string{"/spec/replicas"}, Target: &postrender.Selector{Kind: "Deploy.*"}}})
	for _, o := range r.Objects {
		if strings.Contains(o.Key, "Deployment") {
			t.Errorf("ignored path still reported: %+v", o)
		}
	}
	// Exclusion label on the live object.
	patch("Secret", "app-secret", `{"metadata":{"labels":{"`+DriftExclusionKey+`":"disabled"}}}`)
	for _, o := range detect(nil).Objects {
		if strings.Contains(o.Key, "Secret") {
			t.Errorf("excluded Secret still reported: %+v", o)
		}
	}

	// Correction: no new revision, cluster back to the manifest (the
	// excluded Secret left alone).
	version := f.latest().Version
	ctxT, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := f.engine.Reconcile(ctxT, &Request{Spec: s, Chart: driftChart(), Values: map[string]any{"replicas": 2}, Status: st}, f.engine.DriftDetector(s)); err != nil {
		t.Fatal(err)
	}
	if f.latest().Version != version {
		t.Errorf("drift correction made a Helm revision (v%d → v%d)", version, f.latest().Version)
	}
	d, err := f.cs.AppsV1().Deployments(f.ns).Get(ctx, "app", metav1.GetOptions{})
	if err != nil || *d.Spec.Replicas != 2 {
		t.Errorf("Deployment replicas after correction: %v (%v)", d.Spec.Replicas, err)
	}
	if _, err := f.cs.CoreV1().ConfigMaps(f.ns).Get(ctx, "app-config", metav1.GetOptions{}); err != nil {
		t.Errorf("ConfigMap not recreated: %v", err)
	}
	var sec2 *corev1.Secret
	if sec2, err = f.cs.CoreV1().Secrets(f.ns).Get(ctx, "app-secret", metav1.GetOptions{}); err != nil || string(sec2.Data["password"]) != "changed-by-hand" {
		t.Errorf("the excluded Secret was changed: %v", err)
	}
	if r := detect(nil); r.HasChanges() {
		t.Errorf("drift after correction: %+v", r.Objects)
	}

	// warn mode reports and leaves the cluster alone.
	patch("Deployment", "app", `{"spec":{"replicas":7}}`)
	warn := f.spec(func(s *Spec) { s.Drift.Mode = DriftWarn })
	if err := f.engine.Reconcile(ctxT, &Request{Spec: warn, Chart: driftChart(), Values: map[string]any{"replicas": 2}, Status: st}, f.engine.DriftDetector(warn)); err != nil {
		t.Fatal(err)
	}
	if d, _ := f.cs.AppsV1().Deployments(f.ns).Get(ctx, "app", metav1.GetOptions{}); *d.Spec.Replicas != 7 {
		t.Errorf("warn mode corrected the drift: replicas %d", *d.Spec.Replicas)
	}
}
