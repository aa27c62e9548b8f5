package reconcile

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	releasecommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testcluster"
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
	return m.Run()
}

// engineChart is a chart with a Deployment, a pre-install/pre-upgrade hook
// Job and a test pod. The values failHook and failTest make the hook or the
// test fail (by label on the local cluster, by exit code on kind).
func engineChart(version string) *chart.Chart {
	file := func(name, data string) *common.File { return &common.File{Name: name, Data: []byte(data)} }
	failing := func(value string) string {
		return `{{- if .Values.` + value + ` }}
      labels:
        ` + testcluster.FailLabel + `: "true"
      {{- end }}`
	}
	command := func(value string) string {
		return `[sh, -c, {{ if .Values.` + value + ` }}"exit 1"{{ else }}"exit 0"{{ end }}]`
	}
	return &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: "v2", Name: "engine", Version: version},
		Values:   map[string]any{"replicas": 1, "failHook": false, "failTest": false},
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
			file("templates/hook.yaml", `apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-hook
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-delete-policy: before-hook-creation
spec:
  backoffLimit: 0
  template:
    metadata:
      `+failing("failHook")+`
    spec:
      restartPolicy: Never
      containers: [{name: hook, image: busybox:1.36, command: `+command("failHook")+`}]
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
  containers: [{name: test, image: busybox:1.36, command: `+command("failTest")+`}]
`),
		},
	}
}

type fixture struct {
	t      *testing.T
	ns     string
	engine *Reconciler
	cs     kubernetes.Interface
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a cluster")
	}
	ns := "engine-" + strings.ToLower(strings.NewReplacer("_", "-", "/", "-").Replace(t.Name()))
	if len(ns) > 63 {
		ns = ns[:63]
	}
	cs := kubernetes.NewForConfigOrDie(testRESTConfig)
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	e := &Reconciler{Logs: helm.NewLogBuffer(helm.DefaultLogLines, nil), Kube: kube.NewGetter(testRESTConfig, ns, ""), Key: testDigests.Key}
	c, err := helm.NewClient(helm.ClientOptions{
		Getter:           e.Kube,
		StorageNamespace: ns,
		Log:              e.Logs,
		Observe:          e.Observe,
	})
	if err != nil {
		t.Fatal(err)
	}
	e.Helm = c
	return &fixture{t: t, ns: ns, engine: e, cs: cs}
}

// spec is the fixture's release. Its timeout is a loaded machine's worth
// for waits that must end ready (a test pod under make test's load took
// over a minute); a test of a wait that must expire sets its own.
func (f *fixture) spec(mutate func(*Spec)) *Spec {
	s := &Spec{Name: "app", Namespace: f.ns, Timeout: 5 * time.Minute}
	if mutate != nil {
		mutate(s)
	}
	return s
}

func (f *fixture) reconcile(s *Spec, st *Status, version string, values map[string]any) error {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	err := f.engine.Reconcile(ctx, &Request{Spec: s, Chart: engineChart(version), Values: values, Status: st}, nil)
	if errors.Is(err, ErrRetriesExhausted) && s.Stalls(st) == nil {
		// A plan reads the stall from the status alone: it must see it
		// too, or it would plan an apply that stalls again, forever.
		f.t.Errorf("stalled (%v), but Spec.Stalls on the recorded status says a run would act", err)
	}
	return err
}

func (f *fixture) latest() *release.Release {
	f.t.Helper()
	rel, err := f.engine.Helm.LastRelease("app")
	if err != nil {
		f.t.Fatal(err)
	}
	return rel
}

func condition(st *Status, t string) string {
	c := st.Condition(t)
	if c == nil {
		return "absent"
	}
	return fmt.Sprintf("%v/%s", c.Status, c.Reason)
}

func TestInstallAndTestSucceed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	st := &Status{}
	s := f.spec(func(s *Spec) { s.Test.Enable = true })
	if err := f.reconcile(s, st, "1.0.0", map[string]any{"replicas": 2}); err != nil {
		t.Fatal(err)
	}
	rel := f.latest()
	if rel.Version != 1 || rel.Info.Status != releasecommon.StatusDeployed {
		t.Fatalf("release v%d %s, want v1 deployed", rel.Version, rel.Info.Status)
	}
	if got := condition(st, ConditionReady); got != "true/"+ReasonTestSucceeded {
		t.Errorf("Ready %s", got)
	}
	if got := condition(st, ConditionReleased); got != "true/"+ReasonInstallSucceeded {
		t.Errorf("Released %s", got)
	}
	cur := st.Latest()
	if cur == nil || cur.TestHooks["app-test"].Phase != release.HookPhaseSucceeded.String() || cur.Status != "deployed" {
		t.Fatalf("latest snapshot %+v", cur)
	}
	if st.Failures != 0 || st.LastAttemptedReleaseAction != ActionInstall || st.LastAppliedRevision != "1.0.0" {
		t.Errorf("status %+v", st)
	}
	// A second run finds it in sync and does nothing.
	if err := f.reconcile(s, st, "1.0.0", map[string]any{"replicas": 2}); err != nil {
		t.Fatal(err)
	}
	if f.latest().Version != 1 {
		t.Error("an in-sync release was released again")
	}
	// New values upgrade it.
	if err := f.reconcile(s, st, "1.0.0", map[string]any{"replicas": 3}); err != nil {
		t.Fatal(err)
	}
	if rel := f.latest(); rel.Version != 2 || st.Latest().Version != 2 || len(st.History) != 2 || st.History[1].Status != "superseded" {
		t.Errorf("after new values: release v%d, history %+v", rel.Version, st.History)
	}
	if got := condition(st, ConditionReleased); got != "true/"+ReasonUpgradeSucceeded {
		t.Errorf("Released %s", got)
	}
}

func TestInstallFailureExhausted(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	st := &Status{}
	err := f.reconcile(f.spec(nil), st, "1.0.0", map[string]any{"failHook": true})
	if !errors.Is(err, ErrRetriesExhausted) || !strings.Contains(err.Error(), "pre-install") {
		t.Fatalf("error %v, want retries exhausted after a pre-install hook failure", err)
	}
	if st.InstallFailures != 1 || st.Failures != 1 {
		t.Errorf("failures %d install %d, want 1 and 1", st.Failures, st.InstallFailures)
	}
	if got := condition(st, ConditionStalled); got != "true/"+ReasonRetriesExhausted {
		t.Errorf("Stalled %s", got)
	}
	// Without remediate_last_failure the failed release stays.
	if rel := f.latest(); rel == nil || rel.Info.Status != releasecommon.StatusFailed {
		t.Errorf("latest release %v, want the failed install", rel)
	}
	// A second run with nothing changed does not retry.
	if err := f.reconcile(f.spec(nil), st, "1.0.0", map[string]any{"failHook": true}); !errors.Is(err, ErrRetriesExhausted) {
		t.Errorf("second run: %v", err)
	}
	if st.InstallFailures != 1 {
		t.Errorf("a stalled release was retried: %d install failures", st.InstallFailures)
	}
	// Fixing the values resets the counters and the release is upgraded out
	// of its failed state.
	if err := f.reconcile(f.spec(nil), st, "1.0.0", map[string]any{"failHook": false}); err != nil {
		t.Fatalf("after fixing the values: %v", err)
	}
	if rel := f.latest(); rel.Info.Status != releasecommon.StatusDeployed || st.Failures != 0 {
		t.Errorf("after fixing the values: release %s, failures %d", rel.Info.Status, st.Failures)
	}
}

func TestInstallRetriesThenRemediateLastFailure(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	st := &Status{}
	yes := true
	s := f.spec(func(s *Spec) {
		s.Install.Remediation = Remediation{Retries: 1, RemediateLastFailure: &yes}
	})
	err := f.reconcile(s, st, "1.0.0", map[string]any{"failHook": true})
	if !errors.Is(err, ErrRetriesExhausted) {
		t.Fatalf("error %v, want retries exhausted", err)
	}
	if st.InstallFailures != 2 {
		t.Errorf("install failures %d, want 2 (one try, one retry)", st.InstallFailures)
	}
	if got := condition(st, ConditionRemediated); got != "true/"+ReasonUninstallSucceeded {
		t.Errorf("Remediated %s", got)
	}
	if rel := f.latest(); rel != nil {
		t.Errorf("the last failure was not remediated: %s v%d", rel.Info.Status, rel.Version)
	}
}

func TestUpgradeFailureRolledBack(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	st := &Status{}
	yes := true
	s := f.spec(func(s *Spec) { s.Upgrade.Remediation = Remediation{RemediateLastFailure: &yes} })
	if err := f.reconcile(s, st, "1.0.0", nil); err != nil {
		t.Fatal(err)
	}
	err := f.reconcile(s, st, "1.1.0", map[string]any{"failHook": true})
	if !errors.Is(err, ErrRetriesExhausted) || !strings.Contains(err.Error(), "pre-upgrade") {
		t.Fatalf("error %v, want exhausted after a pre-upgrade hook failure", err)
	}
	rel := f.latest()
	if rel.Version != 3 || rel.Info.Status != releasecommon.StatusDeployed || rel.Chart.Metadata.Version != "1.0.0" {
		t.Errorf("latest release v%d %s chart %s, want v3 deployed rolled back to 1.0.0", rel.Version, rel.Info.Status, rel.Chart.Metadata.Version)
	}
	if got := condition(st, ConditionRemediated); got != "true/"+ReasonRollbackSucceeded {
		t.Errorf("Remediated %s", got)
	}
	if st.UpgradeFailures != 1 || st.LastAttemptedRevision != "1.1.0" || st.LastAppliedRevision != "1.0.0" {
		t.Errorf("status %+v", st)
	}
}

func TestTestFailureIgnored(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	st := &Status{}
	s := f.spec(func(s *Spec) { s.Test = TestSpec{Enable: true, IgnoreFailures: true} })
	if err := f.reconcile(s, st, "1.0.0", map[string]any{"failTest": true}); err != nil {
		t.Fatal(err)
	}
	if got := condition(st, ConditionTestSuccess); got != "false/"+ReasonTestFailed {
		t.Errorf("TestSuccess %s", got)
	}
	if c := st.Condition(ConditionReady); c == nil || !c.Status {
		t.Errorf("Ready %v, want True: ignored test failures do not affect readiness", c)
	}
	if st.Failures != 0 {
		t.Errorf("ignored test failure counted: %d", st.Failures)
	}
}

func TestTestFailureRemediated(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	st := &Status{}
	yes := true
	s := f.spec(func(s *Spec) {
		s.Test.Enable = true
		s.Install.Remediation = Remediation{RemediateLastFailure: &yes}
	})
	err := f.reconcile(s, st, "1.0.0", map[string]any{"failTest": true})
	if !errors.Is(err, ErrRetriesExhausted) || !strings.Contains(err.Error(), "test") {
		t.Fatalf("error %v, want exhausted after a failed test", err)
	}
	if st.InstallFailures != 1 {
		t.Errorf("install failures %d, want 1", st.InstallFailures)
	}
	if rel := f.latest(); rel != nil {
		t.Errorf("failed test not remediated by uninstall: %s", rel.Info.Status)
	}
}

func TestManualRollbackDetected(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	st := &Status{}
	s := f.spec(nil)
	if err := f.reconcile(s, st, "1.0.0", map[string]any{"replicas": 1}); err != nil {
		t.Fatal(err)
	}
	if err := f.reconcile(s, st, "1.0.0", map[string]any{"replicas": 2}); err != nil {
		t.Fatal(err)
	}
	// helm rollback, out of band.
	if err := f.engine.Helm.Rollback("app", helm.RollbackOptions{Version: 1, Timeout: 5 * time.Minute, Wait: true}); err != nil {
		t.Fatal(err)
	}
	f.engine.observed = nil // not ours
	latest, err := f.engine.Helm.LastRelease("app")
	if err != nil {
		t.Fatal(err)
	}
	state, err := DetermineReleaseState(context.Background(), latest, st, Desired{Spec: s, ChartName: "engine", ChartVersion: "1.0.0", Digests: testDigests}, nil)
	if err != nil || state.Status != StateUnmanaged {
		t.Fatalf("after a manual rollback the state is %s (%v), want Unmanaged", state.Status, err)
	}
	if err := f.reconcile(s, st, "1.0.0", map[string]any{"replicas": 2}); err != nil {
		t.Fatal(err)
	}
	rel := f.latest()
	if rel.Version != 4 || rel.Config["replicas"] != int64(2) && fmt.Sprint(rel.Config["replicas"]) != "2" {
		t.Errorf("latest release v%d with %v, want v4 upgraded back to replicas 2", rel.Version, rel.Config)
	}
}

// TestChartPublishedAgain: the same chart version from a Helm repository
// with another archive digest (Request.ChartDigest) is an upgrade; a
// rollback's revision keeps the digest of the revision it restores, so a
// failed upgrade to the new archive is not taken as done.
func TestChartPublishedAgain(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	st := &Status{}
	s := f.spec(nil)
	run := func(digest string, values map[string]any) error {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		return f.engine.Reconcile(ctx, &Request{Spec: s, Chart: engineChart("1.0.0"), ChartDigest: digest, Values: values, Status: st}, nil)
	}
	if err := run("sha256:aaa", nil); err != nil {
		t.Fatal(err)
	}
	if err := run("sha256:aaa", nil); err != nil || f.latest().Version != 1 {
		t.Fatalf("same digest: %v, release v%d", err, f.latest().Version)
	}
	if err := run("sha256:bbb", nil); err != nil {
		t.Fatal(err)
	}
	if rel := f.latest(); rel.Version != 2 || st.Latest().ChartDigest != "sha256:bbb" || st.History[1].ChartDigest != "sha256:aaa" {
		t.Fatalf("published again: release v%d, history %+v", rel.Version, st.History)
	}
	if st.LastAttemptedRevisionDigest != "sha256:bbb" {
		t.Errorf("last attempted revision digest %q", st.LastAttemptedRevisionDigest)
	}

	// A failing upgrade to a third archive, rolled back.
	yes := true
	s.Upgrade.Remediation = Remediation{RemediateLastFailure: &yes}
	if err := run("sha256:ccc", map[string]any{"failHook": true}); !errors.Is(err, ErrRetriesExhausted) {
		t.Fatalf("error %v, want retries exhausted", err)
	}
	if rel, cur := f.latest(), st.Latest(); rel.Version != 4 || cur.ChartDigest != "sha256:bbb" {
		t.Fatalf("after rollback: release v%d, latest snapshot %+v", rel.Version, cur)
	}
	// The same failing archive again: exhausted, nothing is tried.
	before := f.latest().Version
	if err := run("sha256:ccc", map[string]any{"failHook": true}); !errors.Is(err, ErrRetriesExhausted) || f.latest().Version != before {
		t.Fatalf("same digest again: %v, release v%d (was v%d)", err, f.latest().Version, before)
	}
	// Published again once more: the counters reset and it is tried again.
	if err := run("sha256:ddd", map[string]any{"failHook": true}); !errors.Is(err, ErrRetriesExhausted) || f.latest().Version <= before || st.UpgradeFailures != 1 {
		t.Fatalf("new digest: %v, release v%d (was v%d), upgrade failures %d", err, f.latest().Version, before, st.UpgradeFailures)
	}
	want := Desired{Spec: s, ChartName: "engine", ChartVersion: "1.0.0", ChartDigest: "sha256:ccc", ConfigDigest: st.LastAttemptedConfigDigest, Digests: testDigests}
	state, err := DetermineReleaseState(context.Background(), f.latest(), st, want, nil)
	if err != nil || state.Status != StateOutOfSync || !strings.Contains(state.Reason, "published again with digest sha256:ccc") {
		t.Errorf("state after the rollback: %+v, %v", state, err)
	}
}
