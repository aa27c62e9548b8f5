//go:build unix

package testcluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// FluxSourcesEnv names the directory holding the source archives of Flux's
// controllers (source-controller-vX.tar.gz, helm-controller-vX.tar.gz).
const FluxSourcesEnv = "HELMRELEASE_TEST_FLUX_SOURCES"

// FluxNamespace is the controllers' own namespace (RUNTIME_NAMESPACE).
const FluxNamespace = "flux-system"

// Flux controller archives, as named in the sources directory.
const (
	SourceController = "source-controller"
	HelmController   = "helm-controller"
)

// FluxController is a Flux controller built from its source archive: its
// binary and the CRDs of its API.
type FluxController struct {
	// Name and Version, as the archive names them (helm-controller, v1.5.5).
	Name, Version string
	// Bin is the controller's executable.
	Bin string
	// CRDs are the CRD manifests of the controller's API.
	CRDs []string
}

// FluxArchives are the controller archives in dir, by name, each name's
// versions in the order of their file names.
func FluxArchives(dir string) (map[string][]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the Flux sources directory: %w", err)
	}
	out := map[string][]string{}
	for _, e := range entries {
		name, version, ok := archiveName(e.Name())
		if ok {
			out[name] = append(out[name], version)
		}
	}
	return out, nil
}

// archiveName splits "helm-controller-v1.5.5.tar.gz".
func archiveName(file string) (name, version string, ok bool) {
	base, found := strings.CutSuffix(file, ".tar.gz")
	if !found {
		return "", "", false
	}
	i := strings.LastIndex(base, "-v")
	if i < 0 {
		return "", "", false
	}
	return base[:i], base[i+1:], true
}

// BuildFluxController builds the controller name at version from its
// archive in sourcesDir, unless a build of the same archive (by content)
// with the same Go is cached under cacheDir (DefaultCacheDir when empty).
// Its modules come from the module proxy (the archives carry go.sum).
func BuildFluxController(ctx context.Context, sourcesDir, cacheDir, name, version string, log io.Writer) (*FluxController, error) {
	if log == nil {
		log = io.Discard
	}
	if cacheDir == "" {
		var err error
		if cacheDir, err = DefaultCacheDir(); err != nil {
			return nil, err
		}
	}
	archive := filepath.Join(sourcesDir, name+"-"+version+".tar.gz")
	b, err := os.ReadFile(archive)
	if err != nil {
		return nil, fmt.Errorf("reading the %s %s sources: %w", name, version, err)
	}
	h := sha256.New()
	fmt.Fprintln(h, "flux 1", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	h.Write(b)
	key := name + "-" + version + "-" + hex.EncodeToString(h.Sum(nil))[:12]
	dir := filepath.Join(cacheDir, "flux", key)
	if c, ok := builtController(dir, name, version); ok {
		return c, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o750); err != nil {
		return nil, fmt.Errorf("creating cache directory: %w", err)
	}
	unlock, err := lockFile(dir + ".lock")
	if err != nil {
		return nil, err
	}
	defer unlock()
	if c, ok := builtController(dir, name, version); ok {
		return c, nil
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), key+".tmp-")
	if err != nil {
		return nil, fmt.Errorf("creating build directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "src")
	if err := os.Mkdir(src, 0o750); err != nil {
		return nil, fmt.Errorf("creating build directory: %w", err)
	}
	untar := exec.CommandContext(ctx, "tar", "-xzf", archive, "-C", src, "--strip-components=1")
	untar.Stdout, untar.Stderr = log, log
	if err := untar.Run(); err != nil {
		return nil, fmt.Errorf("extracting %s: %w", filepath.Base(archive), err)
	}
	fmt.Fprintf(log, "testcluster: building %s %s\n", name, version)
	start := time.Now()
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(tmp, "out", name), ".")
	build.Dir = src
	// The archives' go.mod is complete but their go.sum may lack lines the
	// build adds: -mod=mod, in the extracted copy only.
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod")
	build.Stdout, build.Stderr = log, log
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("building %s %s: %w", name, version, err)
	}
	fmt.Fprintf(log, "testcluster: built %s %s in %s\n", name, version, time.Since(start).Round(time.Second))
	crds, err := filepath.Glob(filepath.Join(src, "config", "crd", "bases", "*.yaml"))
	if err != nil || len(crds) == 0 {
		return nil, fmt.Errorf("%s %s has no CRDs in config/crd/bases", name, version)
	}
	if err := os.MkdirAll(filepath.Join(tmp, "out", "crds"), 0o750); err != nil {
		return nil, fmt.Errorf("creating CRD directory: %w", err)
	}
	for _, c := range crds {
		b, err := os.ReadFile(c)
		if err != nil {
			return nil, fmt.Errorf("reading CRD: %w", err)
		}
		if err := os.WriteFile(filepath.Join(tmp, "out", "crds", filepath.Base(c)), b, 0o600); err != nil {
			return nil, fmt.Errorf("copying CRD: %w", err)
		}
	}
	if err := os.Rename(filepath.Join(tmp, "out"), dir); err != nil {
		return nil, fmt.Errorf("moving the build into the cache: %w", err)
	}
	c, ok := builtController(dir, name, version)
	if !ok {
		return nil, fmt.Errorf("%s %s: build incomplete in %s", name, version, dir)
	}
	return c, nil
}

func builtController(dir, name, version string) (*FluxController, bool) {
	bin := filepath.Join(dir, name)
	if _, err := os.Stat(bin); err != nil {
		return nil, false
	}
	crds, _ := filepath.Glob(filepath.Join(dir, "crds", "*.yaml"))
	if len(crds) == 0 {
		return nil, false
	}
	return &FluxController{Name: name, Version: version, Bin: bin, CRDs: crds}, true
}

// FluxOptions configure StartFlux.
type FluxOptions struct {
	// Kubeconfig of the cluster the controllers reconcile.
	Kubeconfig string
	// Dir receives the controllers' logs and source-controller's storage.
	Dir string
	// Controllers to run: each one's CRDs are applied first (in order, so
	// a later version's CRD replaces an earlier one's).
	Controllers []*FluxController
	// Log receives progress lines; nil discards them.
	Log io.Writer
}

// Flux is a set of Flux controllers running as processes of this one.
type Flux struct {
	pids []int
	// Logs are the controllers' log files, by name.
	Logs map[string]string
	// Versions are the controllers' versions, by name.
	Versions map[string]string
}

// StartFlux applies the controllers' CRDs, creates FluxNamespace and
// starts the controllers against the cluster on loopback ports, returning
// once each reports ready. They die with this process.
func StartFlux(ctx context.Context, opts FluxOptions) (_ *Flux, err error) {
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	if err := os.MkdirAll(opts.Dir, 0o750); err != nil {
		return nil, fmt.Errorf("creating the Flux directory: %w", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", opts.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	for _, c := range opts.Controllers {
		if err := applyCRDs(ctx, dyn, c.CRDs); err != nil {
			return nil, fmt.Errorf("%s %s: %w", c.Name, c.Version, err)
		}
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: FluxNamespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating namespace %s: %w", FluxNamespace, err)
	}
	f := &Flux{Logs: map[string]string{}, Versions: map[string]string{}}
	defer func() {
		if err != nil {
			f.Stop()
		}
	}()
	env := append(os.Environ(), "KUBECONFIG="+opts.Kubeconfig, "RUNTIME_NAMESPACE="+FluxNamespace)
	for _, c := range opts.Controllers {
		f.Versions[c.Name] = c.Version
		ports, err := freePorts(3)
		if err != nil {
			return nil, err
		}
		addr := func(i int) string { return "127.0.0.1:" + strconv.Itoa(ports[i]) }
		args := []string{"--metrics-addr=" + addr(0), "--health-addr=" + addr(1), "--log-level=debug"}
		switch c.Name {
		case HelmController:
			// Stopped in tests: no release is left half-done by waiting.
			args = append(args, "--graceful-shutdown-timeout=5s")
		case SourceController:
			storage := filepath.Join(opts.Dir, "storage")
			if err := os.MkdirAll(storage, 0o750); err != nil {
				return nil, fmt.Errorf("creating source-controller's storage: %w", err)
			}
			args = append(args, "--storage-path="+storage, "--storage-addr="+addr(2), "--storage-adv-addr="+addr(2))
		}
		logPath := filepath.Join(opts.Dir, c.Name+".log")
		pid, err := spawnEnv(c.Bin, args, env, logPath)
		if err != nil {
			return nil, err
		}
		f.pids = append(f.pids, pid)
		f.Logs[c.Name] = logPath
		if err := waitHTTP(ctx, http.DefaultClient, "http://"+addr(1)+"/readyz", 2*time.Minute); err != nil {
			return nil, fmt.Errorf("%s %s not ready: %w\n%s", c.Name, c.Version, err, logTail(logPath, 20))
		}
		fmt.Fprintf(log, "testcluster: %s %s running, log %s\n", c.Name, c.Version, logPath)
	}
	return f, nil
}

// Stop stops the controllers. Objects they reconciled stay as they are.
func (f *Flux) Stop() {
	stopPIDs(f.pids)
	f.pids = nil
}

// spawnEnv starts bin with env, its output to logPath; the process dies
// with this one.
func spawnEnv(bin string, args, env []string, logPath string) (int, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, fmt.Errorf("opening log file: %w", err)
	}
	defer logFile.Close()
	cmd := exec.Command(bin, args...) //nolint:noctx // outlives this call; stopped by Flux.Stop
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = sysProcAttr(false)
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting %s: %w", filepath.Base(bin), err)
	}
	pid := cmd.Process.Pid
	go func() { _ = cmd.Wait() }() // reap
	return pid, nil
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// applyCRDs server-side applies the CRD files (too large for the
// last-applied annotation of a client-side apply) and waits until each is
// established.
func applyCRDs(ctx context.Context, dyn dynamic.Interface, files []string) error {
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("reading CRD: %w", err)
		}
		var obj unstructured.Unstructured
		if err := yaml.Unmarshal(b, &obj.Object); err != nil {
			return fmt.Errorf("parsing CRD %s: %w", filepath.Base(file), err)
		}
		data, err := obj.MarshalJSON()
		if err != nil {
			return fmt.Errorf("encoding CRD %s: %w", filepath.Base(file), err)
		}
		force := true
		if _, err := dyn.Resource(crdResource).Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: "testcluster", Force: &force}); err != nil {
			return fmt.Errorf("applying CRD %s: %w", obj.GetName(), err)
		}
		if err := waitEstablished(ctx, dyn, obj.GetName()); err != nil {
			return err
		}
	}
	return nil
}

func waitEstablished(ctx context.Context, dyn dynamic.Interface, name string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		crd, err := dyn.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			for _, c := range conds {
				m, _ := c.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("CRD %s not established: %w", name, errors.Join(ctx.Err(), err))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// FluxSourcesDir is the directory FluxSourcesEnv names when it holds a
// source-controller and a helm-controller archive; empty otherwise.
func FluxSourcesDir() string {
	dir := os.Getenv(FluxSourcesEnv)
	if dir == "" {
		return ""
	}
	archives, err := FluxArchives(dir)
	if err != nil || len(archives[SourceController]) == 0 || len(archives[HelmController]) == 0 {
		return ""
	}
	return dir
}

// StartFluxWith builds (or takes from the cache) the newest
// source-controller of sourcesDir and its helm-controller at version, and
// starts both against the cluster of kubeconfig, with logs and storage in
// dir.
func StartFluxWith(ctx context.Context, sourcesDir, kubeconfig, dir, helmControllerVersion string, log io.Writer) (*Flux, error) {
	archives, err := FluxArchives(sourcesDir)
	if err != nil {
		return nil, err
	}
	sources := archives[SourceController]
	if len(sources) == 0 {
		return nil, fmt.Errorf("no %s archive in %s", SourceController, sourcesDir)
	}
	sc, err := BuildFluxController(ctx, sourcesDir, "", SourceController, sources[len(sources)-1], log)
	if err != nil {
		return nil, err
	}
	hc, err := BuildFluxController(ctx, sourcesDir, "", HelmController, helmControllerVersion, log)
	if err != nil {
		return nil, err
	}
	return StartFlux(ctx, FluxOptions{Kubeconfig: kubeconfig, Dir: dir, Controllers: []*FluxController{sc, hc}, Log: log})
}

// logTail is the last n lines of the log file at path.
func logTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
