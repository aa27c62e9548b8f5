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
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
)

// manyConfigMaps is a chart of version whose template is body.
func manyConfigMaps(version, body string) *chart.Chart {
	return &chart.Chart{
		Metadata:  &chart.Metadata{APIVersion: "v2", Name: "many", Version: version},
		Templates: []*common.File{{Name: "templates/objects.yaml", Data: []byte(body)}},
	}
}

// TestUpgradeAppliesAKindAtOnce: an upgrade applies a kind's objects in
// parallel, kinds in the manifest's order (the Namespace the upgrade
// adds before the ConfigMaps in it), changes and creates every object
// and deletes those the chart dropped; an upgrade one object of which
// the API server refuses fails naming it and deletes nothing.
func TestUpgradeAppliesAKindAtOnce(t *testing.T) {
	ns := fmt.Sprintf("helm-upgrade-parallel-%d", time.Now().UnixNano()%1e6)
	extra := ns + "-extra"
	newTestClient(t, ns) // the namespace
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(testRESTConfig)
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), extra, metav1.DeleteOptions{}) })
	var mu sync.Mutex
	var inFlight, mostInFlight int
	cfg := rest.CopyConfig(testRESTConfig)
	cfg.QPS, cfg.Burst = 1000, 1000 // as the provider's clients of a cluster that throttles by priority and fairness
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			counted := r.Method == http.MethodPatch && strings.Contains(r.URL.Path, "/configmaps/")
			if counted {
				mu.Lock()
				inFlight++
				mostInFlight = max(mostInFlight, inFlight)
				mu.Unlock()
				defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
			}
			return rt.RoundTrip(r)
		})
	})
	c, err := NewClient(ClientOptions{Getter: kube.NewGetter(cfg, ns, ""), StorageNamespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	configMaps := func(from, to int, namespace, message string) string {
		return fmt.Sprintf(`{{ range untilStep %d %d 1 }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm-{{ . }}
  namespace: %s
data:
  message: %s
{{ end }}`, from, to, namespace, message)
	}
	if _, err := c.Install(ctx, manyConfigMaps("1.0.0", configMaps(0, 40, ns, "one")), nil, InstallOptions{ReleaseName: "many", Namespace: ns, Timeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
	// Helm sorts the Namespace first, then keeps the ConfigMaps' order:
	// those in the new Namespace would be applied at once with it but for
	// the kinds' order.
	two := fmt.Sprintf(`
---
apiVersion: v1
kind: Namespace
metadata:
  name: %s
`, extra) + configMaps(0, 40, extra, "two") + configMaps(0, 35, ns, "two")
	mu.Lock()
	mostInFlight = 0
	mu.Unlock()
	rel, err := c.Upgrade(ctx, "many", manyConfigMaps("2.0.0", two), nil, UpgradeOptions{Namespace: ns, Timeout: time.Minute})
	if err != nil {
		t.Fatalf("upgrade adding a Namespace and what it holds: %v", err)
	}
	if rel.Info.Status != "deployed" {
		t.Errorf("release %s after the upgrade, want deployed", rel.Info.Status)
	}
	mu.Lock()
	if mostInFlight < 2 {
		t.Errorf("the upgrade applied at most %d ConfigMap at once, want a kind's objects in parallel", mostInFlight)
	}
	mu.Unlock()
	messages := func(namespace string) map[string]string {
		t.Helper()
		list, err := cs.CoreV1().ConfigMaps(namespace).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name!=kube-root-ca.crt"})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, cm := range list.Items {
			out[cm.Name] = cm.Data["message"]
		}
		return out
	}
	for namespace, want := range map[string]int{ns: 35, extra: 40} {
		got := messages(namespace)
		if len(got) != want {
			t.Errorf("%d ConfigMaps in %s after the upgrade, want %d", len(got), namespace, want)
		}
		for name, message := range got {
			if message != "two" {
				t.Errorf("ConfigMap %s/%s: message %q, want two", namespace, name, message)
			}
		}
	}

	// A name the API server refuses: the upgrade fails naming it, and the
	// ConfigMaps of extra, which the chart drops, are not deleted.
	three := configMaps(0, 35, ns, "three") + `
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: Refused_Name
data:
  message: three
`
	_, err = c.Upgrade(ctx, "many", manyConfigMaps("3.0.0", three), nil, UpgradeOptions{Namespace: ns, Timeout: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "Refused_Name") {
		t.Errorf("upgrade with a ConfigMap the API server refuses: %v, want an error naming it", err)
	}
	if got := messages(extra); len(got) != 40 {
		t.Errorf("%d ConfigMaps in %s after the failed upgrade, want the 40 it did not get to delete", len(got), extra)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "Refused_Name", metav1.GetOptions{}); !apierrors.IsNotFound(err) && !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
		t.Errorf("the refused ConfigMap: %v, want it not written", err)
	}
}
