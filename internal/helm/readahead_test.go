package helm

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	k8s "github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
)

// objectGETs counts the GETs of single ConfigMaps that reach the API
// server, by name, and the lists of ConfigMaps, and holds the GET of held
// until the GET of awaited has come as often: a scan that sends one GET
// after another waits for ever there (the test fails after a minute); one
// that reads ahead goes on.
type objectGETs struct {
	mu            sync.Mutex
	cond          *sync.Cond
	count         map[string]int
	lists         int
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
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/configmaps") && r.URL.Query().Get("watch") == "" {
			g.mu.Lock()
			g.lists++
			g.mu.Unlock()
		}
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

// client is a Client of namespace ns whose requests g sees.
func (g *objectGETs) client(t *testing.T, ns string) *Client {
	t.Helper()
	cfg := rest.CopyConfig(testRESTConfig)
	cfg.QPS, cfg.Burst = 1000, 1000
	cfg.Wrap(g.wrap)
	c, err := NewClient(ClientOptions{Getter: k8s.NewGetter(cfg, ns, ""), StorageNamespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sent is what reached the API server: GETs by name, lists, and whether a
// held GET waited in vain.
type sent struct {
	gets  map[string]int
	lists int
	stuck bool
}

func (g *objectGETs) sent() sent {
	g.mu.Lock()
	defer g.mu.Unlock()
	return sent{gets: maps.Clone(g.count), lists: g.lists, stuck: g.stuck}
}

// since is what was sent after before.
func (s sent) since(before sent) sent {
	out := sent{gets: map[string]int{}, lists: s.lists - before.lists, stuck: s.stuck}
	for k, v := range s.gets {
		if d := v - before.gets[k]; d > 0 {
			out.gets[k] = d
		}
	}
	return out
}

// TestReadAheadOwnershipChecks: the reads Helm sends object by object —
// the install's check that no object exists, the uninstall's check that
// each is the release's — are sent ahead: 12 ConfigMaps by GETs in
// parallel (the GET of cm-2 is held until that of cm-6 is sent), once
// each; 40 by one list. Helm's outcomes are the same: an install that
// finds an object of no release fails as Helm says and creates nothing;
// an uninstall leaves the object another release owns.
func TestReadAheadOwnershipChecks(t *testing.T) {
	for _, n := range []int{12, listFrom + 24} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			ns := fmt.Sprintf("helm-read-ahead-%d-%d", n, time.Now().UnixNano()%1e6)
			newTestClient(t, ns) // the namespace
			ctx := context.Background()
			cs := kubernetes.NewForConfigOrDie(testRESTConfig)
			gets := newObjectGETs("cm-2", "cm-6")
			c := gets.client(t, ns)
			body := fmt.Sprintf(`{{ range until %d }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm-{{ . }}
  namespace: %s
{{ end }}`, n, ns)
			listed := n >= listFrom
			// checkSent: the scan over names read each ahead, one by one or
			// by one list.
			checkSent := func(what string, s sent, names int) {
				t.Helper()
				if s.stuck {
					t.Fatalf("%s read cm-2 before cm-6: no GET was sent ahead", what)
				}
				if listed {
					if s.lists != 1 || len(s.gets) > 2 {
						t.Errorf("%s sent %d lists and GETs of %v, want one list and at most the GETs of cm-0 and cm-1", what, s.lists, s.gets)
					}
					return
				}
				for i := range names {
					if got := s.gets[fmt.Sprintf("cm-%d", i)]; got != 1 {
						t.Errorf("%s read cm-%d %d times, want once", what, i, got)
					}
				}
			}

			// An object of no release in the way.
			conflict := n - 2
			if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", conflict)}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			_, err := c.Install(ctx, manyConfigMaps("1.0.0", body), nil, InstallOptions{ReleaseName: "many", Namespace: ns, Timeout: time.Minute})
			want := fmt.Sprintf(`ConfigMap "cm-%d" in namespace %q exists and cannot be imported into the current release`, conflict, ns)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("install over a ConfigMap of no release: %v, want an error with %q", err, want)
			}
			if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "cm-0", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Fatalf("the refused install created cm-0 (%v)", err)
			}
			checkSent("the install's check", gets.sent(), conflict+1)

			if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, fmt.Sprintf("cm-%d", conflict), metav1.DeleteOptions{}); err != nil {
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
			before := gets.sent()
			out, err := c.Uninstall("many", UninstallOptions{Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if len(out.NotOwned) != 1 || out.NotOwned[0] != "ConfigMap cm-9" {
				t.Errorf("uninstall left %v, want [ConfigMap cm-9]", out.NotOwned)
			}
			checkSent("the uninstall's check", gets.sent().since(before), n)
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
		})
	}
}

// TestReadAheadIsNeverStale: what was read ahead, by GETs or by a list, is
// given only to the GET a sequential scan sends next, and only while
// nothing was written through the client: after a write, or to a GET out
// of order, the API server answers. What a list found of an object is what
// a GET answers, and what it did not find is not found as the API server
// says it.
func TestReadAheadIsNeverStale(t *testing.T) {
	for _, n := range []int{8, listFrom + 4} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			ns := fmt.Sprintf("helm-read-ahead-stale-%d-%d", n, time.Now().UnixNano()%1e6)
			c, _, _ := newTestClient(t, ns)
			ctx := context.Background()
			cs := kubernetes.NewForConfigOrDie(testRESTConfig)
			var b strings.Builder
			for i := range n {
				fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\n  namespace: %s\ndata:\n  k: v%d\n", i, ns, i)
			}
			list, err := c.kube.Build(strings.NewReader(b.String()), false)
			if err != nil {
				t.Fatal(err)
			}
			get := func(i int) (runtime.Object, error) {
				t.Helper()
				return resource.NewHelper(list[i].Client, list[i].Mapping).Get(ns, list[i].Name)
			}
			exists := func(i int) bool {
				t.Helper()
				_, err := get(i)
				if err != nil && !apierrors.IsNotFound(err) {
					t.Fatal(err)
				}
				return err == nil
			}
			create := func(i int) {
				t.Helper()
				if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: list[i].Name}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			// Not found as the API server says it, read ahead or not.
			_, direct := cs.CoreV1().ConfigMaps(ns).Get(ctx, "cm-3", metav1.GetOptions{})
			exists(0)
			exists(1)
			exists(2)
			if _, err := get(3); !apierrors.IsNotFound(err) || err.Error() != direct.Error() {
				t.Errorf("cm-3 read ahead: %v, want %v", err, direct)
			}
			// A scan: cm-0, cm-1 read the others ahead; cm-5 created
			// behind the client's back, then read out of order.
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
			// What was read ahead of an object is the object as a GET has it.
			exists(0)
			exists(1)
			exists(2)
			if !exists(3) {
				t.Error("a scan after a write through the client was answered from what was read before it: cm-3 not found")
			}
			exists(4)
			got, err := get(5)
			if err != nil {
				t.Fatal(err)
			}
			want, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "cm-5", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			u := got.(*unstructured.Unstructured)
			if u.GetAPIVersion() != "v1" || u.GetKind() != "ConfigMap" || u.GetResourceVersion() != want.ResourceVersion || u.GetUID() != want.UID {
				t.Errorf("cm-5 read ahead: %s %s rv %s uid %s, want v1 ConfigMap rv %s uid %s", u.GetAPIVersion(), u.GetKind(), u.GetResourceVersion(), u.GetUID(), want.ResourceVersion, want.UID)
			}
			if data, _, _ := unstructured.NestedStringMap(u.Object, "data"); data["k"] != "v" {
				t.Errorf("cm-5 read ahead has data %v, want k: v", data)
			}
		})
	}
}

// TestReadAheadUpdateByList: an upgrade's read of each object before it
// writes it is answered by one list of the kind, and tells Helm which
// objects it creates as the API server would: an upgrade that fails at a
// later kind, with CleanupOnFail, deletes the ConfigMaps it created and
// keeps those it changed. A client-side upgrade still reads each object it
// patches, for the patch.
func TestReadAheadUpdateByList(t *testing.T) {
	for _, ssa := range []bool{true, false} {
		t.Run(fmt.Sprintf("server-side=%t", ssa), func(t *testing.T) {
			ns := fmt.Sprintf("helm-read-ahead-update-%t-%d", ssa, time.Now().UnixNano()%1e6)
			newTestClient(t, ns) // the namespace
			ctx := context.Background()
			cs := kubernetes.NewForConfigOrDie(testRESTConfig)
			gets := newObjectGETs("", "")
			c := gets.client(t, ns)
			body := func(n int, message, port string) string {
				return fmt.Sprintf(`{{ range until %d }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm-{{ . }}
data:
  message: %s
{{ end }}
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports: [{port: %s}]
`, n, message, port)
			}
			if _, err := c.Install(ctx, manyConfigMaps("1.0.0", body(30, "one", "80")), nil, InstallOptions{ReleaseName: "many", Namespace: ns, Timeout: time.Minute, ServerSideApply: ssa}); err != nil {
				t.Fatal(err)
			}
			before := gets.sent()
			// cm-30 … cm-39 are new; the Service's port is refused.
			_, err := c.Upgrade(ctx, "many", manyConfigMaps("1.0.1", body(40, "two", "99999")), nil, UpgradeOptions{Namespace: ns, Timeout: time.Minute, CleanupOnFail: true})
			if err == nil || !strings.Contains(err.Error(), "99999") {
				t.Fatalf("upgrade with a Service port of 99999: %v, want the API server's refusal", err)
			}
			// At most two lists (the check of the new objects, the update)
			// and the check's first two reads; client-side, the patch's
			// read of each object it changes.
			s := gets.sent().since(before)
			reads := 0
			for name, n := range s.gets {
				reads += n
				if n > 1 {
					t.Errorf("the upgrade read %s %d times", name, n)
				}
			}
			wantReads := 2
			if !ssa {
				wantReads += 30
			}
			if s.lists > 2 || reads > wantReads {
				t.Errorf("the upgrade sent %d lists and %d reads (%v), want at most 2 and %d", s.lists, reads, s.gets, wantReads)
			}
			list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			kept := map[string]string{}
			for _, cm := range list.Items {
				if strings.HasPrefix(cm.Name, "cm-") {
					kept[cm.Name] = cm.Data["message"]
				}
			}
			for i := range 40 {
				name := fmt.Sprintf("cm-%d", i)
				message, ok := kept[name]
				switch {
				case i < 30 && (!ok || message != "two"):
					t.Errorf("%s after the failed upgrade: found %t, message %q; want it kept, changed to two", name, ok, message)
				case i >= 30 && ok:
					t.Errorf("%s, created by the failed upgrade, is left; want it deleted by CleanupOnFail", name)
				}
			}
		})
	}
}

// TestReadAheadUpdateSeesItsWrites: in an update, what a list found of an
// object is not given to a read of it after it was written, or created in
// its kind, through the client.
func TestReadAheadUpdateSeesItsWrites(t *testing.T) {
	ns := fmt.Sprintf("helm-read-ahead-writes-%d", time.Now().UnixNano()%1e6)
	c, _, _ := newTestClient(t, ns)
	var b strings.Builder
	for i := range listFrom + 4 {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\n  namespace: %s\n", i, ns)
	}
	list, err := c.kube.Build(strings.NewReader(b.String()), false)
	if err != nil {
		t.Fatal(err)
	}
	helper := func(i int) *resource.Helper { return resource.NewHelper(list[i].Client, list[i].Mapping) }
	defer c.kube.reads.updating(list)()
	// The list is sent at the first read: none exists.
	if _, err := helper(0).Get(ns, list[0].Name); !apierrors.IsNotFound(err) {
		t.Fatalf("cm-0: %v, want not found", err)
	}
	for _, i := range []int{3, 5} {
		if _, err := helper(i).Create(ns, false, list[i].Object); err != nil {
			t.Fatal(err)
		}
		if _, err := helper(i).Get(ns, list[i].Name); err != nil {
			t.Errorf("cm-%d, created through the client after the list: %v", i, err)
		}
	}
	if _, err := helper(4).Get(ns, list[4].Name); !apierrors.IsNotFound(err) {
		t.Errorf("cm-4: %v, want not found", err)
	}
}
