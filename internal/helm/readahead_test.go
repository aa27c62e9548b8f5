package helm

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	k8s "github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
)

// objectGETs counts the GETs of single ConfigMaps that reach the API
// server, by name, and holds the GET of held until the GET of awaited has
// come as often: a scan that sends one GET after another waits for ever
// there (the test fails after a minute); one that reads ahead goes on.
type objectGETs struct {
	mu            sync.Mutex
	cond          *sync.Cond
	count         map[string]int
	held, awaited string
	stuck         bool
}

func newObjectGETs(held, awaited string) *objectGETs {
	g := &objectGETs{count: map[string]int{}, held: held, awaited: awaited}
	g.cond = sync.NewCond(&g.mu)
	return g
}

func (g *objectGETs) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		_, name, ok := strings.Cut(r.URL.Path, "/configmaps/")
		if r.Method != http.MethodGet || r.URL.RawQuery != "" || !ok {
			return rt.RoundTrip(r)
		}
		g.mu.Lock()
		g.count[name]++
		n := g.count[name]
		g.cond.Broadcast()
		if name == g.held {
			deadline := time.AfterFunc(time.Minute, func() {
				g.mu.Lock()
				g.stuck = true
				g.cond.Broadcast()
				g.mu.Unlock()
			})
			for g.count[g.awaited] < n && !g.stuck {
				g.cond.Wait()
			}
			deadline.Stop()
		}
		g.mu.Unlock()
		return rt.RoundTrip(r)
	})
}

func (g *objectGETs) counts() (map[string]int, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[string]int, len(g.count))
	for k, v := range g.count {
		out[k] = v
	}
	return out, g.stuck
}

// TestReadAheadOwnershipChecks: the GETs Helm sends object by object —
// the install's check that no object exists, the uninstall's check that
// each is the release's — are sent ahead in parallel (the GET of cm-2 is
// held until that of cm-6 is sent) and once each, with Helm's outcomes:
// an install that finds an object of no release fails as Helm says and
// creates nothing; an uninstall leaves the object another release owns.
func TestReadAheadOwnershipChecks(t *testing.T) {
	ns := fmt.Sprintf("helm-read-ahead-%d", time.Now().UnixNano()%1e6)
	newTestClient(t, ns) // the namespace
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(testRESTConfig)
	gets := newObjectGETs("cm-2", "cm-6")
	cfg := rest.CopyConfig(testRESTConfig)
	cfg.QPS, cfg.Burst = 1000, 1000
	cfg.Wrap(gets.wrap)
	c, err := NewClient(ClientOptions{Getter: k8s.NewGetter(cfg, ns, ""), StorageNamespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{{ range until 30 }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm-{{ . }}
  namespace: %s
{{ end }}`, ns)

	// An object of no release in the way.
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm-20"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = c.Install(ctx, manyConfigMaps("1.0.0", body), nil, InstallOptions{ReleaseName: "many", Namespace: ns, Timeout: time.Minute})
	want := fmt.Sprintf(`ConfigMap "cm-20" in namespace %q exists and cannot be imported into the current release`, ns)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("install over a ConfigMap of no release: %v, want an error with %q", err, want)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "cm-0", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the refused install created cm-0 (%v)", err)
	}
	counts, stuck := gets.counts()
	if stuck {
		t.Fatal("the install's check read cm-2 before cm-6: no GET was sent ahead")
	}
	for i := range 21 {
		if n := counts[fmt.Sprintf("cm-%d", i)]; n != 1 {
			t.Errorf("the install's check read cm-%d %d times, want once", i, n)
		}
	}

	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "cm-20", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Install(ctx, manyConfigMaps("1.0.0", body), nil, InstallOptions{ReleaseName: "many", Namespace: ns, Timeout: time.Minute, Replace: true}); err != nil {
		t.Fatal(err)
	}
	// Another release's now.
	other, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "cm-9", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	other.Annotations["meta.helm.sh/release-name"] = "other"
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, other, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	before, _ := gets.counts()
	out, err := c.Uninstall("many", UninstallOptions{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.NotOwned) != 1 || out.NotOwned[0] != "ConfigMap cm-9" {
		t.Errorf("uninstall left %v, want [ConfigMap cm-9]", out.NotOwned)
	}
	after, stuck := gets.counts()
	if stuck {
		t.Fatal("the uninstall's check read cm-2 before cm-6: no GET was sent ahead")
	}
	for i := range 30 {
		name := fmt.Sprintf("cm-%d", i)
		if n := after[name] - before[name]; n != 1 {
			t.Errorf("the uninstall's check read %s %d times, want once", name, n)
		}
	}
	list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, cm := range list.Items {
		if strings.HasPrefix(cm.Name, "cm-") {
			left = append(left, cm.Name)
		}
	}
	if len(left) != 1 || left[0] != "cm-9" {
		t.Errorf("after the uninstall, ConfigMaps %v are left, want [cm-9]", left)
	}
}

// TestReadAheadIsNeverStale: what was read ahead is given only to the GET
// a sequential scan sends next, and only while nothing was written
// through the client: after a write, or to a GET out of order, the API
// server answers.
func TestReadAheadIsNeverStale(t *testing.T) {
	ns := fmt.Sprintf("helm-read-ahead-stale-%d", time.Now().UnixNano()%1e6)
	c, _, _ := newTestClient(t, ns)
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(testRESTConfig)
	var b strings.Builder
	for i := range 8 {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\n  namespace: %s\n", i, ns)
	}
	list, err := c.kube.Build(strings.NewReader(b.String()), false)
	if err != nil {
		t.Fatal(err)
	}
	get := func(i int) error {
		t.Helper()
		_, err := resource.NewHelper(list[i].Client, list[i].Mapping).Get(ns, list[i].Name)
		return err
	}
	exists := func(i int) bool {
		t.Helper()
		err := get(i)
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}
	create := func(i int) {
		t.Helper()
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: list[i].Name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// A scan: cm-0, cm-1 read cm-2 … cm-7 ahead; cm-5 created behind the
	// client's back, then read out of order.
	exists(0)
	exists(1)
	create(5)
	if !exists(5) {
		t.Error("a GET out of order was answered from what was read ahead: cm-5 not found")
	}
	// Another scan; a write through the client drops what was read ahead.
	exists(0)
	exists(1)
	if _, err := resource.NewHelper(list[3].Client, list[3].Mapping).Create(ns, false, list[3].Object); err != nil {
		t.Fatal(err)
	}
	exists(2)
	if !exists(3) {
		t.Error("a GET after a write through the client was answered from what was read ahead: cm-3 not found")
	}
}
