//go:build unix

package e2e

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/dirhash"
	"sigs.k8s.io/yaml"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testenv"
)

// auditedNamespaces are the namespaces of TestReleaseArchives (newNamespace
// names them after the test), whose requests the test cluster's API server
// audits.
var auditedNamespaces = []string{"e2e-testreleasearchives-terraform", "e2e-testreleasearchives-opentofu"}

// TestReleaseArchives: the provider as users get it. GoReleaser builds this
// platform's release archive as the release workflow does (.goreleaser.yml,
// a snapshot, unsigned); laid out as a filesystem mirror, `terraform init`
// installs it with no dev_overrides and locks it with its hashes, and the
// installed binary applies, plans and destroys a release, naming its
// version to the chart repository and the API server. The same with
// OpenTofu.
func TestReleaseArchives(t *testing.T) {
	testenv.FullSuiteOnly(t, "the release archive built with GoReleaser, installed by Terraform and OpenTofu")
	parallelMatrix(t)
	archives := buildReleaseArchives(t)
	clis := map[string]string{"terraform": terraform, "opentofu": os.Getenv("HELMRELEASE_TEST_OPENTOFU")}
	for _, name := range []string{"terraform", "opentofu"} {
		t.Run(name, func(t *testing.T) {
			if clis[name] == "" {
				testenv.SkipUnlessRequired(t, "needs OpenTofu: set HELMRELEASE_TEST_OPENTOFU to a tofu binary (make test-all builds one from tools/tofu)")
			}
			installFromMirror(t, archives, clis[name])
		})
	}
}

// releaseArchive is the archive GoReleaser built for this platform.
type releaseArchive struct {
	version string
	path    string
	// sha256 is the archive's line in the SHA256SUMS file.
	sha256 string
}

// buildReleaseArchives runs GoReleaser on .goreleaser.yml restricted to
// this platform (every platform takes a quarter of an hour: `make dist`).
func buildReleaseArchives(t *testing.T) releaseArchive {
	t.Helper()
	goreleaser := os.Getenv("HELMRELEASE_TEST_GORELEASER")
	if goreleaser == "" {
		testenv.SkipUnlessRequired(t, "needs GoReleaser: set HELMRELEASE_TEST_GORELEASER to a goreleaser binary (make test-all builds one from tools/goreleaser)")
	}
	raw, err := os.ReadFile(filepath.Join(repoRoot, ".goreleaser.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatalf(".goreleaser.yml: %v", err)
	}
	builds, _ := cfg["builds"].([]any)
	if len(builds) != 1 {
		t.Fatalf(".goreleaser.yml has %d builds, the test knows one", len(builds))
	}
	build := builds[0].(map[string]any)
	build["goos"], build["goarch"] = []string{runtime.GOOS}, []string{runtime.GOARCH}
	delete(build, "ignore")
	// Its `go mod tidy` hook would edit the checkout under test.
	delete(cfg, "before")
	dist := filepath.Join(t.TempDir(), "dist")
	cfg["dist"] = dist
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(t.TempDir(), "goreleaser.yml")
	if err := os.WriteFile(config, out, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goreleaser, "release", "--snapshot", "--clean", "--skip=sign", "--config", config)
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("goreleaser: %v\n%s", err, out)
	}

	var metadata struct {
		ProjectName string `json:"project_name"`
		Version     string `json:"version"`
	}
	if b, err := os.ReadFile(filepath.Join(dist, "metadata.json")); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(b, &metadata); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("%s_%s_%s_%s.zip", metadata.ProjectName, metadata.Version, runtime.GOOS, runtime.GOARCH)
	a := releaseArchive{version: metadata.Version, path: filepath.Join(dist, name)}
	sums, err := os.Open(filepath.Join(dist, fmt.Sprintf("%s_%s_SHA256SUMS", metadata.ProjectName, metadata.Version)))
	if err != nil {
		t.Fatal(err)
	}
	defer sums.Close()
	for lines := bufio.NewScanner(sums); lines.Scan(); {
		if sum, file, ok := strings.Cut(lines.Text(), "  "); ok && file == name {
			a.sha256 = sum
		}
	}
	if a.sha256 == "" {
		t.Fatalf("SHA256SUMS has no line for %s", name)
	}
	b, err := os.ReadFile(a.path)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != a.sha256 {
		t.Fatalf("%s does not match its SHA256SUMS line", name)
	}
	return a
}

// installFromMirror installs the archive with cli from a filesystem mirror,
// as from a registry, and runs a release's lifecycle with it.
func installFromMirror(t *testing.T, a releaseArchive, cli string) {
	mirror := t.TempDir()
	// Terraform and OpenTofu name the provider with their own registry.
	for _, host := range []string{"registry.terraform.io", "registry.opentofu.org"} {
		dir := filepath.Join(mirror, host, "helmrelease", "helmrelease")
		if err := os.MkdirAll(dir, 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(a.path, filepath.Join(dir, filepath.Base(a.path))); err != nil {
			t.Fatal(err)
		}
	}
	rc := filepath.Join(t.TempDir(), "terraformrc")
	if err := os.WriteFile(rc, []byte(fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path = %q\n  }\n}\n", mirror)), 0o600); err != nil {
		t.Fatal(err)
	}

	ns := newNamespace(t)
	if !slices.Contains(auditedNamespaces, ns) {
		t.Fatalf("namespace %s is not audited: add it to auditedNamespaces", ns)
	}
	repo := newRepository(t)
	c := config{namespace: ns, repo: repo, cacheDir: t.TempDir()}
	w := newWorkspace(t, "archive")
	w.bin, w.cliConfig = cli, rc
	release := map[string]string{"svc": `  values = { message = "v1" }`}
	w.write(pinVersion(c.hcl(release), a.version))

	init := w.must(0, "init", "-input=false", "-no-color")
	if strings.Contains(init.stdout+init.stderr, "development overrides") {
		t.Fatalf("init used development overrides:\n%s", init)
	}
	lock, err := os.ReadFile(filepath.Join(w.dir, ".terraform.lock.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	h1, err := dirhash.HashZip(a.path, dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	// From a mirror, Terraform locks the hash of the archive's content
	// (h1:); from the registry it adds SHA256SUMS' lines (zh:), which
	// buildReleaseArchives checked against the archive.
	for _, want := range []string{`version     = "` + a.version + `"`, `"` + h1 + `"`} {
		if !strings.Contains(string(lock), want) {
			t.Errorf(".terraform.lock.hcl lacks %s:\n%s", want, lock)
		}
	}

	w.apply()
	if got := configMessage(t, ns, "svc"); got != "v1" {
		t.Errorf("message %q after install, want v1", got)
	}
	w.planIsEmpty()
	w.write(pinVersion(c.hcl(map[string]string{"svc": `  values = { message = "v2" }`}), a.version))
	w.apply()
	if got := configMessage(t, ns, "svc"); got != "v2" {
		t.Errorf("message %q after upgrade, want v2", got)
	}
	w.must(0, "destroy", "-auto-approve", "-input=false", "-no-color")

	// The version is the one the release archive was built with.
	agent := "terraform-provider-helmrelease/" + a.version + " Terraform/"
	for _, got := range repo.UserAgents() {
		if !strings.HasPrefix(got, agent) {
			t.Errorf("the chart repository saw User-Agent %q, want %q…", got, agent)
		}
	}
	apiAgents := auditedUserAgents(t, ns)
	provider := 0
	for got, n := range apiAgents {
		switch {
		case strings.HasPrefix(got, agent):
			provider += n
		case strings.HasPrefix(got, "terraform-provider-helmrelease"):
			t.Errorf("the API server saw User-Agent %q, want %q…", got, agent)
		}
	}
	if provider == 0 {
		t.Errorf("the API server saw no request in %s with User-Agent %q…; it saw %v", ns, agent, apiAgents)
	}
}

// pinVersion makes the configuration require exactly version, as users
// pin a release.
func pinVersion(config, version string) string {
	return strings.Replace(config, `{ source = "helmrelease/helmrelease" }`,
		fmt.Sprintf(`{ source = "helmrelease/helmrelease", version = %q }`, version), 1)
}

// auditedUserAgents counts the requests in namespace by User-Agent, from
// the test cluster's audit log.
func auditedUserAgents(t *testing.T, namespace string) map[string]int {
	t.Helper()
	f, err := os.Open(cluster.AuditLog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	agents := map[string]int{}
	lines := bufio.NewScanner(f)
	lines.Buffer(nil, 1<<20)
	for lines.Scan() {
		var event struct {
			UserAgent string `json:"userAgent"`
			ObjectRef struct {
				Namespace string `json:"namespace"`
			} `json:"objectRef"`
		}
		if err := json.Unmarshal(lines.Bytes(), &event); err != nil {
			t.Fatalf("audit log: %v", err)
		}
		if event.ObjectRef.Namespace == namespace {
			agents[event.UserAgent]++
		}
	}
	if err := lines.Err(); err != nil {
		t.Fatal(err)
	}
	return agents
}
