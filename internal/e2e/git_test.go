//go:build unix

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	releasecommon "helm.sh/helm/v4/pkg/release/common"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testcluster"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

var gitRepositories = schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "gitrepositories"}

// gitConfig is a configuration of releases of the svc chart from the Git
// repository "charts" of srv, at charts/svc on branch main: "http" over
// HTTP with basic auth, "ssh" over SSH with a write-only key; extra are
// more resources' HCL.
func gitConfig(srv *testrepo.Git, ns, kubeconfig, cacheDir, engine string, extra string) string {
	return fmt.Sprintf(`terraform {
  required_providers {
    helmrelease = { source = "helmrelease/helmrelease" }
  }
}

provider "helmrelease" {
  kubernetes = { config_path = %[1]q }
  cache_dir  = %[2]q
}

variable "ssh_key" {
  type      = string
  sensitive = true
  ephemeral = true
}

resource "helmrelease_release" "http" {
  name      = "http"
  namespace = %[3]q
  engine    = %[4]q
  chart = {
    name     = "charts/svc"
    git      = { url = %[5]q, ref = { branch = "main" } }
    username = %[6]q
    password = %[7]q
  }
}

resource "helmrelease_release" "ssh" {
  name      = "ssh"
  namespace = %[3]q
  engine    = %[4]q
  chart = {
    name = "charts/svc"
    git = {
      url            = %[8]q
      ref            = { branch = "main" }
      private_key_wo = var.ssh_key
      known_hosts    = %[9]q
    }
  }
}
%[10]s`, kubeconfig, cacheDir, ns, engine, srv.HTTPURL("charts"), testrepo.Username, testrepo.Password, srv.SSHURL("charts"), srv.KnownHosts, extra)
}

// svcChart are the files of the svc chart at version under charts/svc.
func svcChart(t *testing.T, version string) map[string]string {
	t.Helper()
	files := testrepo.ChartFiles(t, testdataPath("charts", "svc"), "charts/svc")
	files["charts/svc/Chart.yaml"] = strings.Replace(files["charts/svc/Chart.yaml"], "version: 1.0.0", "version: "+version, 1)
	return files
}

// sourceRevisions are chart_source_revision and chart_version of the
// state's releases, by name.
func (w *workspace) sourceRevisions() map[string][2]string {
	w.t.Helper()
	var st struct {
		Resources []struct {
			Type, Name string
			Instances  []struct {
				Attributes struct {
					ChartVersion        string `json:"chart_version"`
					ChartSourceRevision string `json:"chart_source_revision"`
				} `json:"attributes"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(w.stateBytes(), &st); err != nil {
		w.t.Fatal(err)
	}
	out := map[string][2]string{}
	for _, r := range st.Resources {
		if r.Type == "helmrelease_release" && len(r.Instances) > 0 {
			a := r.Instances[0].Attributes
			out[r.Name] = [2]string{a.ChartSourceRevision, a.ChartVersion}
		}
	}
	return out
}

// testGitLifecycle runs the lifecycle of charts from Git through terraform
// on one engine: install over HTTP and SSH (a saved plan applied after the
// branch moved), an empty plan, a commit that
// leaves the chart's version (no change), one that bumps it (an upgrade of
// the planned commit even though the branch moved after the plan), wrong
// credentials and a missing path refused at plan with nothing written
// (in-process), and destroy. check, when set, looks at the cluster after
// each apply.
func testGitLifecycle(t *testing.T, ns, kubeconfig string, rc *rest.Config, engine string, check func(t *testing.T, name, commit string)) {
	srv := testrepo.NewGit(t)
	first := srv.Commit(t, "charts", "main", svcChart(t, "1.0.0"))
	w := newWorkspace(t, "git")
	w.env = append(w.env, "TF_VAR_ssh_key="+srv.Identity)
	cacheDir := t.TempDir()
	w.write(gitConfig(srv, ns, kubeconfig, cacheDir, engine, ""))
	// The create's saved plan, from a branch nothing pins, says its chart
	// is known after apply; the branch moves on before the apply, which
	// deploys the commit the branch is at then.
	out := w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=tfplan")
	if !has(out.stdout+out.stderr, "Chart known after apply") || !has(out.stdout+out.stderr, "main@sha1:"+first) {
		t.Errorf("the plan of a create from a branch does not say its chart is known after apply, naming the commit it resolves now:\n%s", out)
	}
	first = srv.Commit(t, "charts", "main", map[string]string{"NOTES.md": "committed after the create's plan\n"})
	out = w.must(0, "apply", "-input=false", "-no-color", "tfplan")
	if strings.Contains(out.stdout+out.stderr, testrepo.Password) || strings.Contains(out.stdout+out.stderr, "PRIVATE KEY") {
		t.Fatalf("the apply shows a credential:\n%s", out)
	}
	st := newStorageOn(t, rc, ns)
	revision := func(name, want, version string) {
		t.Helper()
		if got := w.sourceRevisions()[name]; got != [2]string{"main@sha1:" + want, version} {
			t.Errorf("release %s: chart_source_revision and chart_version %v, want main@sha1:%s and %s", name, got, want, version)
		}
		if latest := st.latest(name); latest == nil || latest.Info.Status != releasecommon.StatusDeployed || latest.Chart.Metadata.Version != version {
			t.Errorf("release %s: %s, want chart %s deployed", name, st.describe(name), version)
		}
		if check != nil {
			check(t, name, want)
		}
	}
	revisions := func(want string, version string) {
		t.Helper()
		for _, name := range []string{"http", "ssh"} {
			revision(name, want, version)
		}
	}
	revisions(first, "1.0.0")
	if strings.Contains(string(w.stateBytes()), "PRIVATE KEY") {
		t.Error("the state holds the write-only SSH key")
	}
	w.planIsEmpty()

	// A commit that leaves the chart's version: nothing to do (the
	// default reconcile strategy, ChartVersion, as HelmChart's).
	srv.Commit(t, "charts", "main", map[string]string{"README.md": "charts\n"})
	w.planIsEmpty()

	// A commit that bumps the chart: planned, then the branch moves on;
	// the apply deploys the commit planned. The refresh cannot resolve
	// the release whose SSH key is write-only (the state does not hold
	// it), so nothing pins its chart: its plan says the chart is known
	// after apply, and the apply deploys the branch as it is then.
	bumped := srv.Commit(t, "charts", "main", svcChart(t, "1.0.1"))
	res := w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=tfplan")
	if !has(res.stdout, `upgrade: chart version \"1.0.0\" → \"1.0.1\"`) || !has(res.stdout, "main@sha1:"+bumped) {
		t.Errorf("the plan does not show the upgrade to 1.0.1 from main@sha1:%s:\n%s", bumped, res.stdout)
	}
	if !has(res.stdout+res.stderr, "Chart known after apply") || !has(res.stdout, "upgrade: chart known after apply") {
		t.Errorf("the plan of the release with a write-only key does not say its chart is known after apply:\n%s", res)
	}
	later := srv.Commit(t, "charts", "main", svcChart(t, "1.0.2"))
	w.must(0, "apply", "-input=false", "-no-color", "tfplan")
	revision("http", bumped, "1.0.1")
	revision("ssh", later, "1.0.2")
	res = w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode")
	if !has(res.stdout, "main@sha1:"+later) {
		t.Errorf("the plan after the branch moved on does not show its new commit %s:\n%s", later, res.stdout)
	}
	w.apply()
	revisions(later, "1.0.2")
	w.planIsEmpty()

	// Removed from the state and imported: the apply of the import's
	// configuration is consistent and runs no Helm action (Helm's storage
	// does not record the commit: chart_source_revision stays null until
	// an upgrade deploys one).
	if engine != "flux" {
		before := st.latest("http").Version
		w.must(0, "state", "rm", "-no-color", "helmrelease_release.http")
		w.must(0, "import", "-input=false", "-no-color", "helmrelease_release.http", ns+"/http")
		w.apply()
		if latest := st.latest("http"); latest == nil || latest.Version != before {
			t.Errorf("the apply after the import made a Helm revision: %s, want revision %d", st.describe("http"), before)
		}
		w.planIsEmpty()
	}

	// Refused at plan, naming the source and what to do; nothing written.
	// The chart is resolved before either engine acts: checked in-process.
	if engine != "flux" {
		for _, bad := range []struct{ name, chart, want string }{
			{"wrongpassword", fmt.Sprintf(`{ name = "charts/svc", git = { url = %q }, username = %q, password = "wrong-password-42" }`, srv.HTTPURL("charts"), testrepo.Username), "Git repository not usable"},
			{"missingpath", fmt.Sprintf(`{ name = "charts/absent", git = { url = %q, ref = { branch = "main" } }, username = %q, password = %q }`, srv.HTTPURL("charts"), testrepo.Username, testrepo.Password), "Chart not found in the source"},
		} {
			w.write(gitConfig(srv, ns, kubeconfig, cacheDir, engine, fmt.Sprintf("\nresource \"helmrelease_release\" %q {\n  name      = %[1]q\n  namespace = %q\n  engine    = %q\n  chart     = %s\n}\n", bad.name, ns, engine, bad.chart)))
			res := w.must(1, "plan", "-input=false", "-no-color")
			if !has(res.stderr, bad.want) || !has(res.stderr, srv.HTTPURL("charts")) || strings.Contains(res.stderr, "wrong-password-42") {
				t.Errorf("%s: the plan's error does not say %q naming %s, or shows the password:\n%s", bad.name, bad.want, srv.HTTPURL("charts"), res.stderr)
			}
			if latest := st.latest(bad.name); latest != nil {
				t.Errorf("%s: a release was written: %s", bad.name, st.describe(bad.name))
			}
		}
	}
	w.write(gitConfig(srv, ns, kubeconfig, cacheDir, engine, ""))
	w.must(0, "destroy", "-auto-approve", "-input=false", "-no-color")
	for _, name := range []string{"http", "ssh"} {
		if latest := st.latest(name); latest != nil {
			t.Errorf("release %s after destroy: %s", name, st.describe(name))
		}
	}
}

// TestGitCharts: charts from a Git server on loopback with the in-process
// engine (testGitLifecycle).
func TestGitCharts(t *testing.T) {
	parallelMatrix(t)
	ns := newNamespace(t)
	testGitLifecycle(t, ns, cluster.Kubeconfig, restConfig, "helm", nil)
}

// TestFluxChartSources: charts from Git and from a bucket with engine =
// "flux", under each helm-controller, one after the other on the same
// controllers: the release's GitRepository is pinned to the planned
// commit, its Bucket names the bucket, the HelmRelease's chart names
// them; destroy deletes them. Then charts by chart_ref, with both engines
// (testChartRefLifecycle), whose objects need source-controller.
func TestFluxChartSources(t *testing.T) {
	all, err := testcluster.FluxVersions()
	if err != nil {
		t.Fatal(err)
	}
	versions := all[testcluster.HelmController]
	withFluxControllers(t, func(t *testing.T, run *fluxRun) {
		dyn := dynamic.NewForConfigOrDie(run.rest)
		chartFrom := func(t *testing.T, name, kind string) {
			t.Helper()
			hr, err := dyn.Resource(helmReleases).Namespace(run.ns).Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got, _, _ := unstructured.NestedString(hr.Object, "spec", "chart", "spec", "sourceRef", "kind"); got != kind {
				t.Errorf("HelmRelease %s's chart comes from a %q, want %s", name, got, kind)
			}
		}
		t.Run("git", func(t *testing.T) {
			testGitLifecycle(t, run.ns, run.kubeconfig, run.rest, "flux", func(t *testing.T, name, commit string) {
				t.Helper()
				repo, err := dyn.Resource(gitRepositories).Namespace(run.ns).Get(context.Background(), name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if got, _, _ := unstructured.NestedString(repo.Object, "spec", "ref", "commit"); got != commit {
					t.Errorf("GitRepository %s pinned to %q, want %s", name, got, commit)
				}
				chartFrom(t, name, "GitRepository")
			})
		})
		t.Run("bucket", func(t *testing.T) {
			testBucketLifecycle(t, run.ns, run.kubeconfig, run.rest, "flux", func(t *testing.T) {
				t.Helper()
				b, err := dyn.Resource(buckets).Namespace(run.ns).Get(context.Background(), "app", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if name, _, _ := unstructured.NestedString(b.Object, "spec", "bucketName"); name != "charts" {
					t.Errorf("Bucket app names the bucket %q, want charts", name)
				}
				chartFrom(t, "app", "Bucket")
			})
		})
		newest := run.Versions[testcluster.HelmController] == versions[len(versions)-1]
		t.Run("chart_ref", func(t *testing.T) { testChartRefLifecycle(t, run, newest) })
		if newest {
			// source-controller verifies; helm-controller's version is
			// not at stake.
			t.Run("signed", func(t *testing.T) { testSignedCharts(t, run) })
		}
		if left := providerObjects(t, run.rest, run.ns); len(left) > 0 {
			t.Errorf("after destroy the provider's sources and Secrets are left: %v", left)
		}
	})
}
