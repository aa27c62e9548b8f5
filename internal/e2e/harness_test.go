//go:build unix

package e2e

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	releasecommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// workspace is one Terraform working directory with its own state file.
type workspace struct {
	t   *testing.T
	dir string
	// bin is the terraform binary (default: the one TestMain found).
	bin string
	// cliConfig is the CLI configuration (default: the one overriding the
	// provider with this build).
	cliConfig string
	// env is added to the environment of every terraform run.
	env []string
	// runTimeout bounds each terraform run (default: 10 minutes).
	runTimeout time.Duration
}

func newWorkspace(t *testing.T, name string) *workspace {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	return &workspace{t: t, dir: dir}
}

// write replaces the configuration.
func (w *workspace) write(config string) {
	w.t.Helper()
	if err := os.WriteFile(filepath.Join(w.dir, "main.tf"), []byte(config), 0o600); err != nil {
		w.t.Fatal(err)
	}
}

// result is how a terraform run ended.
type result struct {
	args           []string
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("terraform %s exited %d\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
}

// running is a terraform run in progress, in a process group of its own
// with the provider it starts.
type running struct {
	cmd            *exec.Cmd
	args           []string
	stdout, stderr bytes.Buffer
	done           chan struct{}
	res            result
}

// start runs terraform without waiting for it.
func (w *workspace) start(args ...string) *running {
	w.t.Helper()
	// Not bound to a context: the tests kill it themselves, or wait.
	bin := w.bin
	if bin == "" {
		bin = terraform
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = w.dir
	cmd.Env = w.environ()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	r := &running{cmd: cmd, args: args, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &r.stdout, &r.stderr
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	go func() {
		err := cmd.Wait()
		r.res = result{args: args, stdout: r.stdout.String(), stderr: r.stderr.String()}
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			r.res.code = exit.ExitCode()
		case err != nil:
			r.res.code = -1
			r.res.stderr += "\n" + err.Error()
		}
		close(r.done)
	}()
	w.t.Cleanup(func() { r.kill() })
	return r
}

// kill sends SIGKILL to terraform and the provider, as a CI runner's
// timeout or a lost machine does, and waits for terraform to be gone.
func (r *running) kill() {
	_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
	<-r.done
}

// wait waits for the run to end, at most timeout (then kills it).
func (r *running) wait(t *testing.T, timeout time.Duration) result {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(timeout):
		r.kill()
		t.Fatalf("terraform %s still ran after %s; killed:\n%s", strings.Join(r.args, " "), timeout, r.res)
	}
	return r.res
}

// run runs terraform to its end.
func (w *workspace) run(args ...string) result {
	w.t.Helper()
	return w.start(args...).wait(w.t, cmp.Or(w.runTimeout, 10*time.Minute))
}

// must runs terraform and fails the test unless it exits with code.
func (w *workspace) must(code int, args ...string) result {
	w.t.Helper()
	res := w.run(args...)
	if res.code != code {
		w.t.Fatalf("want exit code %d: %s", code, res)
	}
	return res
}

// apply applies the configuration and fails the test if it fails.
func (w *workspace) apply() result {
	w.t.Helper()
	return w.must(0, "apply", "-auto-approve", "-input=false", "-no-color")
}

// planIsEmpty fails the test unless a plan shows no change.
func (w *workspace) planIsEmpty() {
	w.t.Helper()
	w.must(0, "plan", "-input=false", "-no-color", "-detailed-exitcode")
}

func (w *workspace) environ() []string {
	env := []string{}
	for _, kv := range os.Environ() {
		// The matrix's own CLI configuration; logs only where a test asks.
		if strings.HasPrefix(kv, "TF_CLI_CONFIG_FILE=") || strings.HasPrefix(kv, "TF_LOG") {
			continue
		}
		env = append(env, kv)
	}
	rc := w.cliConfig
	if rc == "" {
		rc = cliConfig
	}
	// The provider's cache_dir integrity key goes under the run's own
	// configuration directory, not the user's (a test may set another).
	env = append(env, "TF_CLI_CONFIG_FILE="+rc, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1", "XDG_CONFIG_HOME="+filepath.Join(workDir, "config"))
	return append(env, w.env...)
}

// stateBytes is the state file as it is now (nil when there is none).
func (w *workspace) stateBytes() []byte {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.dir, "terraform.tfstate"))
	if err != nil && !os.IsNotExist(err) {
		w.t.Fatal(err)
	}
	return b
}

// tfState is what the tests read of a state file.
type tfState struct {
	Resources []struct {
		Type      string `json:"type"`
		Name      string `json:"name"`
		Instances []struct {
			Status     string `json:"status"`
			Attributes struct {
				ID     string   `json:"id"`
				Status tfStatus `json:"status"`
			} `json:"attributes"`
		} `json:"instances"`
	} `json:"resources"`
}

// tfStatus is what the tests read of a release's status.
type tfStatus struct {
	Ready      bool   `json:"ready"`
	Reason     string `json:"reason"`
	Failures   int    `json:"failures"`
	Conditions []struct {
		Type    string `json:"type"`
		Status  bool   `json:"status"`
		Reason  string `json:"reason"`
		Message string `json:"message"`
	} `json:"conditions"`
	History []struct {
		Version   int    `json:"version"`
		Status    string `json:"status"`
		Action    string `json:"action"`
		ChartName string `json:"chart_name"`
	} `json:"history"`
}

// statuses are the statuses of the helmrelease_release instances of the
// state, by name.
func (w *workspace) statuses() map[string]tfStatus {
	w.t.Helper()
	var st tfState
	if err := json.Unmarshal(w.stateBytes(), &st); err != nil {
		w.t.Fatal(err)
	}
	out := map[string]tfStatus{}
	for _, r := range st.Resources {
		if r.Type == "helmrelease_release" && len(r.Instances) > 0 {
			out[r.Name] = r.Instances[0].Attributes.Status
		}
	}
	return out
}

// releases are the helmrelease_release instances of the state, by name.
// releaseIDs is the ID of each helmrelease_release of the state, by
// resource name.
func (w *workspace) releaseIDs() map[string]string {
	w.t.Helper()
	var st tfState
	if err := json.Unmarshal(w.stateBytes(), &st); err != nil {
		w.t.Fatal(err)
	}
	ids := map[string]string{}
	for _, r := range st.Resources {
		for _, inst := range r.Instances {
			if r.Type == "helmrelease_release" {
				ids[r.Name] = inst.Attributes.ID
			}
		}
	}
	return ids
}

func (w *workspace) releases() map[string]int {
	w.t.Helper()
	out := map[string]int{}
	b := w.stateBytes()
	if len(b) == 0 {
		return out
	}
	var st tfState
	if err := json.Unmarshal(b, &st); err != nil {
		w.t.Fatal(err)
	}
	for _, r := range st.Resources {
		if r.Type != "helmrelease_release" {
			continue
		}
		for _, inst := range r.Instances {
			version := 0
			if h := inst.Attributes.Status.History; len(h) > 0 {
				version = h[0].Version
			}
			out[r.Name] = version
		}
	}
	return out
}

// newNamespace creates a namespace for one test on the matrix's cluster,
// deleted after it.
func newNamespace(t *testing.T) string {
	t.Helper()
	return newNamespaceOn(t, clientset)
}

// newNamespaceOn creates a namespace for one test on the cluster of cs,
// deleted after it.
func newNamespaceOn(t *testing.T, clientset kubernetes.Interface) string {
	t.Helper()
	ns := "e2e-" + strings.ToLower(strings.NewReplacer("_", "-", "/", "-", ".", "-").Replace(t.Name()))
	if len(ns) > 63 {
		// Names alike up to the cut stay apart: two tests sharing a
		// namespace would wait for each other.
		sum := sha256.Sum256([]byte(ns))
		ns = strings.TrimRight(ns[:54], "-") + "-" + hex.EncodeToString(sum[:4])
	}
	ns = strings.TrimRight(ns, "-")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for {
		// A namespace of the same test run before (-count) may still be
		// terminating: wait until it is gone.
		_, err := clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err == nil {
			break
		}
		if !apierrors.IsAlreadyExists(err) || ctx.Err() != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = clientset.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	})
	return ns
}

// newRepository serves the svc chart at 1.0.0.
func newRepository(t *testing.T) *testrepo.HTTP {
	t.Helper()
	repo := testrepo.NewHTTP(t)
	repo.Add(t, testrepo.LoadChart(t, testdataPath("charts", "svc"), "1.0.0"), nil)
	return repo
}

// config is a provider block and a release of the svc chart per
// resource: name → HCL body lines (values, timeout, …).
type config struct {
	namespace string
	repo      *testrepo.HTTP
	cacheDir  string
	// provider holds extra lines of the provider block; kubernetes
	// replaces its kubernetes attribute.
	provider, kubernetes string
	// chart is the chart's name in the repository; empty is svc.
	chart string
	// version is the chart's version constraint; empty is 1.0.0.
	version string
}

func (c config) hcl(resources map[string]string) string {
	var b strings.Builder
	kubernetes := c.kubernetes
	if kubernetes == "" {
		kubernetes = fmt.Sprintf("{ config_path = %q }", cluster.Kubeconfig)
	}
	b.WriteString("terraform {\n  required_providers {\n    helmrelease = { source = \"helmrelease/helmrelease\" }\n  }\n}\n\n")
	fmt.Fprintf(&b, "provider \"helmrelease\" {\n  kubernetes = %s\n  cache_dir  = %q\n%s\n}\n", kubernetes, c.cacheDir, c.provider)
	chart, version := c.chart, c.version
	if chart == "" {
		chart = "svc"
	}
	if version == "" {
		version = "1.0.0"
	}
	names := make([]string, 0, len(resources))
	for name := range resources {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(&b, `
resource "helmrelease_release" %[1]q {
  name      = %[1]q
  namespace = %[2]q
  chart = {
    name       = %[7]q
    version    = %[8]q
    repository = %[3]q
    username   = %[4]q
    password   = %[5]q
  }
%[6]s
}
`, name, c.namespace, c.repo.URL, testrepo.Username, testrepo.Password, resources[name], chart, version)
	}
	return b.String()
}

// storage reads Helm storage of a namespace.
type storage struct {
	t      *testing.T
	client *helm.Client
}

func newStorage(t *testing.T, ns string) *storage {
	t.Helper()
	return newStorageOn(t, restConfig, ns)
}

// newStorageOn reads Helm storage of a namespace of the cluster of
// restConfig.
func newStorageOn(t *testing.T, restConfig *rest.Config, ns string) *storage {
	t.Helper()
	c, err := helm.NewClient(helm.ClientOptions{Getter: kube.NewGetter(restConfig, ns, ""), StorageNamespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	return &storage{t: t, client: c}
}

// history is every revision of the release, oldest first.
func (s *storage) history(name string) []*release.Release {
	s.t.Helper()
	rels, err := s.client.History(name)
	if err != nil {
		s.t.Fatal(err)
	}
	sort.Slice(rels, func(i, j int) bool { return rels[i].Version < rels[j].Version })
	return rels
}

// latest is the newest revision, or nil.
func (s *storage) latest(name string) *release.Release {
	s.t.Helper()
	h := s.history(name)
	if len(h) == 0 {
		return nil
	}
	return h[len(h)-1]
}

// waitFor polls the newest revision until it is version in status.
func (s *storage) waitFor(name string, version int, status releasecommon.Status, timeout time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if rels, err := s.client.History(name); err == nil {
			for _, r := range rels {
				if r.Version == version && r.Info.Status == status {
					return
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.t.Fatalf("release %s never reached revision %d %s: %s", name, version, status, s.describe(name))
}

// consistent checks what every case must end with: no revision pending,
// exactly one deployed, the newest; and the state recording it.
func (s *storage) consistent(name string, w *workspace, resource string) {
	s.t.Helper()
	h := s.history(name)
	deployed := 0
	for _, r := range h {
		if r.Info.Status.IsPending() || r.Info.Status == releasecommon.StatusUninstalling {
			s.t.Errorf("revision %d left %s: %s", r.Version, r.Info.Status, s.describe(name))
		}
		if r.Info.Status == releasecommon.StatusDeployed {
			deployed++
		}
	}
	latest := s.latest(name)
	if latest == nil || latest.Info.Status != releasecommon.StatusDeployed || deployed != 1 {
		s.t.Fatalf("want the newest revision deployed and no other: %s", s.describe(name))
	}
	if w != nil {
		if got := w.releases()[resource]; got != latest.Version {
			s.t.Errorf("the state records revision %d of %s, storage's newest is %d", got, resource, latest.Version)
		}
	}
}

func (s *storage) describe(name string) string {
	var parts []string
	for _, r := range s.history(name) {
		parts = append(parts, fmt.Sprintf("v%d %s (%s)", r.Version, r.Info.Status, r.Info.Description))
	}
	return strings.Join(parts, ", ")
}

// configMessage reads the message of the chart's ConfigMap.
func configMessage(t *testing.T, ns, name string) string {
	t.Helper()
	return configMessageOn(t, clientset, ns, name)
}

// configMessageOn is configMessage on the cluster of cs.
func configMessageOn(t *testing.T, cs kubernetes.Interface, ns, name string) string {
	t.Helper()
	return configMapOn(t, cs, ns, name).Data["message"]
}

// configMapOn is the ConfigMap ns/name on the cluster of cs.
func configMapOn(t *testing.T, cs kubernetes.Interface, ns, name string) *corev1.ConfigMap {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("ConfigMap %s/%s: %v", ns, name, err)
	}
	return cm
}

// has reports whether text holds want however Terraform wrapped its lines.
func has(text, want string) bool {
	return strings.Contains(strings.Join(strings.Fields(text), " "), strings.Join(strings.Fields(want), " "))
}
