//go:build unix

package testcluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/mod/modfile"
)

// The cluster's processes, as named in the bin directory: each is a
// symbolic link to binKube, the one executable of tools/kube/cmd/kube.
const (
	binEtcd              = "etcd"
	binAPIServer         = "kube-apiserver"
	binControllerManager = "kube-controller-manager"
	binScheduler         = "kube-scheduler"
	binKwok              = "kwok"

	binKube = "kube"
)

var components = []string{binEtcd, binAPIServer, binControllerManager, binScheduler, binKwok}

// DefaultCacheDir is $HELMRELEASE_TESTCLUSTER_CACHE, or testcluster under the
// user's cache directory.
func DefaultCacheDir() (string, error) {
	if dir := os.Getenv("HELMRELEASE_TESTCLUSTER_CACHE"); dir != "" {
		return dir, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the user cache directory (set HELMRELEASE_TESTCLUSTER_CACHE): %w", err)
	}
	return filepath.Join(dir, "terraform-provider-helmrelease", "testcluster"), nil
}

// Build builds the cluster's executable unless a build with the same key
// (tools/kube's go.mod, go.sum and main.go, the Go version and platform) is cached,
// and returns the directory holding them. Concurrent builds are serialised by
// a lock file, so parallel test packages build once.
func Build(ctx context.Context, opts BuildOptions) (string, error) {
	root := opts.RepoRoot
	if root == "" {
		var err error
		if root, err = findRepoRoot(); err != nil {
			return "", err
		}
	}
	cache := opts.CacheDir
	if cache == "" {
		var err error
		if cache, err = DefaultCacheDir(); err != nil {
			return "", err
		}
	}
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	key, err := buildKey(root)
	if err != nil {
		return "", err
	}
	binDir := filepath.Join(cache, key)
	if complete(binDir) {
		return binDir, nil
	}
	if err := os.MkdirAll(cache, 0o750); err != nil {
		return "", fmt.Errorf("creating cache directory: %w", err)
	}
	unlock, err := lockFile(filepath.Join(cache, key+".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if complete(binDir) { // built by another process while we waited
		return binDir, nil
	}
	tmp, err := os.MkdirTemp(cache, key+".tmp-")
	if err != nil {
		return "", fmt.Errorf("creating build directory: %w", err)
	}
	defer os.RemoveAll(tmp)

	kubeVersion, err := kubernetesVersion(root)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(log, "testcluster: building %s (%s)\n", binKube, strings.Join(components, ", "))
	// Built as make test builds the tests (pure Go, -trimpath), with
	// tools/kube's module versions those of go.mod where both use one: the
	// packages the two share (client-go, apimachinery, k8s.io/api and what
	// they import) compile once into the Go build cache, not once each.
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w"+versionLDFlags(kubeVersion), "-o", filepath.Join(tmp, binKube), "./cmd/kube")
	cmd.Dir = filepath.Join(root, "tools", "kube")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=readonly")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building tools/kube/cmd/kube: %w", err)
	}
	// The executable picks the component by the name it runs under.
	for _, c := range components {
		if err := os.Symlink(binKube, filepath.Join(tmp, c)); err != nil {
			return "", fmt.Errorf("linking %s to %s: %w", c, binKube, err)
		}
	}
	if err := os.Rename(tmp, binDir); err != nil {
		return "", fmt.Errorf("moving binaries into the cache: %w", err)
	}
	return binDir, nil
}

// kubernetesVersion is the k8s.io/kubernetes version required by tools/kube.
func kubernetesVersion(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "tools", "kube", "go.mod"))
	if err != nil {
		return "", fmt.Errorf("reading tools/kube/go.mod: %w", err)
	}
	f, err := modfile.ParseLax("go.mod", b, nil)
	if err != nil {
		return "", fmt.Errorf("parsing tools/kube/go.mod: %w", err)
	}
	for _, r := range f.Require {
		if r.Mod.Path == "k8s.io/kubernetes" {
			return r.Mod.Version, nil
		}
	}
	return "", errors.New("tools/kube/go.mod does not require k8s.io/kubernetes")
}

// versionLDFlags stamps the Kubernetes version into the binaries, as the
// Kubernetes release build does, so the API server reports it (Helm charts
// check it against their kubeVersion).
func versionLDFlags(version string) string {
	major, minor, _ := strings.Cut(strings.TrimPrefix(version, "v"), ".")
	minor, _, _ = strings.Cut(minor, ".")
	var b strings.Builder
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		fmt.Fprintf(&b, " -X %s.gitVersion=%s -X %s.gitMajor=%s -X %s.gitMinor=%s -X %s.gitTreeState=clean", pkg, version, pkg, major, pkg, minor, pkg)
	}
	return b.String()
}

func complete(binDir string) bool {
	for _, b := range append([]string{binKube}, components...) {
		if _, err := os.Stat(filepath.Join(binDir, b)); err != nil {
			return false
		}
	}
	return true
}

func buildKey(root string) (string, error) {
	h := sha256.New()
	// buildRecipe changes whenever the way of building changes.
	const buildRecipe = "5"
	fmt.Fprintln(h, buildRecipe, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for _, f := range []string{"tools/kube/go.mod", "tools/kube/go.sum", "tools/kube/cmd/kube/main.go"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return "", fmt.Errorf("reading build module file: %w", err)
		}
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// findRepoRoot walks up from the working directory to the directory holding
// tools/kube/go.mod.
func findRepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("getting working directory: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "tools", "kube", "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("tools/kube/go.mod not found above the working directory: run from inside the repository")
		}
		dir = parent
	}
}

func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
