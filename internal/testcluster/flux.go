//go:build unix

package testcluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/semver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
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

// FluxModules are the Flux controllers that build from the Go module
// proxy, by name: the version each is built at when the sources directory
// holds no archive of it, the newest whose every dependency the proxy
// serves (source-controller v1.9.4 and later, and helm-controller v1.6.5
// and v1.7, need module versions it does not serve). Their go.mod needs
// an edit to build outside Flux's repository (fluxModuleEdits).
var FluxModules = map[string]string{
	SourceController: "v1.9.3",
	HelmController:   "v1.6.4",
}

// fluxModuleEdits are the go.mod edits that make a controller's module
// build on its own: its nested ./api module, not in the module zip, comes
// from the proxy at the required version.
var fluxModuleEdits = map[string][]string{
	SourceController: {"-dropreplace=github.com/fluxcd/source-controller/api"},
	HelmController:   {"-dropreplace=github.com/fluxcd/helm-controller/api"},
}

// FluxController is a Flux controller built from its source archive or
// its module: its binary and the CRDs of its API.
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

// FluxVersions are the controller versions the tests can run, by name,
// oldest first: FluxModules' and those of the archives in the directory
// FluxSourcesEnv names (when set), the newest patch release of each minor
// version only (a patch release fixes what the one before it tested).
func FluxVersions() (map[string][]string, error) {
	out := map[string][]string{}
	if dir := os.Getenv(FluxSourcesEnv); dir != "" {
		archives, err := FluxArchives(dir)
		if err != nil {
			return nil, err
		}
		maps.Copy(out, archives)
	}
	for name, version := range FluxModules {
		if !slices.Contains(out[name], version) {
			out[name] = append(out[name], version)
		}
	}
	for name, versions := range out {
		semver.Sort(versions)
		out[name] = newestPatches(versions)
	}
	return out, nil
}

// newestPatches keeps, of versions sorted oldest first, the last of each
// minor version.
func newestPatches(versions []string) []string {
	var out []string
	for i, v := range versions {
		if i+1 == len(versions) || semver.MajorMinor(versions[i+1]) != semver.MajorMinor(v) {
			out = append(out, v)
		}
	}
	return out
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

// BuildFlux builds the controller name at version, from its archive in the
// directory FluxSourcesEnv names when there is one, else from the Go module
// proxy (FluxModules), unless the build is cached under DefaultCacheDir.
func BuildFlux(ctx context.Context, name, version string, log io.Writer) (*FluxController, error) {
	if dir := os.Getenv(FluxSourcesEnv); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, name+"-"+version+".tar.gz")); err == nil {
			return BuildFluxController(ctx, dir, "", name, version, log)
		}
	}
	if FluxModules[name] != version {
		return nil, fmt.Errorf("%s %s: no archive of it in %s=%q, and the Go module proxy's build is %s", name, version, FluxSourcesEnv, os.Getenv(FluxSourcesEnv), FluxModules[name])
	}
	return BuildFluxModule(ctx, "", name, version, log)
}

// BuildFluxController builds the controller name at version from its
// archive in sourcesDir, unless a build of the same archive (by content)
// with the same Go is cached under cacheDir (DefaultCacheDir when empty).
// Its modules come from the module proxy (the archives carry go.sum).
func BuildFluxController(ctx context.Context, sourcesDir, cacheDir, name, version string, log io.Writer) (*FluxController, error) {
	if log == nil {
		log = io.Discard
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
	return buildFlux(ctx, cacheDir, key, name, version, log, func(src string) error {
		untar := exec.CommandContext(ctx, "tar", "-xzf", archive, "-C", src, "--strip-components=1") //nolint:gosec // an archive of the directory the developer names
		untar.Stdout, untar.Stderr = log, log
		if err := untar.Run(); err != nil {
			return fmt.Errorf("extracting %s: %w", filepath.Base(archive), err)
		}
		return nil
	})
}

// BuildFluxModule builds the controller name at version from its module
// on the Go module proxy, its go.mod edited (fluxModuleEdits), unless the
// build is cached under cacheDir (DefaultCacheDir when empty).
func BuildFluxModule(ctx context.Context, cacheDir, name, version string, log io.Writer) (*FluxController, error) {
	if log == nil {
		log = io.Discard
	}
	h := sha256.New()
	fmt.Fprintln(h, "flux module 1", runtime.Version(), runtime.GOOS, runtime.GOARCH, strings.Join(fluxModuleEdits[name], " "))
	key := name + "-" + version + "-module-" + hex.EncodeToString(h.Sum(nil))[:12]
	module := "github.com/fluxcd/" + name + "@" + version
	return buildFlux(ctx, cacheDir, key, name, version, log, func(src string) error {
		fmt.Fprintf(log, "testcluster: downloading %s from the Go module proxy\n", module)
		dir, err := downloadModule(ctx, module, log)
		if err != nil {
			return err
		}
		// The module cache is read-only; os.CopyFS makes the copy writable.
		if err := os.CopyFS(src, os.DirFS(dir)); err != nil {
			return fmt.Errorf("copying %s out of the module cache: %w", module, err)
		}
		edit := exec.CommandContext(ctx, "go", append([]string{"mod", "edit"}, fluxModuleEdits[name]...)...)
		edit.Dir = src
		edit.Env = append(os.Environ(), "GOFLAGS=")
		if out, err := edit.CombinedOutput(); err != nil {
			return fmt.Errorf("editing the go.mod of %s: %w: %s", module, err, out)
		}
		return nil
	})
}

// buildFlux builds the controller name at version into the cache entry key
// from the sources that prepare writes into an empty directory, unless the
// entry is complete.
func buildFlux(ctx context.Context, cacheDir, key, name, version string, log io.Writer, prepare func(src string) error) (*FluxController, error) {
	if cacheDir == "" {
		var err error
		if cacheDir, err = DefaultCacheDir(); err != nil {
			return nil, err
		}
	}
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
	if err := prepare(src); err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "testcluster: building %s %s\n", name, version)
	start := time.Now()
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(tmp, "out", name), ".")
	build.Dir = src
	// The sources' go.mod is complete but their go.sum may lack lines the
	// build adds: -mod=mod, in the copy only.
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
	// Namespace, when set, is the one namespace the controllers watch
	// (their RUNTIME_NAMESPACE, with --watch-all-namespaces=false), so that
	// controllers of several tests run side by side, each on the objects
	// of its own namespace. Empty: FluxNamespace, and they watch all.
	Namespace string
	// Log receives progress lines; nil discards them.
	Log io.Writer
	// Args are flags added to each controller's own, by controller name,
	// e.g. a fleet's tuning (source-controller's --helm-cache-max-size,
	// helm-controller's --concurrent); a flag given again wins.
	Args map[string][]string
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
		if err := applyCRDs(ctx, dyn, cs.Discovery(), c.CRDs); err != nil {
			return nil, fmt.Errorf("%s %s: %w", c.Name, c.Version, err)
		}
	}
	runtimeNamespace, scope := FluxNamespace, "--watch-all-namespaces=true"
	if opts.Namespace != "" {
		runtimeNamespace, scope = opts.Namespace, "--watch-all-namespaces=false"
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: runtimeNamespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating namespace %s: %w", runtimeNamespace, err)
	}
	f := &Flux{Logs: map[string]string{}, Versions: map[string]string{}}
	defer func() {
		if err != nil {
			f.Stop()
		}
	}()
	env := append(os.Environ(), "KUBECONFIG="+opts.Kubeconfig, "RUNTIME_NAMESPACE="+runtimeNamespace)
	for _, c := range opts.Controllers {
		f.Versions[c.Name] = c.Version
		ports, err := freePorts(3)
		if err != nil {
			return nil, err
		}
		addr := func(i int) string { return "127.0.0.1:" + strconv.Itoa(ports[i]) }
		args := []string{"--metrics-addr=" + addr(0), "--health-addr=" + addr(1), "--log-level=debug", scope}
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
		args = append(args, opts.Args[c.Name]...)
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

// ApplyCRDs applies the CRD manifests files to the cluster of kubeconfig
// and waits until each is established: for the CRDs of an API version no
// controller here runs, generated from its API module, to test what its
// API server accepts.
func ApplyCRDs(ctx context.Context, kubeconfig string, files ...string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	return applyCRDs(ctx, dyn, disc, files)
}

// applyCRDs server-side applies the CRD files (too large for the
// last-applied annotation of a client-side apply) and waits until each is
// established and its kind is in the API server's discovery, which follows
// Established by a moment: a client that looks the kind up on return
// finds it.
func applyCRDs(ctx context.Context, dyn dynamic.Interface, disc discovery.DiscoveryInterface, files []string) error {
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
		if err := waitDiscovered(ctx, disc, &obj); err != nil {
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

// waitDiscovered waits until discovery lists the CRD's resource in each
// version it serves.
func waitDiscovered(ctx context.Context, disc discovery.DiscoveryInterface, crd *unstructured.Unstructured) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		m, _ := v.(map[string]any)
		name, _ := m["name"].(string)
		if served, _ := m["served"].(bool); !served || name == "" {
			continue
		}
		gv := group + "/" + name
		for {
			list, err := disc.ServerResourcesForGroupVersion(gv)
			if err == nil && slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == plural }) {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("CRD %s: %s not in discovery: %w", crd.GetName(), gv, errors.Join(ctx.Err(), err))
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

// FluxBuildTimeout bounds BuildFluxForTests: a first build of every
// controller takes many minutes on 2 busy cores, and is cached after.
const FluxBuildTimeout = 45 * time.Minute

// BuildFluxForTests builds (or finds cached) the controllers the tests
// start with StartFluxWith: the newest source-controller and every
// helm-controller of FluxVersions, one at a time, logging each. A test
// package calls it before its tests, so that no test's own deadline is
// spent on a first build.
func BuildFluxForTests(ctx context.Context, log io.Writer) error {
	if log == nil {
		log = io.Discard
	}
	versions, err := FluxVersions()
	if err != nil {
		return err
	}
	sources := versions[SourceController]
	builds := map[string][]string{SourceController: sources[len(sources)-1:], HelmController: versions[HelmController]}
	for _, name := range []string{SourceController, HelmController} {
		for _, version := range builds[name] {
			start := time.Now()
			c, err := BuildFlux(ctx, name, version, log)
			if err != nil {
				return err
			}
			fmt.Fprintf(log, "testcluster: %s %s in %s (%s)\n", name, version, c.Bin, time.Since(start).Round(time.Second))
		}
	}
	return nil
}

// StartFluxWith builds (or takes from the cache) the newest
// source-controller of FluxVersions and the helm-controller at version,
// and starts both as opts says (its Controllers are set here).
func StartFluxWith(ctx context.Context, opts FluxOptions, helmControllerVersion string) (*Flux, error) {
	versions, err := FluxVersions()
	if err != nil {
		return nil, err
	}
	sources := versions[SourceController]
	sc, err := BuildFlux(ctx, SourceController, sources[len(sources)-1], opts.Log)
	if err != nil {
		return nil, err
	}
	hc, err := BuildFlux(ctx, HelmController, helmControllerVersion, opts.Log)
	if err != nil {
		return nil, err
	}
	opts.Controllers = []*FluxController{sc, hc}
	return StartFlux(ctx, opts)
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

// FluxCRDs are the CRD manifests of the controller name at version, read
// from its sources without building it: its archive in the directory
// FluxSourcesEnv names when there is one (extracted once under
// DefaultCacheDir), else its module on the Go module proxy. A test of
// the API alone, with no controller at work, needs no more.
func FluxCRDs(ctx context.Context, name, version string, log io.Writer) ([]string, error) {
	if log == nil {
		log = io.Discard
	}
	if dir := os.Getenv(FluxSourcesEnv); dir != "" {
		archive := filepath.Join(dir, name+"-"+version+".tar.gz")
		if _, err := os.Stat(archive); err == nil {
			return archiveCRDs(ctx, archive, name, version, log)
		}
	}
	if FluxModules[name] != version {
		return nil, fmt.Errorf("%s %s: no archive of it in %s=%q, and the Go module proxy's is %s", name, version, FluxSourcesEnv, os.Getenv(FluxSourcesEnv), FluxModules[name])
	}
	dir, err := downloadModule(ctx, "github.com/fluxcd/"+name+"@"+version, log)
	if err != nil {
		return nil, err
	}
	return crdFiles(filepath.Join(dir, "config", "crd", "bases"), name, version)
}

// downloadModule downloads module (path@version) into the module cache
// and returns its directory there, which is read-only.
func downloadModule(ctx context.Context, module string, log io.Writer) (string, error) {
	download := exec.CommandContext(ctx, "go", "mod", "download", "-json", module)
	download.Dir = os.TempDir() // outside any module
	download.Env = append(os.Environ(), "GOFLAGS=")
	download.Stderr = log
	out, err := download.Output()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &info); err != nil || jerr != nil || info.Dir == "" {
		return "", fmt.Errorf("downloading %s from the Go module proxy: %w %s", module, errors.Join(err, jerr), info.Error)
	}
	return info.Dir, nil
}

// archiveCRDs extracts the CRDs of a controller's source archive into
// the cache, once per archive content.
func archiveCRDs(ctx context.Context, archive, name, version string, log io.Writer) ([]string, error) {
	b, err := os.ReadFile(archive)
	if err != nil {
		return nil, fmt.Errorf("reading the %s %s sources: %w", name, version, err)
	}
	cacheDir, err := DefaultCacheDir()
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	dir := filepath.Join(cacheDir, "flux", name+"-"+version+"-crds-"+hex.EncodeToString(sum[:])[:12])
	if files, err := crdFiles(dir, name, version); err == nil {
		return files, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o750); err != nil {
		return nil, fmt.Errorf("creating cache directory: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".tmp-")
	if err != nil {
		return nil, fmt.Errorf("creating extraction directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	untar := exec.CommandContext(ctx, "tar", "-xzf", archive, "-C", tmp, "--strip-components=1", "--wildcards", "*/config/crd/bases/*.yaml") //nolint:gosec // an archive of the directory the developer names
	untar.Stdout, untar.Stderr = log, log
	if err := untar.Run(); err != nil {
		return nil, fmt.Errorf("extracting the CRDs of %s: %w", filepath.Base(archive), err)
	}
	// Another process may have extracted it meanwhile: either copy will do.
	if err := os.Rename(filepath.Join(tmp, "config", "crd", "bases"), dir); err != nil {
		if _, statErr := os.Stat(dir); statErr != nil {
			return nil, fmt.Errorf("moving the CRDs into the cache: %w", err)
		}
	}
	return crdFiles(dir, name, version)
}

func crdFiles(dir, name, version string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("%s %s has no CRDs in config/crd/bases", name, version)
	}
	return files, nil
}

// InstallFluxCRDs applies the CRDs of the newest source-controller and
// of helm-controller at helmControllerVersion (those StartFluxWith runs)
// to the cluster of kubeconfig, building neither.
func InstallFluxCRDs(ctx context.Context, kubeconfig, helmControllerVersion string, log io.Writer) error {
	versions, err := FluxVersions()
	if err != nil {
		return err
	}
	sources := versions[SourceController]
	var files []string
	for _, c := range [][2]string{{SourceController, sources[len(sources)-1]}, {HelmController, helmControllerVersion}} {
		crds, err := FluxCRDs(ctx, c[0], c[1], log)
		if err != nil {
			return err
		}
		files = append(files, crds...)
	}
	return ApplyCRDs(ctx, kubeconfig, files...)
}
