//go:build unix

package e2e

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo/s3server"
)

var buckets = schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "buckets"}

// bucketConfig is a release "app" of the svc chart in the folder
// charts/svc of the bucket "charts" on srv; extra is more HCL.
func bucketConfig(srv *s3server.S3, ns, kubeconfig, cacheDir, engine, extra string) string {
	return fmt.Sprintf(`terraform {
  required_providers {
    helmrelease = { source = "helmrelease/helmrelease" }
  }
}

provider "helmrelease" {
  kubernetes = { config_path = %[1]q }
  cache_dir  = %[2]q
}

resource "helmrelease_release" "app" {
  name      = "app"
  namespace = %[3]q
  engine    = %[4]q
  chart = {
    name     = "charts/svc"
    bucket   = { endpoint = %[5]q, bucket_name = "charts", insecure = true, region = %[6]q }
    username = %[7]q
    password = %[8]q
  }
}
%[9]s`, kubeconfig, cacheDir, ns, engine, srv.Endpoint, s3server.Region, testrepo.Username, testrepo.Password, extra)
}

// testBucketLifecycle runs the lifecycle of a chart from a bucket through
// terraform on one engine: install, an empty plan, an object outside the
// chart (no change), a new chart version (an upgrade; in-process, of the
// objects planned even though the bucket changed after the plan), wrong
// keys and a missing folder refused at plan with nothing written
// (in-process), and destroy.
func testBucketLifecycle(t *testing.T, ns, kubeconfig string, rc *rest.Config, engine string, check func(t *testing.T)) {
	srv := s3server.New(t)
	srv.MakeBucket(t, "charts")
	srv.Put(t, "charts", svcChart(t, "1.0.0"))
	w := newWorkspace(t, "bucket")
	cacheDir := t.TempDir()
	w.write(bucketConfig(srv, ns, kubeconfig, cacheDir, engine, ""))
	out := w.apply()
	if strings.Contains(out.stdout+out.stderr, testrepo.Password) {
		t.Fatalf("the apply shows the secret key:\n%s", out)
	}
	st := newStorageOn(t, rc, ns)
	deployed := func(version string) {
		t.Helper()
		rev := w.sourceRevisions()["app"]
		if !strings.HasPrefix(rev[0], "sha256:") || rev[1] != version {
			t.Errorf("chart_source_revision and chart_version %v, want a sha256 revision and %s", rev, version)
		}
		if latest := st.latest("app"); latest == nil || latest.Chart.Metadata.Version != version {
			t.Errorf("release: %s, want chart %s", st.describe("app"), version)
		}
		if check != nil {
			check(t)
		}
	}
	deployed("1.0.0")
	w.planIsEmpty()

	srv.Put(t, "charts", map[string]string{"README.md": "charts\n"})
	w.planIsEmpty()

	srv.Put(t, "charts", svcChart(t, "1.0.1"))
	if engine == "flux" {
		res := w.apply()
		if !has(res.stdout, `\"1.0.0\" → \"1.0.1\"`) {
			t.Errorf("the apply does not upgrade to 1.0.1:\n%s", res)
		}
	} else {
		// Changed after the plan: a bucket keeps no history, and the plan's
		// download in cache_dir is not trusted by another run, so the
		// apply refuses, asking for a new plan, and deploys nothing.
		w.must(2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=tfplan")
		srv.Put(t, "charts", map[string]string{"charts/svc/values.yaml": "changed: after the plan\n"})
		res := w.must(1, "apply", "-input=false", "-no-color", "tfplan")
		if !has(res.stderr, "Bucket changed since the plan") || !has(res.stderr, "Run terraform plan again") {
			t.Errorf("the apply of a plan whose bucket changed does not ask for a new plan:\n%s", res.stderr)
		}
		if latest := st.latest("app"); latest == nil || latest.Chart.Metadata.Version != "1.0.0" {
			t.Errorf("the refused apply deployed: %s", st.describe("app"))
		}
		w.apply()
		if latest := st.latest("app"); latest == nil || latest.Chart.Values["changed"] != "after the plan" {
			t.Errorf("the new plan's apply did not deploy the bucket's values.yaml: %s", st.describe("app"))
		}
	}
	deployed("1.0.1")

	// The chart is resolved before either engine acts: checked in-process.
	if engine != "flux" {
		for _, bad := range []struct{ name, chart, want string }{
			{"wrongkey", fmt.Sprintf(`{ name = "charts/svc", bucket = { endpoint = %q, bucket_name = "charts", insecure = true }, username = %q, password = "wrong-secret-42" }`, srv.Endpoint, testrepo.Username), "Bucket not usable"},
			{"missingpath", fmt.Sprintf(`{ name = "charts/absent", bucket = { endpoint = %q, bucket_name = "charts", insecure = true }, username = %q, password = %q }`, srv.Endpoint, testrepo.Username, testrepo.Password), "Chart not found in the source"},
		} {
			w.write(bucketConfig(srv, ns, kubeconfig, cacheDir, engine, fmt.Sprintf("\nresource \"helmrelease_release\" %q {\n  name      = %[1]q\n  namespace = %q\n  engine    = %q\n  chart     = %s\n}\n", bad.name, ns, engine, bad.chart)))
			res := w.must(1, "plan", "-input=false", "-no-color")
			if !has(res.stderr, bad.want) || !has(res.stderr, srv.Endpoint) || strings.Contains(res.stderr, "wrong-secret-42") {
				t.Errorf("%s: the plan's error does not say %q naming %s, or shows the secret key:\n%s", bad.name, bad.want, srv.Endpoint, res.stderr)
			}
			if latest := st.latest(bad.name); latest != nil {
				t.Errorf("%s: a release was written: %s", bad.name, st.describe(bad.name))
			}
		}
	}
	w.write(bucketConfig(srv, ns, kubeconfig, cacheDir, engine, ""))
	w.must(0, "destroy", "-auto-approve", "-input=false", "-no-color")
	if latest := st.latest("app"); latest != nil {
		t.Errorf("release after destroy: %s", st.describe("app"))
	}
}

// TestBucketCharts: a chart from an S3 server on loopback (versitygw)
// with the in-process engine (testBucketLifecycle).
func TestBucketCharts(t *testing.T) {
	parallelMatrix(t)
	testBucketLifecycle(t, newNamespace(t), cluster.Kubeconfig, restConfig, "helm", nil)
}
