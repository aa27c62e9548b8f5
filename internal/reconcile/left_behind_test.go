package reconcile

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestUninstallSaysWhatItLeaves: the claims a StatefulSet made, objects
// annotated helm.sh/resource-policy: keep, and objects whose Helm
// annotations name another release outlive an uninstall, as Helm means
// them to; the uninstall lists them (and nothing it deleted).
func TestUninstallSaysWhatItLeaves(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: "v2", Name: "stateful", Version: "1.0.0"},
		Templates: []*common.File{{Name: "templates/all.yaml", Data: []byte(`apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: busybox:1.36, volumeMounts: [{name: data, mountPath: /data}]}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: cache
spec:
  replicas: 1
  serviceName: cache
  persistentVolumeClaimRetentionPolicy: {whenDeleted: Delete}
  selector: {matchLabels: {app: cache}}
  template:
    metadata: {labels: {app: cache}}
    spec:
      containers: [{name: cache, image: busybox:1.36, volumeMounts: [{name: data, mountPath: /data}]}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: kept
  annotations: {helm.sh/resource-policy: keep}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: removed
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: taken
`)}},
	}
	s := f.spec(nil)
	st := &Status{}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := f.engine.Reconcile(ctx, &Request{Spec: s, Chart: c, Values: map[string]any{}, Status: st}, nil); err != nil {
		t.Fatal(err)
	}
	// Taken over by another release since (as `helm install
	// --take-ownership` does).
	patch := []byte(`{"metadata":{"annotations":{"meta.helm.sh/release-name":"other"}}}`)
	if _, err := f.cs.CoreV1().ConfigMaps(f.ns).Patch(ctx, "taken", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	left, err := f.engine.Uninstall(ctx, s, st)
	if err != nil {
		t.Fatal(err)
	}
	claim := fmt.Sprintf(whyVolumeClaim, "db")
	want := []LeftBehind{
		{Object: "ConfigMap " + f.ns + "/kept", Why: whyResourcePolicy},
		{Object: "PersistentVolumeClaim " + f.ns + "/data-db-0", Why: claim},
		{Object: "PersistentVolumeClaim " + f.ns + "/data-db-1", Why: claim},
		{Object: "ConfigMap " + f.ns + "/taken", Why: whyNotOwned},
	}
	if !slices.Equal(left, want) {
		t.Errorf("left behind:\n%v\nwant:\n%v", left, want)
	}
	for _, name := range []string{"data-db-0", "data-db-1"} {
		if _, err := f.cs.CoreV1().PersistentVolumeClaims(f.ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("claim %s: %v (the list must name what exists)", name, err)
		}
	}
	var cm *corev1.ConfigMap
	if cm, err = f.cs.CoreV1().ConfigMaps(f.ns).Get(ctx, "removed", metav1.GetOptions{}); err == nil {
		t.Errorf("ConfigMap %s survived the uninstall", cm.Name)
	}
}
