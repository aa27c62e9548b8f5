package helm

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	releasecommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testcluster"
)

var testRESTConfig *rest.Config

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
	if testing.Short() {
		return m.Run()
	}
	kubeconfig, stop, err := testcluster.ForTests(os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop()
	if testRESTConfig, err = clientcmd.BuildConfigFromFlags("", kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// testChart is a chart with a Deployment and a test pod, which fails when
// the value failTest is true: on the local test cluster by its label, on a
// real cluster (kind) by its exit code.
func testChart(version string) *chart.Chart {
	file := func(name, data string) *common.File { return &common.File{Name: name, Data: []byte(data)} }
	return &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: "v2", Name: "web", Version: version},
		Values:   map[string]any{"replicas": 1, "failTest": false},
		Templates: []*common.File{
			file("templates/deployment.yaml", `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels: {app: {{ .Release.Name }}}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}}
    spec:
      containers: [{name: web, image: busybox:1.36, command: [sleep, "3600"]}]
`),
			file("templates/test.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-test
  annotations:
    helm.sh/hook: test
    helm.sh/hook-delete-policy: before-hook-creation
  {{- if .Values.failTest }}
  labels:
    `+testcluster.FailLabel+`: "true"
  {{- end }}
spec:
  restartPolicy: Never
  containers:
  - name: test
    image: busybox:1.36
    command: [sh, -c, {{ if .Values.failTest }}"exit 1"{{ else }}"exit 0"{{ end }}]
`),
		},
	}
}

func newTestClient(t *testing.T, namespace string) (*Client, *LogBuffer, *[]*Release) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a cluster")
	}
	cs := kubernetes.NewForConfigOrDie(testRESTConfig)
	_, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), namespace, metav1.DeleteOptions{})
	})
	logs := NewLogBuffer(20, nil)
	var mu sync.Mutex
	var observed []*Release
	c, err := NewClient(ClientOptions{
		Getter:           kube.NewGetter(testRESTConfig, namespace, ""),
		StorageNamespace: namespace,
		Log:              logs,
		Observe: func(r *Release) {
			mu.Lock()
			defer mu.Unlock()
			observed = append(observed, r)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c, logs, &observed
}

// TestClientLifecycle runs every action of the thin layer against the cluster.
func TestClientLifecycle(t *testing.T) {
	const ns = "helm-client-lifecycle"
	c, logs, observed := newTestClient(t, ns)
	ctx := context.Background()
	if rel, err := c.LastRelease("web"); err != nil || rel != nil {
		t.Fatalf("LastRelease of nothing = %v, %v", rel, err)
	}

	rel, err := c.Install(ctx, testChart("1.0.0"), map[string]any{"replicas": 2}, InstallOptions{
		ReleaseName: "web", Namespace: ns, Timeout: time.Minute, Wait: true, WaitForJobs: true, TakeOwnership: true,
	})
	if err != nil {
		t.Fatalf("install: %v\n%s", err, logs)
	}
	if rel.Info.Status != releasecommon.StatusDeployed || rel.Version != 1 {
		t.Fatalf("installed release %s v%d", rel.Info.Status, rel.Version)
	}
	// What the wait waited for: the pods ready. (The Deployment's own
	// status counts them a moment after its ReplicaSet's, which Helm reads.)
	cs := kubernetes.NewForConfigOrDie(testRESTConfig)
	if ready := readyPods(ctx, t, cs, ns); ready != 2 {
		t.Fatalf("after a waited install %d of the Deployment's 2 pods are ready", ready)
	}
	if len(*observed) < 2 || (*observed)[len(*observed)-1].Info.Status != releasecommon.StatusDeployed {
		t.Errorf("observer saw %d writes, the last not deployed", len(*observed))
	}

	tested, err := c.Test("web", TestOptions{Namespace: ns, Timeout: time.Minute})
	if err != nil {
		t.Fatalf("test: %v\n%s", err, logs)
	}
	if phase := testPhase(tested); phase != release.HookPhaseSucceeded {
		t.Errorf("test phase %s, want Succeeded", phase)
	}

	if _, err := c.Upgrade(ctx, "web", testChart("1.1.0"), map[string]any{"failTest": true}, UpgradeOptions{
		Namespace: ns, Timeout: time.Minute, Wait: true, MaxHistory: 5,
	}); err != nil {
		t.Fatalf("upgrade: %v\n%s", err, logs)
	}
	// An upgrade given no values resets them, as helm-controller's does:
	// Helm would take the previous revision's.
	if dry, err := c.Upgrade(ctx, "web", testChart("1.1.0"), nil, UpgradeOptions{Namespace: ns, Timeout: time.Minute, DryRun: true}); err != nil {
		t.Errorf("a dry-run upgrade without values: %v", err)
	} else if len(dry.Config) != 0 {
		t.Errorf("a dry-run upgrade without values took the previous revision's: %v", dry.Config)
	}
	tested, err = c.Test("web", TestOptions{Namespace: ns, Timeout: time.Minute})
	if err == nil {
		t.Error("a test pod labelled to fail passed")
	}
	if phase := testPhase(tested); phase != release.HookPhaseFailed {
		t.Errorf("test phase %s, want Failed", phase)
	}
	if _, err := c.Test("web", TestOptions{Namespace: ns, Timeout: time.Minute, Exclude: []string{"web-test"}}); err != nil {
		t.Errorf("excluding the failing test still failed: %v", err)
	}

	if err := c.Rollback("web", RollbackOptions{Timeout: time.Minute, Wait: true, MaxHistory: 5}); err != nil {
		t.Fatalf("rollback: %v\n%s", err, logs)
	}
	last, err := c.LastRelease("web")
	if err != nil || last.Version != 3 || last.Chart.Metadata.Version != "1.0.0" {
		t.Fatalf("after rollback the last release is %+v (%v)", last, err)
	}
	history, err := c.History("web")
	if err != nil || len(history) != 3 {
		t.Fatalf("history has %d releases (%v), want 3", len(history), err)
	}

	if _, err := c.Uninstall("web", UninstallOptions{Timeout: time.Minute, Wait: true, KeepHistory: true}); err != nil {
		t.Fatalf("uninstall: %v", err)
	}
	if last, _ := c.LastRelease("web"); last == nil || last.Info.Status != releasecommon.StatusUninstalled {
		t.Errorf("after uninstall keeping history, the last release is %v", last)
	}
	if _, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); err == nil {
		t.Error("the Deployment survived the uninstall")
	}
	if _, err := c.Uninstall("absent", UninstallOptions{Timeout: time.Minute}); !IsReleaseNotFound(err) {
		t.Errorf("uninstalling a missing release: %v, want not found", err)
	}
}

func testPhase(rel *Release) release.HookPhase {
	if rel == nil {
		return release.HookPhaseUnknown
	}
	for _, h := range rel.Hooks {
		for _, e := range h.Events {
			if e == release.HookTest {
				return h.LastRun.Phase
			}
		}
	}
	return release.HookPhaseUnknown
}

// TestDryRunInstallReadsNoObject: a dry-run install that takes ownership
// does not read each object of the release (Helm would, to learn which
// exist, and not use the answer), yet an object of a kind the cluster does
// not serve is still an error; without taking ownership, an object that
// exists and is not the release's still refuses the install.
func TestDryRunInstallReadsNoObject(t *testing.T) {
	ns := fmt.Sprintf("helm-client-dry-run-%d", time.Now().UnixNano()%1e6)
	newTestClient(t, ns) // the namespace
	var reads atomic.Int64
	cfg := seeingRequests(func(r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/deployments") {
			reads.Add(1)
		}
	})
	c, err := NewClient(ClientOptions{Getter: kube.NewGetter(cfg, ns, ""), StorageNamespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dry := InstallOptions{ReleaseName: "web", Namespace: ns, TakeOwnership: true, Replace: true, DryRun: true}
	rel, err := c.Install(ctx, testChart("1.0.0"), nil, dry)
	if err != nil || !strings.Contains(rel.Manifest, "kind: Deployment") {
		t.Fatalf("dry-run install: %v", err)
	}
	if n := reads.Load(); n != 0 {
		t.Errorf("the dry run read the Deployment %d times", n)
	}

	unknown := testChart("1.0.0")
	unknown.Templates = append(unknown.Templates, &common.File{Name: "templates/unknown.yaml", Data: []byte("apiVersion: example.com/v1\nkind: Unserved\nmetadata: {name: x}\n")})
	if _, err := c.Install(ctx, unknown, nil, dry); err == nil || !strings.Contains(err.Error(), "Unserved") {
		t.Errorf("dry run of a kind the cluster does not serve: %v, want an error naming it", err)
	}

	cs := kubernetes.NewForConfigOrDie(testRESTConfig)
	var d appsv1.Deployment
	d.Name = "web"
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}}
	d.Spec.Template.Labels = map[string]string{"app": "other"}
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: "busybox:1.36"}}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, &d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dry.TakeOwnership = false
	if _, err := c.Install(ctx, testChart("1.0.0"), nil, dry); err == nil || !strings.Contains(err.Error(), "exists and cannot be imported") {
		t.Errorf("dry run over a Deployment of no release: %v, want Helm's conflict", err)
	}
}

// seeingRequests is the test cluster's configuration, calling see with
// every request before it is sent.
func seeingRequests(see func(*http.Request)) *rest.Config {
	cfg := rest.CopyConfig(testRESTConfig)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			see(r)
			return rt.RoundTrip(r)
		})
	})
	return cfg
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestWaitReadsItsOwnObjects: the wait for a release of a few objects in
// a namespace that holds many others reads the release's objects, not
// every object of their kinds in the namespace (as kstatus's caching
// reader does each poll): in a namespace many releases share, each
// release's wait would decode them all.
func TestWaitReadsItsOwnObjects(t *testing.T) {
	ns := fmt.Sprintf("helm-client-wait-reads-%d", time.Now().UnixNano()%1e6)
	newTestClient(t, ns) // the namespace
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(testRESTConfig)
	for i := range 3 {
		var d appsv1.Deployment
		d.Name = fmt.Sprintf("other-%d", i)
		d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": d.Name}}
		d.Spec.Template.Labels = map[string]string{"app": d.Name}
		d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: "busybox:1.36"}}
		if _, err := cs.AppsV1().Deployments(ns).Create(ctx, &d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var namespaceLists []string
	cfg := seeingRequests(func(r *http.Request) {
		// A list of a kind in the namespace with no label selector.
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/namespaces/"+ns+"/") && r.URL.Query().Get("labelSelector") == "" {
			if kind := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]; kind == "deployments" || kind == "replicasets" || kind == "pods" {
				mu.Lock()
				namespaceLists = append(namespaceLists, r.URL.Path)
				mu.Unlock()
			}
		}
	})
	c, err := NewClient(ClientOptions{Getter: kube.NewGetter(cfg, ns, ""), StorageNamespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	rel, err := c.Install(ctx, testChart("1.0.0"), nil, InstallOptions{ReleaseName: "web", Namespace: ns, Wait: true, Timeout: 2 * time.Minute, Poller: &Poller{Context: ctx}})
	if err != nil {
		t.Fatalf("install with the poller's wait: %v", err)
	}
	if rel.Info.Status != "deployed" {
		t.Fatalf("release %s, want deployed", rel.Info.Status)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(namespaceLists) > 0 {
		t.Errorf("the wait for one Deployment listed every object of its kinds in the namespace %d times: %v", len(namespaceLists), namespaceLists[:min(len(namespaceLists), 5)])
	}
}

// TestValidationLearntOncePerCluster: the clients of one cluster's
// releases learn once which kinds the API server validates: the first
// release's install reads an OpenAPI document for its custom resource,
// the next release's reads none (kubectl's validator, made
// for every Build, parsed it for each release). Built-in kinds read no
// document at all (TestBuiltinKindsValidateWithoutOpenAPI). That the
// server still refuses an unknown field is reconcile's
// TestInstallValidatedByTheServer.
func TestValidationLearntOncePerCluster(t *testing.T) {
	run := time.Now().UnixNano() % 1e6
	ns := fmt.Sprintf("helm-client-validation-%d", run)
	newTestClient(t, ns) // the namespace
	group := fmt.Sprintf("validation-%d.example.com", run)
	crds := dynamic.NewForConfigOrDie(testRESTConfig).Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	t.Cleanup(func() { _ = crds.Delete(context.Background(), "gadgets."+group, metav1.DeleteOptions{}) })
	var documents atomic.Int64
	cfg := seeingRequests(func(r *http.Request) {
		// The group-version's document, or the core group's, which
		// kubectl's verifier reads for a kind the index does not list yet.
		if strings.HasPrefix(r.URL.Path, "/openapi/v3/api") {
			documents.Add(1)
		}
	})
	shared := kube.NewDiscovery(cfg, "")
	ctx := context.Background()
	c := &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: "v2", Name: "gadget", Version: "1.0.0"},
		Files:    []*common.File{{Name: "crds/gadgets.yaml", Data: gadgetCRD(group)}},
		Templates: []*common.File{{Name: "templates/gadget.yaml", Data: []byte(`apiVersion: ` + group + `/v1
kind: Gadget
metadata:
  name: {{ .Release.Name }}
spec: {size: 1}
`)}},
	}
	install := func(name string) error {
		t.Helper()
		client, err := NewClient(ClientOptions{Getter: kube.NewGetter(cfg, ns, "", shared), StorageNamespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		_, err = client.Install(ctx, c, nil, InstallOptions{ReleaseName: name, Namespace: ns})
		return err
	}
	crdClient, err := NewClient(ClientOptions{Getter: kube.NewGetter(cfg, ns, "", shared), StorageNamespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	if err := crdClient.ApplyCRDs(c, CRDOptions{Timeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if err := install("first"); err != nil {
		t.Fatal(err)
	}
	first := documents.Load()
	if first == 0 {
		t.Fatal("the first install read no OpenAPI document for its custom resource: the check below proves nothing")
	}
	if err := install("second"); err != nil {
		t.Fatal(err)
	}
	if n := documents.Load() - first; n != 0 {
		t.Errorf("the second release's install read %d OpenAPI documents, want 0 (the first read %d)", n, first)
	}
}

// readyPods counts the pods of namespace ns whose Ready condition is true.
func readyPods(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns string) int {
	t.Helper()
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ready := 0
	for _, p := range pods.Items {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && p.DeletionTimestamp == nil {
				ready++
			}
		}
	}
	return ready
}
