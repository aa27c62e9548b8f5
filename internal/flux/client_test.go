package flux

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testcluster"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testenv"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

var (
	testRESTConfig *rest.Config
	testKubeconfig string
)

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
	testKubeconfig = kubeconfig
	if testRESTConfig, err = clientcmd.BuildConfigFromFlags("", kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if testenv.FullSuite() {
		prebuildFlux()
	}
	return m.Run()
}

// prebuildFlux builds the controllers the tests start before any test
// runs, so that a first build does not spend a test's deadline. A build
// that fails is tried again by the test that needs it, which then says
// why it cannot run.
func prebuildFlux() {
	ctx, cancel := context.WithTimeout(context.Background(), testcluster.FluxBuildTimeout)
	defer cancel()
	if err := testcluster.BuildFluxForTests(ctx, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "flux: building the controllers before the tests:", err)
	}
}

// configMapChart renders a ConfigMap of the values message and password.
func configMapChart(version string) *chart.Chart {
	return &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: "v2", Name: "settings", Version: version},
		Values:   map[string]any{"message": "default", "password": ""},
		Templates: []*common.File{{Name: "templates/cm.yaml", Data: []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}
data:
  message: {{ .Values.message | quote }}
  password: {{ .Values.password | quote }}
`)}},
	}
}

// withFlux runs f against each helm-controller version of
// testcluster.FluxVersions, one at a time, each with source-controller.
func withFlux(t *testing.T, f func(t *testing.T)) { withFluxVersions(t, false, f) }

// withNewestFlux runs f against the newest helm-controller only, for what
// is source-controller's or the provider's alone.
func withNewestFlux(t *testing.T, f func(t *testing.T)) { withFluxVersions(t, true, f) }

func withFluxVersions(t *testing.T, newest bool, f func(t *testing.T)) {
	if testing.Short() {
		t.Skip("needs the test cluster")
	}
	testenv.FullSuiteOnly(t, "Flux's controllers, built from their sources")
	all, err := testcluster.FluxVersions()
	if err != nil {
		t.Fatal(err)
	}
	versions := all[testcluster.HelmController]
	if newest {
		versions = versions[len(versions)-1:]
	}
	for _, version := range versions {
		t.Run("helm-controller "+version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
			defer cancel()
			flux, err := testcluster.StartFluxWith(ctx, testcluster.FluxOptions{Kubeconfig: testKubeconfig, Dir: t.TempDir(), Log: os.Stderr}, version)
			if err != nil {
				testenv.SkipUnlessRequired(t, "needs Flux's controllers, built from the Go module proxy or from the archives "+testcluster.FluxSourcesEnv+" names: "+err.Error())
			}
			defer flux.Stop()
			defer func() {
				if t.Failed() {
					b, _ := os.ReadFile(flux.Logs[testcluster.HelmController])
					lines := strings.Split(strings.TrimSpace(string(b)), "\n")
					t.Logf("helm-controller's last log lines:\n%s", strings.Join(lines[max(0, len(lines)-30):], "\n"))
				}
			}()
			f(t)
		})
	}
}

// withFluxCRDs runs f against the CRDs of each helm-controller version
// of testcluster.FluxVersions (with the newest source-controller's),
// one at a time, no controller at work: for what the API server does
// with the objects the provider writes.
func withFluxCRDs(t *testing.T, f func(t *testing.T)) {
	if testing.Short() {
		t.Skip("needs the test cluster")
	}
	all, err := testcluster.FluxVersions()
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range all[testcluster.HelmController] {
		t.Run("helm-controller "+version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			if err := testcluster.InstallFluxCRDs(ctx, testKubeconfig, version, os.Stderr); err != nil {
				testenv.SkipUnlessRequired(t, "needs the sources of Flux's controllers, from the Go module proxy or from the archives "+testcluster.FluxSourcesEnv+" names: "+err.Error())
			}
			f(t)
		})
	}
}

// ownCluster starts a cluster for t alone, stopped when t ends, for
// tests that change what is cluster-wide (CRDs): its kubeconfig and
// configuration.
func ownCluster(ctx context.Context, t *testing.T) (kubeconfig string, cfg *rest.Config) {
	t.Helper()
	bin, err := testcluster.Build(ctx, testcluster.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := testcluster.Start(ctx, testcluster.Options{BinDir: bin, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	if cfg, err = clientcmd.BuildConfigFromFlags("", c.Kubeconfig); err != nil {
		t.Fatal(err)
	}
	return c.Kubeconfig, cfg
}

func newNamespace(t *testing.T, cs kubernetes.Interface) string {
	t.Helper()
	name := strings.NewReplacer("/", "-", " ", "-", ".", "-", "_", "-").Replace(strings.ToLower("flux-" + t.Name()))
	if len(name) > 60 {
		name = name[len(name)-60:]
	}
	name = strings.Trim(name, "-")
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	return name
}

// TestControllerLifecycle: a release handed to the controller from a Helm
// repository and from an OCI registry, both with credentials and
// sensitive values, is installed as written, upgraded with new values,
// then deleted: uninstalled, or with uninstall off left running.
func TestControllerLifecycle(t *testing.T) {
	withFlux(t, func(t *testing.T) {
		cs := kubernetes.NewForConfigOrDie(testRESTConfig)
		e, err := New(testRESTConfig)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.CheckCRDs(); err != nil {
			t.Fatal(err)
		}
		httpRepo := testrepo.NewHTTP(t)
		httpRepo.Add(t, configMapChart("1.0.0"), nil)
		oci := testrepo.NewOCI(t)
		oci.Push(t, configMapChart("1.0.0"), nil)
		for _, tc := range []struct {
			name      string
			src       chartsource.Source
			uninstall bool
		}{
			{"helm repository", chartsource.Source{Name: "settings", Repository: httpRepo.URL, Auth: chartsource.Auth{Username: testrepo.Username, Password: testrepo.Password}}, true},
			{"oci registry", chartsource.Source{Name: "settings", Repository: oci.URL, Auth: chartsource.Auth{Username: testrepo.Username, Password: testrepo.Password, CAFile: oci.CAFile}}, false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ns := newNamespace(t, cs)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				defer cancel()
				resolved, err := chartsource.NewRepositories(t.TempDir(), 0).Version(ctx, tc.src)
				if err != nil {
					t.Fatal(err)
				}
				var objs *Objects
				st := &reconcile.Status{}
				noRelease := func() (*helm.Release, error) { return nil, nil } // a new namespace's
				apply := func(message string, create bool) {
					t.Helper()
					r := &Release{
						Spec:            &reconcile.Spec{Name: "app", Namespace: ns},
						Chart:           Chart{Source: tc.src, Version: resolved.Version, Digest: resolved.Digest},
						Values:          map[string]any{"message": message, "password": "overridden"},
						SensitiveValues: map[string]any{"password": "hunter2"},
					}
					objs, err = Build(r)
					if err != nil {
						t.Fatal(err)
					}
					if strings.Contains(string(objs.HelmRelease.Spec.Values.Raw), "hunter2") || strings.Contains(string(objs.HelmRelease.Spec.Values.Raw), "overridden") {
						t.Fatalf("spec.values holds what sensitive values set: %s", objs.HelmRelease.Spec.Values.Raw)
					}
					composed := map[string]any{"message": message, "password": "hunter2"}
					res, err := e.Run(ctx, r, RunOptions{Create: create, LastRelease: noRelease, Status: st, Want: Want{ChartVersion: resolved.Version, ConfigDigest: ConfigDigest(composed)}})
					if err != nil {
						t.Fatal(err)
					}
					st = res.Status
					if ready := st.Condition(reconcile.ConditionReady); ready == nil || !ready.Status || st.Latest() == nil || st.Latest().Status != "deployed" {
						t.Fatalf("status after the run: %+v, want ready with a deployed revision", st)
					}
					cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "app", metav1.GetOptions{})
					if err != nil {
						t.Fatal(err)
					}
					if cm.Data["message"] != message || cm.Data["password"] != "hunter2" {
						t.Fatalf("ConfigMap data %v, want message %q and the sensitive password", cm.Data, message)
					}
				}
				apply("first", true)
				// A create of the name now finds the HelmRelease, and writes
				// nothing.
				before, err := e.Get(ctx, ns, "app")
				if err != nil {
					t.Fatal(err)
				}
				var exists *ExistsError
				if _, err := e.Run(ctx, &Release{Spec: &reconcile.Spec{Name: "app", Namespace: ns}, Chart: Chart{Source: tc.src, Version: resolved.Version}}, RunOptions{Create: true, LastRelease: noRelease, Status: &reconcile.Status{}}); !errors.As(err, &exists) {
					t.Fatalf("a second create of the name: %v, want ExistsError", err)
				}
				if after, err := e.Get(ctx, ns, "app"); err != nil || after.Generation != before.Generation {
					t.Fatalf("after the refused create the HelmRelease is at generation %d (%v), want %d", after.Generation, err, before.Generation)
				}
				apply("second", false)
				if len(st.History) != 2 {
					t.Errorf("history after the upgrade: %d revisions, want 2", len(st.History))
				}
				if err := e.Delete(ctx, ns, "app", tc.uninstall, 2*time.Minute); err != nil {
					t.Fatal(err)
				}
				releases, err := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm,name=app"})
				if err != nil {
					t.Fatal(err)
				}
				_, cmErr := cs.CoreV1().ConfigMaps(ns).Get(ctx, "app", metav1.GetOptions{})
				switch {
				case tc.uninstall && (len(releases.Items) > 0 || !apierrors.IsNotFound(cmErr)):
					t.Errorf("after delete with uninstall: %d storage Secrets, ConfigMap error %v; want none and not found", len(releases.Items), cmErr)
				case !tc.uninstall && (len(releases.Items) != 2 || cmErr != nil):
					t.Errorf("after delete without uninstall: %d storage Secrets, ConfigMap error %v; want the 2 revisions and the ConfigMap", len(releases.Items), cmErr)
				}
				// Its source and Secrets go with it: a shared source too,
				// which no other release uses.
				for _, name := range []string{ValuesName("app"), objs.Credentials.Name} {
					if _, err := cs.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
						t.Errorf("Secret %s after delete: %v, want not found", name, err)
					}
				}
				// Deleted: gone once source-controller has removed its
				// finalizer.
				if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
					err := e.Kube.Get(ctx, client.ObjectKeyFromObject(objs.Source), objs.Source)
					return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
				}); err != nil {
					t.Errorf("source %s after delete: %v (deletion requested: %t), want not found", objs.Source.GetName(), err, objs.Source.GetDeletionTimestamp() != nil)
				}
			})
		}
	})
}

// TestCheckCRDs: on a cluster without Flux, the client names the kinds
// missing; once the controllers' CRDs are installed, the same client (a
// provider process that outlives the install) finds them.
func TestCheckCRDs(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a cluster of its own")
	}
	all, err := testcluster.FluxVersions()
	if err != nil {
		t.Fatal(err)
	}
	versions := all[testcluster.HelmController]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	kubeconfig, cfg := ownCluster(ctx, t)
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = e.CheckCRDs()
	if !errors.Is(err, ErrCRDsMissing) || !strings.Contains(err.Error(), "HelmRelease") || !strings.Contains(err.Error(), "OCIRepository") {
		t.Fatalf("CheckCRDs on a cluster without Flux: %v, want ErrCRDsMissing naming the kinds", err)
	}
	if err := testcluster.InstallFluxCRDs(ctx, kubeconfig, versions[0], os.Stderr); err != nil {
		testenv.SkipUnlessRequired(t, "needs the sources of Flux's controllers, from the Go module proxy or from the archives "+testcluster.FluxSourcesEnv+" names: "+err.Error())
	}
	if err := e.CheckCRDs(); err != nil {
		t.Errorf("CheckCRDs once the CRDs are installed: %v", err)
	}
	// The fields each helm-controller minor version added to the
	// HelmRelease, at any depth, through lists' elements.
	since := map[string]int{
		"dependsOn.readyExpr":             4,
		"healthCheckExprs":                5,
		"install.serverSideApply":         5,
		"upgrade.serverSideApply":         5,
		"rollback.serverSideApply":        5,
		"postRenderStrategy":              6,
		"upgrade.chartNameChangeStrategy": 6,
		"valuesFrom.literal":              6,
		"valuesFrom.noSuchField":          100,
		"install.noSuchField":             100,
	}
	for _, v := range versions {
		if err := testcluster.InstallFluxCRDs(ctx, kubeconfig, v, os.Stderr); err != nil {
			t.Fatal(err)
		}
		var minor int
		if _, err := fmt.Sscanf(v, "v1.%d.", &minor); err != nil {
			t.Fatalf("version %q: %v", v, err)
		}
		for field, added := range since {
			has, err := e.HasSpecField(ctx, field)
			if want := minor >= added; err != nil || has != want {
				t.Errorf("HelmRelease CRD of helm-controller %s declares %s: %t (%v), want %t", v, field, has, err, want)
			}
		}
	}
}

// TestApplyWritesBack: fields another writer added to the HelmRelease's
// spec (kubectl edit of its values) are gone after the next Apply, not
// only the fields the apply names; a HelmRelease no one else wrote is
// left to the server-side apply alone.
func TestApplyWritesBack(t *testing.T) {
	withFluxCRDs(t, func(t *testing.T) { applyWritesBack(t) })
}

func applyWritesBack(t *testing.T) {
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(testRESTConfig)
	ns := newNamespace(t, cs)
	e, err := New(testRESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Build(&Release{
		Spec:   &reconcile.Spec{Name: "app", Namespace: ns},
		Chart:  Chart{Source: chartsource.Source{Repository: "https://charts.example.com", Name: "settings"}, Version: "1.0.0"},
		Values: map[string]any{"message": "one"},
	})
	if err != nil {
		t.Fatal(err)
	}
	first, err := e.Apply(ctx, objs)
	if err != nil {
		t.Fatal(err)
	}
	edited := first.DeepCopy()
	edited.Spec.Values = mustValues(t, map[string]any{"message": "by hand", "hook": true})
	if err := e.Kube.Patch(ctx, edited, client.MergeFrom(first), client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}
	written, err := e.Apply(ctx, objs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Get(ctx, ns, "app")
	if err != nil {
		t.Fatal(err)
	}
	if v := string(got.Spec.Values.Raw); v != `{"message":"one"}` {
		t.Errorf("values after writing back: %s, want only the written message", v)
	}
	if written.Generation != got.Generation {
		t.Errorf("Apply returned generation %d, the HelmRelease is at %d", written.Generation, got.Generation)
	}
	again, err := e.Apply(ctx, objs)
	if err != nil {
		t.Fatal(err)
	}
	if again.Generation != got.Generation {
		t.Errorf("an Apply of the same objects moved the generation from %d to %d", got.Generation, again.Generation)
	}
}

func mustValues(t *testing.T, v map[string]any) *apiextensionsv1.JSON {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return &apiextensionsv1.JSON{Raw: b}
}

// TestApplyRefusesForeignObjects: a chart source of the release's name
// that another wrote (a GitOps GitRepository named as its HelmRelease) is
// neither written over nor taken: Apply refuses before it writes anything.
func TestApplyRefusesForeignObjects(t *testing.T) {
	withFluxCRDs(t, func(t *testing.T) {
		ctx := context.Background()
		ns := newNamespace(t, kubernetes.NewForConfigOrDie(testRESTConfig))
		e, err := New(testRESTConfig)
		if err != nil {
			t.Fatal(err)
		}
		theirs := &sourcev1.GitRepository{
			TypeMeta:   metav1.TypeMeta{APIVersion: sourcev1.GroupVersion.String(), Kind: sourcev1.GitRepositoryKind},
			ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
			Spec:       sourcev1.GitRepositorySpec{URL: "https://git.example.com/theirs.git", Interval: metav1.Duration{Duration: time.Hour}},
		}
		if err := e.Kube.Create(ctx, theirs); err != nil {
			t.Fatal(err)
		}
		objs, err := Build(&Release{
			Spec: &reconcile.Spec{Name: "app", Namespace: ns},
			Chart: Chart{Source: chartsource.Source{Name: "charts/app", Git: &chartsource.Git{URL: "https://git.example.com/ours.git", Ref: chartsource.GitRef{Branch: "main"}}},
				Version: "1.0.0", SourceRevision: "main@sha1:0123456789abcdef0123456789abcdef01234567"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Apply(ctx, objs); !errors.Is(err, ErrForeignObjects) || !strings.Contains(err.Error(), "GitRepository app") {
			t.Fatalf("Apply over another's GitRepository: %v, want it refused naming the GitRepository", err)
		}
		got := &sourcev1.GitRepository{}
		if err := e.Kube.Get(ctx, client.ObjectKeyFromObject(theirs), got); err != nil {
			t.Fatal(err)
		}
		if got.Spec.URL != theirs.Spec.URL || got.Labels[ManagedByLabel] != "" {
			t.Errorf("the GitRepository after the refusal: URL %s, labels %v; want it as its owner wrote it", got.Spec.URL, got.Labels)
		}
		if hr, err := e.Get(ctx, ns, "app"); err != nil || hr != nil {
			t.Errorf("after the refusal the HelmRelease is %v (%v), want none written", hr, err)
		}
	})
}

// TestDeleteWrittenWhileTheSourceChanges: what a failed create wrote goes
// even when source-controller writes the status of the new shared
// HelmRepository between the read and the delete (its resourceVersion
// moves on), as it does at once for a source it has just seen.
func TestDeleteWrittenWhileTheSourceChanges(t *testing.T) {
	withFluxCRDs(t, func(t *testing.T) {
		ctx := t.Context()
		ns := newNamespace(t, kubernetes.NewForConfigOrDie(testRESTConfig))
		s, err := NewScheme()
		if err != nil {
			t.Fatal(err)
		}
		kube, err := client.NewWithWatch(testRESTConfig, client.Options{Scheme: s})
		if err != nil {
			t.Fatal(err)
		}
		objs, err := Build(&Release{
			Spec:            &reconcile.Spec{Name: "app", Namespace: ns},
			Chart:           Chart{Source: chartsource.Source{Repository: "https://charts.example.com", Name: "settings"}, Version: "1.0.0"},
			SensitiveValues: map[string]any{"password": "never-kept"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if !objs.Shared || objs.Values == nil {
			t.Fatalf("Build: shared %v, values Secret %v; want a shared HelmRepository and a values Secret", objs.Shared, objs.Values)
		}
		// What the create wrote before the HelmRelease was refused.
		written := []client.Object{objs.Source, objs.Values}
		for _, obj := range written {
			if err := kube.Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
		}
		var statusWrites int
		e := &Client{Kube: interceptor.NewClient(kube, interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if err := c.Get(ctx, key, obj, opts...); err != nil {
					return err
				}
				if _, ok := obj.(*sourcev1.HelmRepository); !ok || statusWrites > 0 {
					return nil
				}
				// source-controller's first status write, just after
				// the provider read the source.
				statusWrites++
				repo := &sourcev1.HelmRepository{}
				if err := c.Get(ctx, key, repo); err != nil {
					return err
				}
				repo.Status.ObservedGeneration = repo.Generation
				return c.Status().Update(ctx, repo)
			},
		})}
		if err := e.DeleteWritten(ctx, objs); err != nil {
			t.Errorf("DeleteWritten: %v", err)
		}
		if statusWrites == 0 {
			t.Fatal("the HelmRepository's status was never written between a read and the delete")
		}
		for _, obj := range written {
			err := kube.Get(ctx, client.ObjectKeyFromObject(obj), obj)
			if !apierrors.IsNotFound(err) {
				t.Errorf("%T %s after DeleteWritten: %v, want not found", obj, obj.GetName(), err)
			}
		}
	})
}
