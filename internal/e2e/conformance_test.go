//go:build unix

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	releasecommon "helm.sh/helm/v4/pkg/release/common"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testenv"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo/s3server"
)

// The conformance matrix: every chart source (a row) on every path of a
// release's life (a column), on both engines. A cell either passes or is
// refused at plan with its reason, which the test asserts; the chart
// sources guide shows the same table (TestConformanceTableInDocs).

// Paths of the matrix, in the order the test runs them.
const (
	pathInstall     = "install"
	pathEmptyPlan   = "empty plan"
	pathNewVersion  = "new version"
	pathValuesFiles = "values files"
	pathDrift       = "drift"
	// pathAdopt: a release made outside Terraform, by the Helm CLI
	// (in-process) or a GitOps HelmRelease (Flux), imported.
	pathAdopt = "import of a Helm CLI or GitOps release"
	// pathMoved: a helm_release of HashiCorp's helm provider moved into
	// helmrelease_release.
	pathMoved = "moved from helm_release"
	// pathImport: a release removed from the state and imported again.
	pathImport   = "state rm and import"
	pathHandOver = "hand-over"
	pathDestroy  = "destroy"
)

var conformancePaths = []string{pathInstall, pathEmptyPlan, pathNewVersion, pathAdopt, pathMoved, pathValuesFiles, pathDrift, pathImport, pathHandOver, pathDestroy}

// Refusals at plan, by the words the plan's error starts with.
const (
	refusedLocalFlux    = "Local chart with the Flux engine"
	refusedOCIValues    = "Values files of an OCI chart with the Flux engine"
	refusedKeyringFlux  = "Provenance keyring with the Flux engine"
	notApplicableValues = "n/a: `chart_ref` names no values files (a HelmChart has its own)"
)

// movedHandOver is the reason of the upgrade of a release moved into
// engine = "flux": the hand-over.
const movedHandOver = "handed to Flux's helm-controller"

// upgradedOnAdoptNote is the cell of a row whose Helm CLI release the
// import upgrades once; the guide says why below the table.
const upgradedOnAdoptNote = "✓ (one upgrade, see below)"

// conformanceSource is a row: a chart source, as a configuration names it.
type conformanceSource struct {
	// key names the row's releases (<engine letter>-<key>).
	key   string
	label string
	// chart is the release's chart (or chart_ref) HCL, with values files
	// when valuesFiles is set.
	chart func(e *conformanceEnv, valuesFiles bool) string
	// publish makes version of the chart the source's newest.
	publish func(t *testing.T, e *conformanceEnv, version string)
	// refused are the paths refused at plan, by engine, with the words
	// of the refusal (or, prefixed "n/a", why the path does not apply).
	refused map[string]map[string]string
	// helmRelease is the chart of a helm_release of HashiCorp's helm
	// provider (its attributes), nil where it has no such source.
	helmRelease func(e *conformanceEnv) string
	// upgradedOnAdopt: the in-process engine versions the chart with its
	// digest (as helm-controller does an OCIRepository's), which a Helm
	// CLI release does not carry: its import plans one upgrade.
	upgradedOnAdopt bool
}

// fluxRefusesAll refuses every path under the Flux engine, and the
// hand-over to it.
func fluxRefusesAll(reason string) map[string]map[string]string {
	flux := map[string]string{}
	for _, p := range conformancePaths {
		flux[p] = reason
	}
	return map[string]map[string]string{"flux": flux, "helm": {pathHandOver: reason}}
}

var conformanceSources = []conformanceSource{
	{key: "repo", label: "Helm repository, basic auth", chart: func(e *conformanceEnv, vf bool) string {
		return fmt.Sprintf(`chart = { name = "svc", repository = %q, username = %q, password = %q%s }`, e.repo.URL, testrepo.Username, testrepo.Password, valuesFilesHCL(vf))
	}, publish: func(t *testing.T, e *conformanceEnv, version string) {
		e.repo.Add(t, svcPackaged(t, version), e.signer)
	},
		helmRelease: func(e *conformanceEnv) string {
			return fmt.Sprintf("repository = %q\n  chart = \"svc\"\n  repository_username = %q\n  repository_password = %q", e.repo.URL, testrepo.Username, testrepo.Password)
		},
	},
	{key: "repo-pgp", label: "Helm repository, `verify` pgp (provenance)", chart: func(e *conformanceEnv, vf bool) string {
		return fmt.Sprintf(`chart = { name = "svc", repository = %q, username = %q, password = %q, verify = { keyring = %q }%s }`, e.repo.URL, testrepo.Username, testrepo.Password, e.signer.Keyring, valuesFilesHCL(vf))
	}, publish: func(*testing.T, *conformanceEnv, string) {}, refused: fluxRefusesAll(refusedKeyringFlux),
		helmRelease: func(e *conformanceEnv) string {
			return fmt.Sprintf("repository = %q\n  chart = \"svc\"\n  repository_username = %q\n  repository_password = %q\n  verify = true\n  keyring = %q", e.repo.URL, testrepo.Username, testrepo.Password, e.signer.Keyring)
		},
	},
	{key: "oci", label: "OCI registry over TLS, the provider's `registries` login", chart: func(e *conformanceEnv, vf bool) string {
		return fmt.Sprintf(`chart = { name = "svc", repository = %q, ca_file = %q%s }`, e.oci.URL, e.oci.CAFile, valuesFilesHCL(vf))
	}, publish: func(t *testing.T, e *conformanceEnv, version string) {
		e.oci.Push(t, svcPackaged(t, version), nil)
		e.oci.CosignSign(t, "svc", version, e.cosign)
	}, refused: map[string]map[string]string{"flux": {pathValuesFiles: refusedOCIValues}},
		upgradedOnAdopt: true,
		helmRelease: func(e *conformanceEnv) string {
			return fmt.Sprintf("repository = %q\n  chart = \"svc\"\n  repository_ca_file = %q", e.oci.URL, e.oci.CAFile)
		},
	},
	{key: "oci-cosign", label: "OCI registry over TLS, `verify` cosign", chart: func(e *conformanceEnv, vf bool) string {
		return fmt.Sprintf(`chart = { name = "svc", repository = %q, ca_file = %q, verify = { public_keys = [%q] }%s }`, e.oci.URL, e.oci.CAFile, string(e.cosign.PublicPEM), valuesFilesHCL(vf))
	}, publish: func(*testing.T, *conformanceEnv, string) {}, refused: map[string]map[string]string{"flux": {pathValuesFiles: refusedOCIValues}},
		upgradedOnAdopt: true,
	},
	{key: "oci-http", label: "OCI registry over plain HTTP (`plain_http`)", chart: func(e *conformanceEnv, vf bool) string {
		return fmt.Sprintf(`chart = { name = "svc", repository = %q, plain_http = true%s }`, e.plain.URL, valuesFilesHCL(vf))
	}, publish: func(t *testing.T, e *conformanceEnv, version string) { e.plain.Push(t, svcPackaged(t, version), nil) },
		refused:         map[string]map[string]string{"flux": {pathValuesFiles: refusedOCIValues}},
		upgradedOnAdopt: true,
	},
	{key: "dir", label: "Local directory", chart: func(e *conformanceEnv, vf bool) string {
		return fmt.Sprintf(`chart = { name = %q%s }`, e.localDir, valuesFilesHCL(vf))
	}, publish: func(t *testing.T, e *conformanceEnv, version string) { writeSvcDir(t, e.localDir, version) }, refused: fluxRefusesAll(refusedLocalFlux),
		upgradedOnAdopt: true,
		helmRelease:     func(e *conformanceEnv) string { return fmt.Sprintf("chart = %q", e.localDir) },
	},
	{key: "tgz", label: "Local `.tgz`", chart: func(e *conformanceEnv, vf bool) string {
		return fmt.Sprintf(`chart = { name = %q%s }`, e.localTgz, valuesFilesHCL(vf))
	}, publish: func(t *testing.T, e *conformanceEnv, version string) { writeChartTgz(t, e.localTgz, version) }, refused: fluxRefusesAll(refusedLocalFlux),
		upgradedOnAdopt: true,
		helmRelease:     func(e *conformanceEnv) string { return fmt.Sprintf("chart = %q", e.localTgz) },
	},
	{key: "git-http", label: "Git over HTTP, basic auth", chart: func(e *conformanceEnv, vf bool) string {
		return fmt.Sprintf(`chart = { name = "charts/svc", git = { url = %q, ref = { branch = "main" } }, username = %q, password = %q%s }`, e.git.HTTPURL("charts"), testrepo.Username, testrepo.Password, valuesFilesHCL(vf))
	}, publish: func(t *testing.T, e *conformanceEnv, version string) {
		e.git.Commit(t, "charts", "main", svcFiles(t, "charts/svc", version))
	}},
	{key: "git-ssh", label: "Git over SSH", chart: func(e *conformanceEnv, vf bool) string {
		return fmt.Sprintf(`chart = { name = "charts/svc", git = { url = %q, ref = { branch = "main" }, private_key = %q, known_hosts = %q }%s }`, e.git.SSHURL("charts"), e.git.Identity, e.git.KnownHosts, valuesFilesHCL(vf))
	}, publish: func(*testing.T, *conformanceEnv, string) {}},
	{key: "bucket", label: "S3-compatible bucket", chart: func(e *conformanceEnv, vf bool) string {
		return fmt.Sprintf(`chart = { name = "charts/svc", bucket = { endpoint = %q, bucket_name = "charts", insecure = true, region = %q }, username = %q, password = %q%s }`, e.s3.Endpoint, s3server.Region, testrepo.Username, testrepo.Password, valuesFilesHCL(vf))
	}, publish: func(t *testing.T, e *conformanceEnv, version string) {
		e.s3.Put(t, "charts", svcFiles(t, "charts/svc", version))
	}},
	{key: "ref-oci", label: "`chart_ref` to an OCIRepository", chart: func(*conformanceEnv, bool) string {
		return `chart_ref = { kind = "OCIRepository", name = "m-oci" }`
	}, publish: func(t *testing.T, e *conformanceEnv, version string) {
		e.reconcileRefs(t, ociRepositories, "m-oci", version)
	},
		refused:         map[string]map[string]string{"helm": {pathValuesFiles: notApplicableValues}, "flux": {pathValuesFiles: notApplicableValues}},
		upgradedOnAdopt: true,
	},
	{key: "ref-hc-http", label: "`chart_ref` to a HelmChart of a Helm repository", chart: func(*conformanceEnv, bool) string {
		return `chart_ref = { kind = "HelmChart", name = "m-hc-http" }`
	}, publish: func(t *testing.T, e *conformanceEnv, version string) {
		e.reconcileRefs(t, helmRepositories, "m-http", "")
		e.reconcileRefs(t, helmCharts, "m-hc-http", version)
	},
		refused: map[string]map[string]string{"helm": {pathValuesFiles: notApplicableValues}, "flux": {pathValuesFiles: notApplicableValues}}},
	{key: "ref-hc-oci", label: "`chart_ref` to a HelmChart of an OCI HelmRepository", chart: func(*conformanceEnv, bool) string {
		return `chart_ref = { kind = "HelmChart", name = "m-hc-oci" }`
	}, publish: func(t *testing.T, e *conformanceEnv, version string) {
		e.reconcileRefs(t, helmCharts, "m-hc-oci", version)
	},
		refused: map[string]map[string]string{"helm": {pathValuesFiles: notApplicableValues}, "flux": {pathValuesFiles: notApplicableValues}}},
	{key: "ref-hc-git", label: "`chart_ref` to a HelmChart of a GitRepository", chart: func(*conformanceEnv, bool) string {
		return `chart_ref = { kind = "HelmChart", name = "m-hc-git" }`
	}, publish: func(t *testing.T, e *conformanceEnv, version string) {
		e.reconcileRefs(t, gitRepositories, "m-git", "")
		e.reconcileRefs(t, helmCharts, "m-hc-git", version)
	}, refused: map[string]map[string]string{"helm": {pathValuesFiles: notApplicableValues}, "flux": {pathValuesFiles: notApplicableValues}}},
}

func valuesFilesHCL(on bool) string {
	if !on {
		return ""
	}
	return `, values_files = ["values.yaml", "values-prod.yaml"]`
}

// svcChartDir is the svc chart's directory.
func svcChartDir() string {
	return testdataPath("charts", "svc")
}

// valuesProd is the values file the values files path adds.
const valuesProd = "message: from values-prod\n"

// svcPackaged is the svc chart at version, with values-prod.yaml.
func svcPackaged(t *testing.T, version string) *chart.Chart {
	c := testrepo.LoadChart(t, svcChartDir(), version)
	c.Files = append(c.Files, &common.File{Name: "values-prod.yaml", Data: []byte(valuesProd)})
	return c
}

// svcFiles are the files of the svc chart at version under dir, with
// values-prod.yaml.
func svcFiles(t *testing.T, dir, version string) map[string]string {
	files := testrepo.ChartFiles(t, svcChartDir(), dir)
	files[dir+"/Chart.yaml"] = strings.Replace(files[dir+"/Chart.yaml"], "version: 1.0.0", "version: "+version, 1)
	files[dir+"/values-prod.yaml"] = valuesProd
	return files
}

func writeSvcDir(t *testing.T, dir, version string) {
	for name, content := range svcFiles(t, ".", version) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func writeChartTgz(t *testing.T, file, version string) {
	archive, _ := testrepo.Package(t, svcPackaged(t, version))
	if err := os.WriteFile(file, archive, 0o600); err != nil {
		t.Fatal(err)
	}
}

// conformanceEnv holds the matrix's servers and Flux objects.
type conformanceEnv struct {
	run *fluxRun
	// flux: Flux's controllers run beside the matrix (make test-all), so
	// it has the Flux engine's cells, the chart_ref rows (source-controller
	// makes their artifacts) and the hand-over. Without them (make test),
	// the in-process cells of the other rows run.
	flux               bool
	dyn                dynamic.Interface
	repo               *testrepo.HTTP
	signer             *testrepo.Signer
	oci, plain         *testrepo.OCI
	cosign             *testrepo.CosignKey
	git                *testrepo.Git
	s3                 *s3server.S3
	localDir, localTgz string
}

func newConformanceEnv(t *testing.T, run *fluxRun) *conformanceEnv {
	e := &conformanceEnv{run: run, flux: run.Flux != nil, dyn: dynamic.NewForConfigOrDie(run.rest),
		repo: testrepo.NewHTTP(t), signer: testrepo.NewSigner(t, "release-team"),
		oci: testrepo.NewOCI(t), plain: testrepo.NewOCIPlainHTTP(t), cosign: testrepo.NewCosignKey(t),
		git: testrepo.NewGit(t), s3: s3server.New(t)}
	e.repo.Add(t, svcPackaged(t, "1.0.0"), e.signer)
	e.oci.Push(t, svcPackaged(t, "1.0.0"), nil)
	e.oci.CosignSign(t, "svc", "1.0.0", e.cosign)
	e.plain.Push(t, svcPackaged(t, "1.0.0"), nil)
	e.git.Commit(t, "charts", "main", svcFiles(t, "charts/svc", "1.0.0"))
	e.s3.MakeBucket(t, "charts")
	e.s3.Put(t, "charts", svcFiles(t, "charts/svc", "1.0.0"))
	e.localDir = filepath.Join(t.TempDir(), "svc")
	writeSvcDir(t, e.localDir, "1.0.0")
	e.localTgz = filepath.Join(t.TempDir(), "svc.tgz")
	writeChartTgz(t, e.localTgz, "1.0.0")
	if !e.flux {
		return e
	}

	// The objects a team managing Flux sources writes, each following
	// the newest version.
	ns := run.ns
	objects := append(registrySecrets(t, e.oci, "m-oci-login", "m-oci-ca"), []map[string]any{
		{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "m-login"}, "stringData": map[string]any{"username": testrepo.Username, "password": testrepo.Password}},
		{"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "OCIRepository", "metadata": map[string]any{"name": "m-oci"}, "spec": map[string]any{
			"url": e.oci.URL + "/svc", "interval": "10m", "ref": map[string]any{"semver": "*"},
			"secretRef": map[string]any{"name": "m-oci-login"}, "certSecretRef": map[string]any{"name": "m-oci-ca"},
			"layerSelector": map[string]any{"mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip", "operation": "copy"},
		}},
		{"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmRepository", "metadata": map[string]any{"name": "m-http"}, "spec": map[string]any{
			"url": e.repo.URL, "interval": "10m", "secretRef": map[string]any{"name": "m-login"},
		}},
		{"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmChart", "metadata": map[string]any{"name": "m-hc-http"}, "spec": map[string]any{
			"chart": "svc", "version": "*", "interval": "10m", "sourceRef": map[string]any{"kind": "HelmRepository", "name": "m-http"},
		}},
		{"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmRepository", "metadata": map[string]any{"name": "m-oci-repo"}, "spec": map[string]any{
			"type": "oci", "url": e.oci.URL, "interval": "10m", "secretRef": map[string]any{"name": "m-oci-login"}, "certSecretRef": map[string]any{"name": "m-oci-ca"},
		}},
		{"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmChart", "metadata": map[string]any{"name": "m-hc-oci"}, "spec": map[string]any{
			"chart": "svc", "version": "*", "interval": "10m", "sourceRef": map[string]any{"kind": "HelmRepository", "name": "m-oci-repo"},
		}},
		{"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository", "metadata": map[string]any{"name": "m-git"}, "spec": map[string]any{
			"url": e.git.HTTPURL("charts"), "interval": "10m", "ref": map[string]any{"branch": "main"}, "secretRef": map[string]any{"name": "m-login"},
		}},
		{"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmChart", "metadata": map[string]any{"name": "m-hc-git"}, "spec": map[string]any{
			"chart": "charts/svc", "interval": "10m", "sourceRef": map[string]any{"kind": "GitRepository", "name": "m-git"},
		}},
	}...)
	createObjects(t, e.dyn, ns, objects)
	artifactOf(t, e.dyn, ociRepositories, ns, "m-oci", true, func(rev string) bool { return strings.HasPrefix(rev, "1.0.0@") })
	for _, hc := range []string{"m-hc-http", "m-hc-oci", "m-hc-git"} {
		artifactOf(t, e.dyn, helmCharts, ns, hc, true, func(rev string) bool { return strings.HasPrefix(rev, "1.0.0") })
	}
	return e
}

// reconcileRefs asks source-controller to fetch the object's source
// again, and waits for its artifact of version (empty: another artifact
// than the one it had).
func (e *conformanceEnv) reconcileRefs(t *testing.T, gvr schema.GroupVersionResource, name, version string) {
	was := artifactOf(t, e.dyn, gvr, e.run.ns, name, true, func(string) bool { return true })
	requestReconcile(t, e.dyn, gvr, e.run.ns, name)
	artifactOf(t, e.dyn, gvr, e.run.ns, name, true, func(rev string) bool {
		if version == "" {
			return rev != was
		}
		return strings.HasPrefix(rev, version)
	})
}

// conformanceRelease is the HCL of the row's release on engine.
func (e *conformanceEnv) release(s conformanceSource, engine, name string, valuesFiles bool) string {
	return fmt.Sprintf(`
resource "helmrelease_release" %[1]q {
  name            = %[1]q
  namespace       = %[2]q
  engine          = %[3]q
  drift_detection = { mode = "enabled" }
  %[4]s
}
`, name, e.run.ns, engine, s.chart(e, valuesFiles))
}

func (e *conformanceEnv) provider(cacheDir string) string {
	return fmt.Sprintf(`terraform {
  required_providers {
    helmrelease = { source = "helmrelease/helmrelease" }
  }
}

provider "helmrelease" {
  kubernetes = { config_path = %q }
  cache_dir  = %q
  registries = [{ url = %q, username = %q, password = %q }]
}
`, e.run.kubeconfig, cacheDir, strings.TrimSuffix(e.oci.URL, "/charts"), testrepo.Username, testrepo.Password)
}

// conformanceWorkspace runs the rows on one engine (the engine the
// releases are created with) in one configuration: what a path refuses
// is planned alone, so the others' cells go on.
type conformanceWorkspace struct {
	e        *conformanceEnv
	w        *workspace
	engine   string
	cacheDir string
	st       *storage
	// values: the releases name values files.
	values bool
	// engines are the rows' engines now (hand-over).
	engines map[string]string
}

func (c *conformanceWorkspace) name(s conformanceSource) string { return c.engine[:1] + "-" + s.key }

func (c *conformanceWorkspace) refusal(s conformanceSource, engine, path string) string {
	if !c.e.runs(s) {
		return withoutFlux
	}
	return s.refused[engine][path]
}

// withoutFlux is the refusal of every path of a row the matrix does not
// run without Flux's controllers.
const withoutFlux = "n/a: source-controller makes the artifact (make test-all)"

// runs reports whether the matrix runs the row: the chart_ref rows need
// source-controller.
func (e *conformanceEnv) runs(s conformanceSource) bool {
	return e.flux || !strings.HasPrefix(s.key, "ref-")
}

// engines are the engines the matrix runs: the Flux engine's cells need
// its controllers.
func (e *conformanceEnv) engines() []string {
	if e.flux {
		return []string{"helm", "flux"}
	}
	return []string{"helm"}
}

// config is the configuration of the rows not refused.
func (c *conformanceWorkspace) config() string {
	b := c.e.provider(c.cacheDir)
	for _, s := range conformanceSources {
		engine := c.engines[s.key]
		if c.refusal(s, engine, pathInstall) != "" {
			continue
		}
		values := c.values && !strings.HasPrefix(c.refusal(s, engine, pathValuesFiles), "n/a") && c.refusal(s, engine, pathValuesFiles) == ""
		b += c.e.release(s, engine, c.name(s), values)
	}
	return b
}

// expectRefusals plans each row that path refuses on engine alone and
// asserts the refusal. A hand-over is refused as the release with
// engine = "flux" is.
func (c *conformanceWorkspace) expectRefusals(t *testing.T, path string, engine string, valuesFiles bool) {
	t.Helper()
	for _, s := range conformanceSources {
		reason := c.refusal(s, engine, path)
		if reason == "" || strings.HasPrefix(reason, "n/a") {
			continue
		}
		configured := engine
		if path == pathHandOver {
			configured = "flux"
		}
		w := newWorkspace(t, "refused-"+s.key)
		w.write(c.e.provider(c.cacheDir) + c.e.release(s, configured, "r-"+s.key, valuesFiles))
		res := w.must(1, "plan", "-input=false", "-no-color")
		if !has(res.stderr, reason) {
			t.Errorf("%s, %s on engine %s: the plan's error does not say %q:\n%s", s.label, path, engine, reason, res.stderr)
		}
	}
}

// configMaps are the ConfigMaps of the rows' releases: uid and message.
func (c *conformanceWorkspace) configMaps(t *testing.T) map[string][2]string {
	t.Helper()
	out := map[string][2]string{}
	for _, s := range conformanceSources {
		if c.refusal(s, c.engine, pathInstall) != "" {
			continue
		}
		cm := configMapOn(t, c.e.run.cs, c.e.run.ns, c.name(s))
		out[s.key] = [2]string{string(cm.UID), cm.Data["message"]}
	}
	return out
}

// revisions are the newest revision of each row's release.
func (c *conformanceWorkspace) revisions(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, s := range conformanceSources {
		if c.refusal(s, c.engine, pathInstall) != "" {
			continue
		}
		latest := c.st.latest(c.name(s))
		if latest == nil || latest.Info.Status != releasecommon.StatusDeployed {
			t.Errorf("%s on engine %s: %s, want it deployed", s.label, c.engine, c.st.describe(c.name(s)))
			continue
		}
		out[s.key] = latest.Version
	}
	return out
}

// versions checks that each row's release runs the chart version.
func (c *conformanceWorkspace) versions(t *testing.T, version string) {
	t.Helper()
	for _, s := range conformanceSources {
		if c.refusal(s, c.engine, pathInstall) != "" {
			continue
		}
		if latest := c.st.latest(c.name(s)); latest == nil || !strings.HasPrefix(latest.Chart.Metadata.Version, version) {
			t.Errorf("%s on engine %s: %s, want chart %s", s.label, c.engine, c.st.describe(c.name(s)), version)
		}
	}
}

// TestConformance runs the matrix on both engines, beside the newest
// helm-controller and a source-controller (chart_ref rows need its
// artifacts, for both engines): make test-all.
func TestConformance(t *testing.T) {
	testenv.FullSuiteOnly(t, "the matrix of chart sources on both engines, past make test's time budget")
	withNewestFluxControllers(t, conformance)
}

func conformance(t *testing.T, run *fluxRun) {
	e := newConformanceEnv(t, run)
	// The helm rows first: they publish the versions the flux rows
	// start from.
	for _, engine := range e.engines() {
		ok := t.Run(engine, func(t *testing.T) {
			c := &conformanceWorkspace{e: e, w: newWorkspace(t, "matrix-"+engine), engine: engine, cacheDir: t.TempDir(),
				st: newStorageOn(t, run.rest, run.ns), engines: map[string]string{}}
			for _, s := range conformanceSources {
				c.engines[s.key] = engine
			}
			runConformance(t, c)
		})
		if !ok {
			return
		}
	}
	t.Run("moved", e.moved)
	if left := providerObjects(t, run.rest, run.ns); len(left) > 0 {
		t.Errorf("after destroy the provider's sources and Secrets are left: %v", left)
	}
}

func runConformance(t *testing.T, c *conformanceWorkspace) {
	e, w, engine := c.e, c.w, c.engine
	ctx := context.Background()

	// install, then an empty plan. The helm rows install 1.0.0 and
	// upgrade to 1.0.1, the flux rows (after them) 1.0.1 and 1.0.2.
	first, next := "1.0.0", "1.0.1"
	if engine == "flux" {
		first, next = "1.0.1", "1.0.2"
	}
	c.expectRefusals(t, pathInstall, engine, false)
	w.write(c.config())
	w.apply()
	c.versions(t, first)
	installed := c.configMaps(t)
	w.planIsEmpty()

	// A new version (chart, commit, object) planned and deployed.
	for _, s := range conformanceSources {
		if e.runs(s) {
			s.publish(t, e, next)
		}
	}
	w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode")
	w.apply()
	c.versions(t, next)
	w.planIsEmpty()

	c.adopt(t, next)

	// Values files: the releases name values.yaml and values-prod.yaml.
	c.expectRefusals(t, pathValuesFiles, engine, true)
	c.values = true
	w.write(c.config())
	w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode")
	w.apply()
	for key, cm := range c.configMaps(t) {
		s := sourceByKey(key)
		want := "from values-prod"
		if r := c.refusal(s, engine, pathValuesFiles); r != "" {
			want = "hello"
		}
		if cm[1] != want {
			t.Errorf("%s on engine %s with values files: message %q, want %q", s.label, engine, cm[1], want)
		}
	}
	w.planIsEmpty()

	// Drift: in-process, a ConfigMap edited in the cluster; under Flux,
	// the HelmRelease edited by hand. Both planned back.
	for _, s := range conformanceSources {
		if c.refusal(s, engine, pathInstall) != "" {
			continue
		}
		var err error
		if engine == "helm" {
			_, err = e.run.cs.CoreV1().ConfigMaps(e.run.ns).Patch(ctx, c.name(s), types.MergePatchType, []byte(`{"data":{"message":"edited"}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"})
		} else {
			_, err = e.dyn.Resource(helmReleases).Namespace(e.run.ns).Patch(ctx, c.name(s), types.MergePatchType, []byte(`{"spec":{"values":{"message":"edited"}}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if engine == "flux" {
		// The controller deploys the edit: the plan sees it deployed.
		deadline := time.Now().Add(2 * time.Minute)
		for edited := 0; edited < len(c.configMaps(t)) && time.Now().Before(deadline); time.Sleep(time.Second) {
			edited = 0
			for _, cm := range c.configMaps(t) {
				if cm[1] == "edited" {
					edited++
				}
			}
		}
	}
	w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode")
	w.apply()
	for key, cm := range c.configMaps(t) {
		if cm[1] == "edited" {
			t.Errorf("%s on engine %s: the drifted ConfigMap was not corrected", sourceByKey(key).label, engine)
		}
	}
	w.planIsEmpty()

	// Import: each release removed from the state and imported; the
	// apply runs no Helm action, and the plan after it is empty.
	before := c.revisions(t)
	for _, s := range conformanceSources {
		if c.refusal(s, engine, pathInstall) != "" {
			continue
		}
		addr := "helmrelease_release." + c.name(s)
		w.must(0, "state", "rm", "-no-color", addr)
		w.must(0, "import", "-input=false", "-no-color", addr, e.run.ns+"/"+c.name(s))
	}
	// What the import read back: no Helm action planned, and the chart's
	// settings read as configured.
	w.run("plan", "-input=false", "-no-color", "-out=tfplan")
	for name, change := range w.plannedChanges(filepath.Join(w.dir, "tfplan")) {
		if change.action != "" {
			t.Errorf("%s on engine %s: the plan after the import plans a Helm action: %s", name, engine, change.action)
		}
		if change.statusUnknown && engine == "helm" {
			t.Errorf("%s on engine %s: the plan after the import shows status as known after apply, though no Helm action is planned", name, engine)
		}
		change.readBack(t, name+" on engine "+engine)
	}
	w.apply()
	if after := c.revisions(t); !maps.Equal(before, after) {
		t.Errorf("engine %s: the apply after the imports made Helm revisions: %v, before %v", engine, after, before)
	}
	w.planIsEmpty()

	// Hand-over: in-process to Flux and back, the objects kept.
	if engine == "helm" && e.flux {
		c.expectRefusals(t, pathHandOver, engine, true)
		for _, to := range []string{"flux", "helm"} {
			for _, s := range conformanceSources {
				if c.refusal(s, "helm", pathHandOver) == "" {
					c.engines[s.key] = to
				}
			}
			w.write(c.config())
			w.apply()
			for key, cm := range c.configMaps(t) {
				if cm[0] != installed[key][0] {
					t.Errorf("%s: ConfigMap uid %s after the hand-over to %s, want %s (no reinstall)", sourceByKey(key).label, cm[0], to, installed[key][0])
				}
			}
			w.planIsEmpty()
		}
	}

	// Destroy leaves nothing of the provider's.
	w.must(0, "destroy", "-auto-approve", "-input=false", "-no-color")
	for _, s := range conformanceSources {
		if latest := c.st.latest(c.name(s)); latest != nil {
			t.Errorf("%s on engine %s after destroy: %s", s.label, engine, c.st.describe(c.name(s)))
		}
	}
}

// adopt imports, beside each row's release, one made outside Terraform
// of the chart at version: in-process, by the Helm CLI from the chart's
// files; under Flux, by a GitOps HelmRelease of sources of its own (or
// the chart_ref's object). The import plans no Helm action and reads the
// chart's settings back, its apply makes no revision, and the next plan
// is empty; removed from the configuration, they are uninstalled.
func (c *conformanceWorkspace) adopt(t *testing.T, version string) {
	t.Helper()
	e, w := c.e, c.w
	var blocks strings.Builder
	var names []string
	// upgraded are the releases whose import plans an upgrade; readBack,
	// those whose chart settings it reads back as configured (the Helm
	// CLI's record no source).
	upgraded, readBack, indexOnly, namesOne, unrecorded := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, s := range conformanceSources {
		if c.refusal(s, c.engine, pathInstall) != "" {
			continue
		}
		name := "x" + c.name(s)
		upgraded[name] = c.engine == "helm" && s.upgradedOnAdopt
		// A local chart names one chart; a range or a chart_ref may name
		// another by the apply, which nothing pins for an import's plan.
		namesOne[name] = local(s)
		// A verified chart of a Helm repository: the plan reads the index
		// alone, the apply verifies the chart, and its status shows it.
		indexOnly[name] = s.key == "repo-pgp"
		// The Helm CLI's release records no Git commit or bucket
		// revision: nothing names the chart the apply's plan will find
		// (the branch, the bucket may move), so the import's plan shows
		// it known after apply.
		unrecorded[name] = c.engine == "helm" && (strings.HasPrefix(s.key, "git-") || s.key == "bucket")
		if c.engine == "helm" {
			helmInstallChart(t, e.run.rest, svcPackaged(t, version), e.run.ns, name)
		} else {
			objects, readsBack := e.gitOps(s, name)
			createObjects(t, e.dyn, e.run.ns, objects)
			readBack[name] = readsBack
		}
		names = append(names, name)
		blocks.WriteString(e.release(s, c.engine, name, false))
		fmt.Fprintf(&blocks, "\nimport {\n  to = helmrelease_release.%s\n  id = %q\n}\n", name, e.run.ns+"/"+name)
	}
	for _, name := range names {
		c.st.waitFor(name, 1, releasecommon.StatusDeployed, 2*time.Minute)
	}
	configured := c.config()
	w.write(configured + blocks.String())
	w.run("plan", "-input=false", "-no-color", "-out=tfplan")
	changes := w.plannedChanges(filepath.Join(w.dir, "tfplan"))
	for _, name := range names {
		change, ok := changes[name]
		if !ok {
			t.Errorf("%s on engine %s: the plan does not import it", name, c.engine)
			continue
		}
		switch {
		case upgraded[name] && namesOne[name] && !strings.HasPrefix(change.action, "upgrade: chart revision \""+version+"\" → \""+version+"+"):
			t.Errorf("%s on engine %s: the plan of its import plans %q, want an upgrade to the digest-versioned chart", name, c.engine, change.action)
		case upgraded[name] && !namesOne[name] && !strings.HasPrefix(change.action, "upgrade: chart known after apply"):
			t.Errorf("%s on engine %s: the plan of its import plans %q, want an upgrade whose chart is known after apply", name, c.engine, change.action)
		case !upgraded[name] && change.action != "":
			t.Errorf("%s on engine %s: the plan of its import plans a Helm action: %s", name, c.engine, change.action)
		case !upgraded[name] && c.engine == "helm" && !indexOnly[name] && !unrecorded[name] && change.statusUnknown:
			t.Errorf("%s on engine %s: the plan of its import shows status as known after apply, though no Helm action is planned", name, c.engine)
		case unrecorded[name] && !change.statusUnknown:
			t.Errorf("%s on engine %s: the plan of its import shows the chart of a moving source as known, though nothing recorded the revision deployed", name, c.engine)
		}
		if readBack[name] {
			change.readBack(t, name+" on engine "+c.engine)
		}
	}
	w.apply()
	for _, name := range names {
		want := 1
		if upgraded[name] {
			want = 2
		}
		if latest := c.st.latest(name); latest == nil || latest.Version != want || latest.Info.Status != releasecommon.StatusDeployed {
			t.Errorf("%s on engine %s after the import's apply: %s, want revision %d deployed", name, c.engine, c.st.describe(name), want)
		}
	}
	w.planIsEmpty()
	w.write(configured)
	w.apply()
	for _, name := range names {
		if latest := c.st.latest(name); latest != nil {
			t.Errorf("%s on engine %s removed from the configuration: %s", name, c.engine, c.st.describe(name))
		}
	}
}

// gitOps are the objects a GitOps repository holds for a release of the
// row's chart named name: its HelmRelease and the sources (and their
// Secrets) it names, or the chart_ref's object.
func (e *conformanceEnv) gitOps(s conformanceSource, name string) (objects []map[string]any, readsBack bool) {
	// The GitOps repository's own names: the provider refuses to write
	// over objects of its names that it did not write.
	own := "gitops-" + name
	secret := func(data map[string]any) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": own}, "stringData": data}
	}
	source := func(kind string, spec map[string]any) map[string]any {
		spec["interval"] = "10m"
		return map[string]any{"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": kind, "metadata": map[string]any{"name": own}, "spec": spec}
	}
	chartSpec := func(chart, kind, source string) map[string]any {
		return map[string]any{"spec": map[string]any{"chart": chart, "version": "*", "interval": "10m", "sourceRef": map[string]any{"kind": kind, "name": source}}}
	}
	hr := map[string]any{"interval": "10m", "driftDetection": map[string]any{"mode": "enabled"}}
	readsBack = true
	switch s.key {
	case "repo":
		hr["chart"] = chartSpec("svc", "HelmRepository", "m-http")
	case "oci", "oci-http":
		// An OCIRepository, as Flux recommends for OCI charts. Managed
		// outside Terraform, it is imported as the chart_ref it is. (A
		// HelmChart of an OCI HelmRepository versions the chart without
		// its digest: the release moved to an OCIRepository is upgraded.)
		hr["chartRef"] = map[string]any{"kind": "OCIRepository", "name": own}
		spec := map[string]any{"url": e.oci.URL + "/svc", "ref": map[string]any{"semver": "*"},
			"secretRef": map[string]any{"name": "m-oci-login"}, "certSecretRef": map[string]any{"name": "m-oci-ca"}}
		if s.key == "oci-http" {
			spec = map[string]any{"url": e.plain.URL + "/svc", "ref": map[string]any{"semver": "*"}, "insecure": true}
		}
		spec["layerSelector"] = map[string]any{"mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip", "operation": "copy"}
		objects = append(objects, source("OCIRepository", spec))
		readsBack = false
	case "oci-cosign":
		// An OCIRepository: source-controller verifies a HelmChart of an
		// OCI HelmRepository without its certSecretRef's CA. Managed
		// outside Terraform, it is imported as the chart_ref it is.
		hr["chartRef"] = map[string]any{"kind": "OCIRepository", "name": own}
		objects = append(objects, secret(map[string]any{"cosign.pub": string(e.cosign.PublicPEM)}),
			source("OCIRepository", map[string]any{"url": e.oci.URL + "/svc", "ref": map[string]any{"semver": "*"},
				"secretRef": map[string]any{"name": "m-oci-login"}, "certSecretRef": map[string]any{"name": "m-oci-ca"},
				"verify":        map[string]any{"provider": "cosign", "secretRef": map[string]any{"name": own}},
				"layerSelector": map[string]any{"mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip", "operation": "copy"}}))
		readsBack = false
	case "git-http":
		hr["chart"] = chartSpec("charts/svc", "GitRepository", "m-git")
	case "git-ssh":
		hr["chart"] = chartSpec("charts/svc", "GitRepository", own)
		objects = append(objects, secret(map[string]any{"identity": e.git.Identity, "known_hosts": e.git.KnownHosts}),
			source("GitRepository", map[string]any{"url": e.git.SSHURL("charts"), "ref": map[string]any{"branch": "main"}, "secretRef": map[string]any{"name": own}}))
	case "bucket":
		hr["chart"] = chartSpec("charts/svc", "Bucket", own)
		objects = append(objects, secret(map[string]any{"accesskey": testrepo.Username, "secretkey": testrepo.Password}),
			source("Bucket", map[string]any{"bucketName": "charts", "endpoint": e.s3.Endpoint, "insecure": true, "region": s3server.Region, "secretRef": map[string]any{"name": own}}))
	case "ref-oci":
		hr["chartRef"] = map[string]any{"kind": "OCIRepository", "name": "m-oci"}
	default: // ref-hc-*: the HelmChart m-hc-*
		hr["chartRef"] = map[string]any{"kind": "HelmChart", "name": "m-" + strings.TrimPrefix(s.key, "ref-")}
	}
	return append(objects, map[string]any{"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease", "metadata": map[string]any{"name": name}, "spec": hr}), readsBack
}

// helmReleaseLacks says why HashiCorp's helm_release has no release of
// the row's source.
func helmReleaseLacks(s conformanceSource) string {
	switch {
	case s.key == "oci-cosign":
		return "n/a: `helm_release` verifies no cosign signature"
	case s.key == "oci-http":
		return "n/a: `helm_release` has no plain-HTTP setting"
	case strings.HasPrefix(s.key, "git"):
		return "n/a: `helm_release` reads no Git repository"
	case s.key == "bucket":
		return "n/a: `helm_release` reads no bucket"
	default:
		return "n/a: `helm_release` has no `chart_ref`"
	}
}

// local reports whether the row's chart is a local one, which names one
// chart: the plan of an import or a move of a release of a range, an OCI
// tag or a chart_ref shows its chart as known after apply (nothing pins
// it for the apply's own plan).
func local(s conformanceSource) bool { return s.key == "dir" || s.key == "tgz" }

// moved installs, for each row HashiCorp's helm provider has and each
// engine, a helm_release, and moves it into a helmrelease_release of the
// row's chart on the engine (into Flux, a hand-over): the plan of the move
// plans no Helm action (one upgrade where upgradedOnAdopt), the apply keeps
// each object's uid and makes no revision but the planned one, and the
// plan after it is empty.
func (e *conformanceEnv) moved(t *testing.T) {
	w := helmProviderWorkspace(t, "matrix-moved", e.run.kubeconfig)
	// The helm provider's registry login takes no CA file: the process's
	// roots, as its users with a private CA set them.
	w.env = append(w.env, "SSL_CERT_FILE="+e.oci.CAFile)
	st := newStorageOn(t, e.run.rest, e.run.ns)
	type cell struct {
		s            conformanceSource
		engine, name string
	}
	var cells []cell
	for _, engine := range e.engines() {
		for _, s := range conformanceSources {
			if s.helmRelease != nil && e.runs(s) && s.refused[engine][pathMoved] == "" {
				cells = append(cells, cell{s, engine, "m" + engine[:1] + "-" + s.key})
			}
		}
	}
	helmProvider := fmt.Sprintf(`
provider "helm" {
  kubernetes = { config_path = %q }
  registries = [{ url = %q, username = %q, password = %q }]
}
`, e.run.kubeconfig, strings.TrimSuffix(e.oci.URL, "/charts"), testrepo.Username, testrepo.Password)
	var helmReleases, moved strings.Builder
	for _, c := range cells {
		fmt.Fprintf(&helmReleases, "\nresource \"helm_release\" %[1]q {\n  name = %[1]q\n  namespace = %[2]q\n  %[3]s\n}\n", c.name, e.run.ns, c.s.helmRelease(e))
		fmt.Fprintf(&moved, "%s\nmoved {\n  from = helm_release.%[2]s\n  to   = helmrelease_release.%[2]s\n}\n", e.release(c.s, c.engine, c.name, false), c.name)
	}
	w.write(`terraform {
  required_providers {
    helm = { source = "hashicorp/helm", version = "3.1.2" }
  }
}
` + helmProvider + helmReleases.String())
	w.must(0, "init", "-input=false", "-no-color")
	w.apply()
	uids := map[string]types.UID{}
	for _, c := range cells {
		uids[c.name] = configMapOn(t, e.run.cs, e.run.ns, c.name).UID
	}

	// The move. No second init: the helm provider is locked, and init
	// refuses a provider that dev_overrides replaces.
	w.write(strings.Replace(e.provider(t.TempDir()), "required_providers {\n", "required_providers {\n    helm = { source = \"hashicorp/helm\", version = \"3.1.2\" }\n", 1) + helmProvider + moved.String())
	w.run("plan", "-input=false", "-no-color", "-out=tfplan")
	changes := w.plannedChanges(filepath.Join(w.dir, "tfplan"))
	// upgraded: the move plans one upgrade, to the digest-versioned chart
	// or for the hand-over to Flux (the objects' origin labels).
	upgraded := func(c cell) bool { return c.s.upgradedOnAdopt || c.engine == "flux" }
	for _, c := range cells {
		change, ok := changes[c.name]
		switch {
		case !ok:
			t.Errorf("%s moved into engine %s: not in the plan", c.s.label, c.engine)
		case c.s.upgradedOnAdopt && local(c.s) && !strings.HasPrefix(change.action, "upgrade: chart revision"):
			t.Errorf("%s moved into engine %s: the plan of the move plans %q, want an upgrade to the digest-versioned chart", c.s.label, c.engine, change.action)
		case c.s.upgradedOnAdopt && !local(c.s) && !strings.HasPrefix(change.action, "upgrade: chart known after apply"):
			// A range: nothing pins its chart for the move's plan.
			t.Errorf("%s moved into engine %s: the plan of the move plans %q, want an upgrade whose chart is known after apply", c.s.label, c.engine, change.action)
		case c.engine == "flux" && !strings.Contains(change.action, movedHandOver):
			t.Errorf("%s moved into engine %s: the plan of the move plans %q, want the hand-over's upgrade", c.s.label, c.engine, change.action)
		case !upgraded(c) && change.action != "":
			t.Errorf("%s moved into engine %s: the plan of the move plans a Helm action: %s", c.s.label, c.engine, change.action)
		}
	}
	w.must(0, "apply", "-auto-approve", "-input=false", "-no-color", "tfplan")
	for _, c := range cells {
		want := 1
		if upgraded(c) {
			want = 2
		}
		if latest := st.latest(c.name); latest == nil || latest.Version != want || latest.Info.Status != releasecommon.StatusDeployed {
			t.Errorf("%s moved into engine %s: %s, want revision %d deployed", c.s.label, c.engine, st.describe(c.name), want)
		}
		if uid := configMapOn(t, e.run.cs, e.run.ns, c.name).UID; uid != uids[c.name] {
			t.Errorf("%s moved into engine %s: ConfigMap uid %s, was %s (reinstalled)", c.s.label, c.engine, uid, uids[c.name])
		}
	}
	w.planIsEmpty()
	w.must(0, "destroy", "-auto-approve", "-input=false", "-no-color")
	for _, c := range cells {
		if latest := st.latest(c.name); latest != nil {
			t.Errorf("%s moved into engine %s, after destroy: %s", c.s.label, c.engine, st.describe(c.name))
		}
	}
}

func sourceByKey(key string) conformanceSource {
	for _, s := range conformanceSources {
		if s.key == key {
			return s
		}
	}
	return conformanceSource{key: key, label: key}
}

// conformanceTable is the matrix as the chart sources guide shows it.
func conformanceTable() string {
	var b strings.Builder
	b.WriteString("| Source | Engine |")
	for _, p := range conformancePaths {
		b.WriteString(" " + p + " |")
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(conformancePaths)) + "\n")
	for _, s := range conformanceSources {
		for _, engine := range []string{"helm", "flux"} {
			fmt.Fprintf(&b, "| %s | `%s` |", s.label, engine)
			for _, p := range conformancePaths {
				cell := "✓"
				if p == pathHandOver && engine == "flux" {
					cell = "✓ (back to `helm`)"
				}
				if (p == pathAdopt && engine == "helm" || p == pathMoved) && s.upgradedOnAdopt {
					cell = upgradedOnAdoptNote
				}
				if p == pathMoved && engine == "flux" && s.refused[engine][p] == "" {
					cell = "✓ (the hand-over's upgrade)"
				}
				if p == pathMoved && s.helmRelease == nil {
					cell = helmReleaseLacks(s)
				}
				if r := s.refused[engine][p]; r != "" {
					cell = "refused: " + r
					if strings.HasPrefix(r, "n/a") {
						cell = r
					}
				}
				b.WriteString(" " + cell + " |")
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// TestConformanceTableInDocs: the chart sources guide shows the matrix
// TestConformance runs.
func TestConformanceTableInDocs(t *testing.T) {
	guide := filepath.Join(repoRoot, "templates", "guides", "chart-sources.md.tmpl")
	b, err := os.ReadFile(guide)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- conformance matrix: generated by internal/e2e TestConformanceTableInDocs -->\n", "<!-- end of the conformance matrix -->"
	text := string(b)
	i, j := strings.Index(text, begin), strings.Index(text, end)
	want := conformanceTable()
	if i < 0 || j < i {
		t.Fatalf("%s has no conformance matrix between %q and %q; it should be:\n%s", guide, begin, end, want)
	}
	if got := text[i+len(begin) : j]; got != want {
		if os.Getenv("HELMRELEASE_UPDATE_DOCS") != "" {
			if err := os.WriteFile(guide, []byte(text[:i+len(begin)]+want+text[j:]), 0o600); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("the conformance matrix of %s is not the test's (HELMRELEASE_UPDATE_DOCS=1 rewrites it):\n%s", guide, want)
	}
}

// plannedChange is what a plan does to a helmrelease_release.
type plannedChange struct {
	// action is planned_action; empty when null.
	action string
	// statusUnknown: status is known after apply.
	statusUnknown           bool
	beforeChart, afterChart map[string]json.RawMessage
}

// readBack checks that an import read the chart's settings back as
// configured.
func (c plannedChange) readBack(t *testing.T, release string) {
	t.Helper()
	for _, attr := range []string{"verify", "values_files", "plain_http", "name", "repository", "git", "bucket"} {
		if b, a := withoutKeys(c.beforeChart[attr]), withoutKeys(c.afterChart[attr]); b != a {
			t.Errorf("%s: the import read chart.%s back as %s, configured %s", release, attr, b, a)
		}
	}
}

// plannedChanges are the plan file's changes of helmrelease_release
// resources, by name.
func (w *workspace) plannedChanges(planFile string) map[string]plannedChange {
	w.t.Helper()
	res := w.must(0, "show", "-json", planFile)
	var plan struct {
		ResourceChanges []struct {
			Type, Name string
			Change     struct {
				Before struct {
					Chart map[string]json.RawMessage `json:"chart"`
				} `json:"before"`
				After struct {
					Chart         map[string]json.RawMessage `json:"chart"`
					PlannedAction *string                    `json:"planned_action"`
				} `json:"after"`
				AfterUnknown struct {
					Status json.RawMessage `json:"status"`
				} `json:"after_unknown"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &plan); err != nil {
		w.t.Fatalf("terraform show -json: %v", err)
	}
	out := map[string]plannedChange{}
	for _, rc := range plan.ResourceChanges {
		if rc.Type != "helmrelease_release" {
			continue
		}
		c := plannedChange{beforeChart: rc.Change.Before.Chart, afterChart: rc.Change.After.Chart, statusUnknown: string(rc.Change.AfterUnknown.Status) == "true"}
		if a := rc.Change.After.PlannedAction; a != nil {
			c.action = *a
		}
		out[rc.Name] = c
	}
	return out
}

// withoutKeys is a chart attribute's JSON without its private keys, which
// no import can read back.
func withoutKeys(raw json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return string(raw)
	}
	delete(m, "private_key")
	delete(m, "private_key_wo")
	b, _ := json.Marshal(m)
	return string(b)
}
