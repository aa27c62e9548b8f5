//go:build unix

package testcluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

//go:embed kwok.yaml
var kwokConfig []byte

// state is what Stop, StopComponent and StartComponent need to find the
// processes again and to start one anew.
type state struct {
	Procs []proc `json:"procs"`
	// Detach is Options.Detach, for processes started again.
	Detach bool `json:"detach"`
	// BinDir is Options.BinDir.
	BinDir string `json:"binDir"`
}

// proc is one process of the cluster, in start order.
type proc struct {
	Name string   `json:"name"`
	PID  int      `json:"pid"`
	Args []string `json:"args"`
}

func (st *state) pids() []int {
	out := make([]int, 0, len(st.Procs))
	for _, p := range st.Procs {
		out = append(out, p.PID)
	}
	return out
}

// Components that StopComponent and StartComponent take.
const (
	ComponentEtcd      = binEtcd
	ComponentAPIServer = binAPIServer
)

const stateFile = "processes.json"

// Start starts a cluster in opts.Dir and waits until its node is Ready and
// schedulable. On failure everything it started is stopped; the logs stay in
// opts.Dir/logs.
func Start(ctx context.Context, opts Options) (c *Cluster, err error) {
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("resolving cluster directory: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, stateFile)); err == nil {
		return nil, fmt.Errorf("a cluster is already running in %s: stop it first", dir)
	}
	for _, d := range []string{"logs", "etcd", "pki"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return nil, fmt.Errorf("creating cluster directory: %w", err)
		}
	}
	ports, err := freePorts(6)
	if err != nil {
		return nil, err
	}
	etcdClient, etcdPeer, apiPort, kcmPort, schedPort, kwokPort := ports[0], ports[1], ports[2], ports[3], ports[4], ports[5]

	p, err := writePKI(filepath.Join(dir, "pki"))
	if err != nil {
		return nil, err
	}
	host := "https://127.0.0.1:" + strconv.Itoa(apiPort)
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(kubeconfig, host, p); err != nil {
		return nil, err
	}
	kwokPath := filepath.Join(dir, "kwok.yaml")
	if err := os.WriteFile(kwokPath, kwokConfig, 0o600); err != nil {
		return nil, fmt.Errorf("writing kwok configuration: %w", err)
	}

	st := &state{Detach: opts.Detach, BinDir: opts.BinDir}
	defer func() {
		if err != nil {
			stopPIDs(st.pids())
			_ = os.Remove(filepath.Join(dir, stateFile))
		}
	}()
	run := func(name string, args ...string) error {
		fmt.Fprintf(log, "testcluster: starting %s\n", name)
		pid, err := spawn(filepath.Join(opts.BinDir, name), args, filepath.Join(dir, "logs", name+".log"), opts.Detach)
		if err != nil {
			return err
		}
		st.Procs = append(st.Procs, proc{Name: name, PID: pid, Args: args})
		return writeState(dir, st)
	}
	loop := func(port int) string { return "http://127.0.0.1:" + strconv.Itoa(port) }

	if err := run(binEtcd,
		"--name=testcluster",
		"--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls="+loop(etcdClient), "--advertise-client-urls="+loop(etcdClient),
		"--listen-peer-urls="+loop(etcdPeer), "--initial-advertise-peer-urls="+loop(etcdPeer),
		"--initial-cluster=testcluster="+loop(etcdPeer),
		"--unsafe-no-fsync", "--log-level=warn",
	); err != nil {
		return nil, err
	}
	if err := waitHTTP(ctx, http.DefaultClient, loop(etcdClient)+"/health", 60*time.Second); err != nil {
		return nil, fmt.Errorf("etcd did not become healthy (see %s): %w", filepath.Join(dir, "logs", binEtcd+".log"), err)
	}
	apiServerArgs := []string{
		"--etcd-servers=" + loop(etcdClient),
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(apiPort),
		"--endpoint-reconciler-type=none",
		"--cert-dir=" + filepath.Join(dir, "pki"),
		"--tls-cert-file=" + p.serverCert, "--tls-private-key-file=" + p.serverKey,
		"--client-ca-file=" + p.caCert,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + p.saPub,
		"--service-account-signing-key-file=" + p.saKey,
		"--service-cluster-ip-range=10.96.0.0/16",
		"--authorization-mode=Node,RBAC",
		"--allow-privileged=true",
		"--profiling=false",
	}
	var auditLog string
	if len(opts.AuditNamespaces) > 0 {
		auditLog = filepath.Join(dir, "logs", "audit.log")
		policy := filepath.Join(dir, "audit-policy.yaml")
		if err := os.WriteFile(policy, auditPolicy(opts.AuditNamespaces), 0o600); err != nil {
			return nil, fmt.Errorf("writing the audit policy: %w", err)
		}
		apiServerArgs = append(apiServerArgs, "--audit-policy-file="+policy, "--audit-log-path="+auditLog,
			"--audit-log-format=json", "--audit-log-mode=blocking")
	}
	if err := run(binAPIServer, apiServerArgs...); err != nil {
		return nil, err
	}
	tlsClient, err := adminHTTPClient(p)
	if err != nil {
		return nil, err
	}
	if err := waitHTTP(ctx, tlsClient, host+"/readyz", 120*time.Second); err != nil {
		return nil, fmt.Errorf("kube-apiserver did not become ready (see %s): %w", filepath.Join(dir, "logs", binAPIServer+".log"), err)
	}
	if err := run(binControllerManager,
		"--kubeconfig="+kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(kcmPort),
		"--controllers=*,-nodeipam",
		// Provisions the default StorageClass's volumes (hostPath
		// directories under /tmp), so PersistentVolumeClaims bind.
		"--enable-hostpath-provisioner=true",
		"--service-account-private-key-file="+p.saKey,
		"--root-ca-file="+p.caCert,
		"--cluster-signing-cert-file="+p.caCert, "--cluster-signing-key-file="+p.caKey,
		"--leader-elect=false",
		"--profiling=false",
		// Longer than any outage StopComponent makes in a test: past it
		// the node goes NotReady and its pods' Ready condition False,
		// which kwok does not set back when the node returns.
		"--node-monitor-grace-period=10m",
	); err != nil {
		return nil, err
	}
	if err := run(binScheduler,
		"--kubeconfig="+kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(schedPort),
		"--leader-elect=false",
		"--profiling=false",
	); err != nil {
		return nil, err
	}
	if err := run(binKwok,
		"--config="+kwokPath,
		"--kubeconfig="+kubeconfig,
		"--manage-all-nodes=true",
		"--server-address=127.0.0.1:"+strconv.Itoa(kwokPort),
		"--node-ip=10.0.0.1",
		"--cidr=10.0.0.0/16",
		"--node-lease-duration-seconds=40",
	); err != nil {
		return nil, err
	}
	if err := waitNode(ctx, kubeconfig, log); err != nil {
		return nil, fmt.Errorf("%w (logs in %s)", err, filepath.Join(dir, "logs"))
	}
	if err := createStorageClass(ctx, kubeconfig); err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "testcluster: ready, KUBECONFIG=%s\n", kubeconfig)
	return &Cluster{Dir: dir, Kubeconfig: kubeconfig, Host: host, AuditLog: auditLog}, nil
}

// Stop stops the cluster whose directory is dir and removes the directory.
// A directory without a running cluster is only removed.
func Stop(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, stateFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("reading cluster state: %w", err)
	default:
		var st state
		if err := json.Unmarshal(b, &st); err != nil {
			return fmt.Errorf("parsing cluster state %s: %w", filepath.Join(dir, stateFile), err)
		}
		stopPIDs(st.pids())
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing cluster directory: %w", err)
	}
	return nil
}

// Running returns the cluster running in dir, or nil when none is: no state
// there, or one of its processes has exited.
func Running(dir string) *Cluster {
	b, err := os.ReadFile(filepath.Join(dir, stateFile))
	if err != nil {
		return nil
	}
	var st state
	if json.Unmarshal(b, &st) != nil || len(st.Procs) < 5 {
		return nil
	}
	for _, pid := range st.pids() {
		if syscall.Kill(pid, 0) != nil {
			return nil
		}
	}
	return &Cluster{Dir: dir, Kubeconfig: filepath.Join(dir, "kubeconfig")}
}

// Stop stops the cluster and removes its directory.
func (c *Cluster) Stop() error { return Stop(c.Dir) }

// StopComponent stops one process of the cluster (ComponentEtcd,
// ComponentAPIServer) as an outage would; the others keep running.
func (c *Cluster) StopComponent(name string) error {
	st, i, err := c.component(name)
	if err != nil {
		return err
	}
	// Killed, as a crash or a lost machine would: no graceful shutdown.
	pid := st.Procs[i].PID
	_ = syscall.Kill(pid, syscall.SIGKILL)
	waitGone(pid, 10*time.Second)
	return nil
}

// StartComponent starts a component StopComponent stopped, on the same
// ports and data, and waits until the API server is ready again.
func (c *Cluster) StartComponent(ctx context.Context, name string) error {
	st, i, err := c.component(name)
	if err != nil {
		return err
	}
	p := &st.Procs[i]
	if syscall.Kill(p.PID, 0) == nil {
		return fmt.Errorf("%s is running (pid %d)", name, p.PID)
	}
	pid, err := spawn(filepath.Join(st.BinDir, name), p.Args, filepath.Join(c.Dir, "logs", name+".log"), st.Detach)
	if err != nil {
		return err
	}
	p.PID = pid
	if err := writeState(c.Dir, st); err != nil {
		return err
	}
	return waitReady(ctx, c.Kubeconfig, 120*time.Second)
}

func (c *Cluster) component(name string) (*state, int, error) {
	b, err := os.ReadFile(filepath.Join(c.Dir, stateFile))
	if err != nil {
		return nil, 0, fmt.Errorf("reading cluster state: %w", err)
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, 0, fmt.Errorf("parsing cluster state: %w", err)
	}
	for i, p := range st.Procs {
		if p.Name == name {
			return &st, i, nil
		}
	}
	return nil, 0, fmt.Errorf("the cluster in %s has no process %q", c.Dir, name)
}

// waitReady waits until the API server answers /readyz (etcd included).
func waitReady(ctx context.Context, kubeconfig string, timeout time.Duration) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	cfg.Timeout = 5 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		_, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the API server to be ready: %w (last error: %w)", ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// stopPIDs stops processes politely and then by force: the first (etcd, or
// source-controller) after the others, which stop together (one after
// another, each waiting for the one before to shut down, a cluster took
// 10 s to stop; 4 s now).
func stopPIDs(pids []int) {
	if len(pids) == 0 {
		return
	}
	stopTogether(pids[1:])
	stopTogether(pids[:1])
}

// stopTogether sends pids SIGTERM, waits up to 10 s for them to exit, then
// kills those left.
func stopTogether(pids []int) {
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for time.Now().Before(deadline) && syscall.Kill(pid, 0) == nil {
			time.Sleep(50 * time.Millisecond)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
		waitGone(pid, 5*time.Second)
	}
}

// waitGone waits until pid has exited and been reaped (by the goroutine
// spawn started, or by init for detached processes).
func waitGone(pid int, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && syscall.Kill(pid, 0) == nil {
		time.Sleep(20 * time.Millisecond)
	}
}

func spawn(bin string, args []string, logPath string, detach bool) (int, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, fmt.Errorf("opening log file: %w", err)
	}
	defer logFile.Close()
	// Not bound to a context: the process outlives this call, and the
	// command line's "up" outlives this process.
	cmd := exec.Command(bin, args...) //nolint:noctx // see above
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = sysProcAttr(detach)
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting %s: %w", filepath.Base(bin), err)
	}
	pid := cmd.Process.Pid
	go func() { _ = cmd.Wait() }() // reap
	return pid, nil
}

func writeState(dir string, st *state) error {
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("encoding cluster state: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, stateFile), b, 0o600); err != nil {
		return fmt.Errorf("writing cluster state: %w", err)
	}
	return nil
}

func writeKubeconfig(path, host string, p *pki) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["testcluster"] = &clientcmdapi.Cluster{Server: host, CertificateAuthority: p.caCert}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificate: p.adminCert, ClientKey: p.adminKey}
	cfg.Contexts["testcluster"] = &clientcmdapi.Context{Cluster: "testcluster", AuthInfo: "admin", Namespace: "default"}
	cfg.CurrentContext = "testcluster"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	return nil
}

func adminHTTPClient(p *pki) (*http.Client, error) {
	caPEM, err := os.ReadFile(p.caCert)
	if err != nil {
		return nil, fmt.Errorf("reading CA: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	cert, err := tls.LoadX509KeyPair(p.adminCert, p.adminKey)
	if err != nil {
		return nil, fmt.Errorf("loading admin certificate: %w", err)
	}
	return &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}},
	}, nil
}

func waitHTTP(ctx context.Context, client *http.Client, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("building request: %w", err)
		}
		resp, err := client.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("%s answered %s", url, resp.Status)
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last error: %w)", url, ctx.Err(), last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitNode registers the simulated node and waits until it is Ready, without
// the not-ready taint, and the default service account exists.
func waitNode(ctx context.Context, kubeconfig string, log io.Writer) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 120*time.Second)
	defer cancel()
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        NodeName,
			Labels:      nodeLabels,
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
		},
	}
	if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("registering node: %w", err)
	}
	fmt.Fprintln(log, "testcluster: waiting for the node to become Ready")
	var why string
	for {
		why = nodeNotReady(ctx, cs)
		if why == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster did not become ready: %s", why)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// nodeLabels are the well-known labels a cloud's node carries: charts
// select nodes by OS and architecture and spread pods over hostnames and
// zones (a spread constraint on a label no node has schedules nothing).
var nodeLabels = map[string]string{
	"kubernetes.io/hostname":           NodeName,
	"kubernetes.io/os":                 "linux",
	"kubernetes.io/arch":               "amd64",
	"node.kubernetes.io/instance-type": "kwok",
	"topology.kubernetes.io/region":    "local",
	"topology.kubernetes.io/zone":      "local-a",
	"type":                             "kwok",
}

// createStorageClass makes StorageClassName, provisioned by the
// controller-manager's hostPath provisioner, the cluster's default.
func createStorageClass(ctx context.Context, kubeconfig string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	reclaim, binding := corev1.PersistentVolumeReclaimDelete, storagev1.VolumeBindingImmediate
	sc := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: StorageClassName, Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner:       "kubernetes.io/host-path",
		ReclaimPolicy:     &reclaim,
		VolumeBindingMode: &binding,
	}
	if _, err := cs.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the default StorageClass: %w", err)
	}
	return nil
}

func nodeNotReady(ctx context.Context, cs kubernetes.Interface) string {
	n, err := cs.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
	if err != nil {
		return "reading node: " + err.Error()
	}
	ready := false
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			ready = true
		}
	}
	if !ready {
		return "node is not Ready"
	}
	for _, t := range n.Spec.Taints {
		return "node still has taint " + t.Key
	}
	if _, err := cs.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{}); err != nil {
		return "default service account: " + err.Error()
	}
	return ""
}

// auditPolicy logs the requests in namespaces at the Metadata level, once
// each (when the response is complete), and nothing else.
func auditPolicy(namespaces []string) []byte {
	quoted := make([]string, len(namespaces))
	for i, ns := range namespaces {
		quoted[i] = strconv.Quote(ns)
	}
	return []byte(`apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
  - level: Metadata
    namespaces: [` + strings.Join(quoted, ", ") + `]
  - level: None
`)
}
