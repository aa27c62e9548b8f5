package helm

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
)

// TestUninstallWaitsWithThePoller: an uninstall that waits, with the
// poller's strategy as the install, waits until every object is gone (a
// finalizer keeps one: the wait ends in its timeout, naming it) and reads
// a kind of many objects with a list each poll, not one read per object.
func TestUninstallWaitsWithThePoller(t *testing.T) {
	const objects, held = 60, "cm-7"
	ns := fmt.Sprintf("helm-uninstall-wait-%d", time.Now().UnixNano()%1e6)
	newTestClient(t, ns) // the namespace
	ctx := context.Background()
	var mu sync.Mutex
	reads, lists := map[string]int{}, 0
	cfg := seeingRequests(func(r *http.Request) {
		if r.Method != http.MethodGet || !strings.Contains(r.URL.Path, "/namespaces/"+ns+"/configmaps") {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if name, ok := strings.CutPrefix(r.URL.Path[strings.LastIndex(r.URL.Path, "/configmaps"):], "/configmaps/"); ok {
			reads[name]++
		} else {
			lists++
		}
	})
	c, err := NewClient(ClientOptions{Getter: kube.NewGetter(cfg, ns, ""), StorageNamespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	template := `{{ range until ` + fmt.Sprint(objects) + ` }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm-{{ . }}
  {{- if eq . 7 }}
  finalizers: [helmrelease.test/hold]
  {{- end }}
data:
  message: hello
{{ end }}`
	ch := &chart.Chart{
		Metadata:  &chart.Metadata{APIVersion: "v2", Name: "many", Version: "1.0.0"},
		Templates: []*common.File{{Name: "templates/configmaps.yaml", Data: []byte(template)}},
	}
	if _, err := c.Install(ctx, ch, nil, InstallOptions{ReleaseName: "many", Namespace: ns, Timeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	clear(reads)
	lists = 0
	mu.Unlock()
	_, err = c.Uninstall("many", UninstallOptions{Wait: true, Timeout: 3 * time.Second, Poller: &Poller{Context: ctx}})
	if err == nil || !strings.Contains(err.Error(), "ConfigMap "+ns+"/"+held) {
		t.Errorf("uninstall while a finalizer keeps ConfigMap %s: %v, want the wait's timeout naming it", held, err)
	}
	mu.Lock()
	// Helm's check that each object is the release's is answered by a list
	// once its reads come in order (readAhead: its first two go to the API
	// server); the wait lists them while many are left, then reads those
	// left.
	for name, n := range reads {
		if n > 1 && name != held {
			t.Errorf("the uninstall read ConfigMap %s %d times, want once", name, n)
		}
	}
	if len(reads) > 3 || lists < 2 {
		t.Errorf("the uninstall read %d ConfigMaps and listed them %d times; want a list for Helm's ownership check, one for the wait, and at most three reads", len(reads), lists)
	}
	mu.Unlock()
	cs := kubernetes.NewForConfigOrDie(testRESTConfig)
	left, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name!=kube-root-ca.crt"})
	if err != nil {
		t.Fatal(err)
	}
	if len(left.Items) != 1 || left.Items[0].Name != held || left.Items[0].DeletionTimestamp == nil {
		t.Errorf("ConfigMaps after the uninstall: %d, want only %s, being deleted", len(left.Items), held)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Patch(ctx, held, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, held, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap %s once its finalizer is removed: %v, want gone", held, err)
	}
}
