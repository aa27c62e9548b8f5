package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"k8s.io/client-go/rest"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testcluster"
)

// waitChart has one template, the text given, and a ConfigMap beside it:
// an object that is ready once it exists, which no controller has to act
// on, so it is never among the objects not ready, however slow the
// machine.
func waitChart(objects string) *chart.Chart {
	return &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: "v2", Name: "waits", Version: "1.0.0"},
		Templates: []*common.File{
			{Name: "templates/ready.yaml", Data: []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: ready
data: {state: ready}
`)},
			{Name: "templates/objects.yaml", Data: []byte(objects)},
		},
	}
}

// unschedulable is a pod spec no node matches.
const unschedulable = `nodeSelector: {example.com/pool: none}
      containers: [{name: c, image: busybox:1.36}]`

// recordingLogger keeps the info lines the engine logs.
type recordingLogger struct {
	mu    sync.Mutex
	lines []string
}

func (l *recordingLogger) Info(msg string, _ ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, msg)
}

func (l *recordingLogger) Debug(string, ...any) {}

func (l *recordingLogger) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// TestWaitErrorsSayWhy: an install whose wait runs out of time, or whose
// hook does not complete, fails with the objects not ready and, for each,
// what the cluster says of it; the cluster is reachable all along. While
// waiting, progress lines name what is not ready yet.
func TestWaitErrorsSayWhy(t *testing.T) {
	// A hundred claims of a StorageClass that does not exist: Pending from
	// the moment they are created, with nothing for a controller to do.
	many := strings.Builder{}
	for i := range 100 {
		fmt.Fprintf(&many, `---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: stuck-%03d
spec:
  storageClassName: missing
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
`, i)
	}
	cases := []struct {
		name    string
		objects string
		// hooks is the hook named in the error, if a hook failed.
		hooks string
		// logs must be in the pod logs of the error (and nowhere in its text).
		logs  string
		cause kube.Cause
		// want are texts of the error, in order.
		want []string
		// notReady is how many objects the error counts as not ready.
		notReady int
		// timeout of the wait; 20s when zero: enough for what the case
		// means to see at its end without a controller acting, the
		// objects just created. A case whose cause a controller sets
		// (the scheduler, the Job controller) gives them minutes: a
		// failure ends the wait on its own, and a pod the scheduler
		// refuses is refused long before.
		timeout time.Duration
	}{{
		name: "pod the scheduler refuses",
		objects: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: picky
spec:
  selector: {matchLabels: {app: picky}}
  template:
    metadata: {labels: {app: picky}}
    spec:
      ` + unschedulable + `
`,
		cause:    kube.CauseUnschedulable,
		timeout:  time.Minute,
		want:     []string{"timed out after 1m0s waiting for 1 of 2 objects to be ready", "- Deployment %s/picky: 0 of 1 replicas ready", "Pending, not scheduled: 0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector"},
		notReady: 1,
	}, {
		name: "claim that does not bind",
		objects: `apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec:
  storageClassName: missing
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
`,
		cause:    kube.CauseVolume,
		want:     []string{"- PersistentVolumeClaim %s/data: Pending (StorageClass \"missing\")", `storageclass.storage.k8s.io "missing" not found`},
		notReady: 1,
	}, {
		name: "load balancer that never comes",
		objects: `apiVersion: v1
kind: Service
metadata:
  name: public
spec:
  type: LoadBalancer
  loadBalancerClass: example.com/none
  selector: {app: ready}
  ports: [{port: 80}]
`,
		cause:    kube.CauseLoadBalancer,
		want:     []string{"- Service %s/public: type LoadBalancer without an address", `loadBalancerClass is "example.com/none"`},
		notReady: 1,
	}, {
		name: "hook that never runs",
		objects: `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations: {helm.sh/hook: pre-install}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      ` + unschedulable + `
`,
		hooks:   "pre-install Job migrate",
		cause:   kube.CauseUnschedulable,
		timeout: time.Minute,
		want:    []string{"hook pre-install Job migrate did not complete", "- Job %s/migrate: not complete: 1 active, 0 succeeded, 0 failed", "Pending, not scheduled"},
	}, {
		name: "hook that fails",
		objects: `apiVersion: batch/v1
kind: Job
metadata:
  name: seed
  annotations: {helm.sh/hook: post-install, helm.sh/hook-delete-policy: before-hook-creation}
spec:
  backoffLimit: 0
  template:
    metadata:
      labels: {` + testcluster.FailLabel + `: "true"}
    spec:
      restartPolicy: Never
      containers: [{name: seed, image: busybox:1.36, command: [sh, -c, "echo seeding failed; exit 1"]}]
`,
		hooks:   "post-install Job seed",
		logs:    "of pod seed-",
		cause:   kube.CauseFailed,
		timeout: 5 * time.Minute,
		want:    []string{"hook post-install Job seed did not complete: failed post-install: job seed failed: BackoffLimitExceeded", "- Job %s/seed: failed: BackoffLimitExceeded", "Failed, container seed exited with code 1"},
	}, {
		name:     "a hundred objects stay readable",
		objects:  many.String(),
		cause:    kube.CauseVolume,
		want:     []string{"timed out after 20s waiting for 100 of 101 objects to be ready", "- PersistentVolumeClaim %s/stuck-009: Pending (StorageClass \"missing\")", "- and 90 more not ready: PersistentVolumeClaim %s/stuck-010, PersistentVolumeClaim %s/stuck-011", ", …"},
		notReady: 100,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			// The provider's client rate, not client-go's default.
			cfg := rest.CopyConfig(testRESTConfig)
			cfg.QPS, cfg.Burst = kube.DefaultQPS, kube.DefaultBurst
			f.engine.Kube = kube.NewGetter(cfg, f.ns, "")
			c, err := helm.NewClient(helm.ClientOptions{Getter: f.engine.Kube, StorageNamespace: f.ns, Log: f.engine.Logs, Observe: f.engine.Observe})
			if err != nil {
				t.Fatal(err)
			}
			f.engine.Helm = c
			log := &recordingLogger{}
			f.engine.Log, f.engine.ProgressEvery = log, 2*time.Second
			timeout := tc.timeout
			if timeout == 0 {
				timeout = 20 * time.Second
			}
			// Helm's legacy waiter, whose failures the table explains.
			s := f.spec(func(s *Spec) { s.Timeout, s.WaitStrategy = timeout, helm.WaitLegacy })
			st := &Status{}
			ctx, cancel := context.WithTimeout(context.Background(), timeout+5*time.Minute)
			defer cancel()
			err = f.engine.Reconcile(ctx, &Request{Spec: s, Chart: waitChart(tc.objects), Values: map[string]any{}, Status: st}, nil)
			var we *WaitError
			if !errors.As(err, &we) {
				t.Fatalf("error %v, want a WaitError", err)
			}
			msg := err.Error()
			rest := msg
			for _, w := range tc.want {
				w = strings.ReplaceAll(w, "%s", f.ns)
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("error lacks %q (or not in order):\n%s", w, msg)
				}
				rest = rest[i+len(w):]
			}
			if got := strings.Join(we.Hooks, ", "); got != tc.hooks {
				t.Errorf("hooks %q, want %q", got, tc.hooks)
			}
			if causes := we.Causes(); len(causes) == 0 || causes[0] != tc.cause {
				t.Errorf("causes %v, want %s first", causes, tc.cause)
			}
			if tc.notReady > 0 && len(we.NotReady)+len(we.More) != tc.notReady {
				t.Log(msg)
				t.Errorf("%d objects not ready, want %d", len(we.NotReady)+len(we.More), tc.notReady)
			}
			// A pod's log lines may hold secrets the provider never saw:
			// shown by PodLogs (the run's diagnostic) alone, never in
			// the error's text, which status conditions keep.
			if tc.logs != "" {
				if !strings.Contains(we.PodLogs(), tc.logs) {
					t.Errorf("PodLogs lacks the pod's log %q:\n%s", tc.logs, we.PodLogs())
				}
				if strings.Contains(msg, tc.logs) {
					t.Errorf("the error's text holds the pod's log %q:\n%s", tc.logs, msg)
				}
				for _, c := range st.Conditions {
					if strings.Contains(c.Message, tc.logs) {
						t.Errorf("status condition %s holds the pod's log %q", c.Type, tc.logs)
					}
				}
			}
			if len(we.NotReady) > maxExplained {
				t.Errorf("%d objects explained, want at most %d", len(we.NotReady), maxExplained)
			}
			if before, _, _ := strings.Cut(msg, "Last Helm log lines"); strings.Contains(before, "context deadline exceeded") {
				t.Errorf("the error still says only that a deadline passed:\n%s", msg)
			}
			if lines := strings.Count(msg, "\n"); lines > 45 {
				t.Errorf("error of %d lines, want it short enough to read:\n%s", lines, msg)
			}
			if err := f.engine.Reachable(ctx); err != nil {
				t.Errorf("the cluster answered all along, Reachable says %v", err)
			}
			if tc.hooks == "" && !strings.Contains(log.String(), "install of release "+f.ns+"/app still waiting") {
				t.Errorf("no progress line while waiting; logged:\n%s", log.String())
			}
		})
	}
}
