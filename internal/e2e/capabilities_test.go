//go:build unix

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// prometheusCharts is the charts/ directory of prometheus-community's
// helm-charts repository in the module cache, at the commit tools/charts
// pins.
func prometheusCharts(t *testing.T) string {
	t.Helper()
	return filepath.Join(moduleDir(t, "charts", "github.com/prometheus-community/helm-charts"), "charts")
}

// gatedRelease is a release whose chart renders an object only when
// .Capabilities has a kind that the release it depends on brings.
type gatedRelease struct {
	// operator's chart brings the kind's CRD; app's renders object
	// (resources key) only when .Capabilities has the kind.
	operator, app            *testrepoChart
	object                   string
	gvr                      schema.GroupVersionResource
	objectName, groupVersion string
}

// testrepoChart is a chart served by the row's repository, with the HCL
// lines of its release.
type testrepoChart struct {
	name, version, body string
}

// contractGatedOnKind: an operator's release brings a CRD and a release
// that depends on it renders its custom resource only where
// .Capabilities.APIVersions has the kind (as charts gate their
// ServiceMonitors and Certificates). On a cluster without the kind, one
// plan shows the custom resource and one apply of that plan deploys it,
// never Terraform's "inconsistent final plan"; the next plan is empty.
func contractGatedOnKind(t *testing.T, env *engineEnv) {
	group := env.ns + ".example.com"
	dir := t.TempDir()
	operator := filepath.Join(dir, "widgets-operator")
	writeChartDir(t, operator, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: operator\n")
	if err := os.MkdirAll(filepath.Join(operator, "crds"), 0o750); err != nil {
		t.Fatal(err)
	}
	crd := namespacedCRD(group, "Widget")
	if err := os.WriteFile(filepath.Join(operator, "crds", "widgets.yaml"), []byte(crd), 0o600); err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(dir, "widgets-app")
	writeChartDir(t, app, fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: app
{{- if .Capabilities.APIVersions.Has "%[1]s/v1/Widget" }}
---
apiVersion: %[1]s/v1
kind: Widget
metadata:
  name: gated
spec:
  size: 3
{{- end }}
`, group))
	deleteCRDAfter(t, env, "widgets."+group)
	gatedPair(t, env, gatedRelease{
		operator:     &testrepoChart{name: "widgets-operator", version: "1.0.0"},
		app:          &testrepoChart{name: "widgets-app", version: "1.0.0"},
		object:       group + "/v1/Widget/" + env.ns + "/gated",
		gvr:          schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"},
		objectName:   "gated",
		groupVersion: group + "/v1",
	}, map[string]string{"widgets-operator": operator, "widgets-app": app})
}

// contractGatedOnKindPublic is contractGatedOnKind with public charts:
// prometheus-operator-crds (the ServiceMonitor CRD alone, among its
// templates) and prometheus-memcached-exporter, whose ServiceMonitor is
// rendered only where the cluster serves monitoring.coreos.com/v1.
func contractGatedOnKindPublic(t *testing.T, env *engineEnv) {
	charts := prometheusCharts(t)
	var only []string
	for _, crd := range []string{"alertmanagerconfigs", "alertmanagers", "podmonitors", "probes", "prometheusagents", "prometheuses", "prometheusrules", "scrapeconfigs", "thanosrulers"} {
		only = append(only, crd+" = { enabled = false }")
	}
	gatedPair(t, env, gatedRelease{
		operator: &testrepoChart{name: "prometheus-operator-crds", version: "31.0.1",
			body: "  values = { crds = { " + strings.Join(only, ", ") + " } }\n"},
		app: &testrepoChart{name: "prometheus-memcached-exporter", version: "0.6.0",
			// The chart's ServiceMonitor names the port service.portName,
			// which its values leave unset: the Service's port is http-alt.
			body: "  values = { serviceMonitor = { enabled = true }, service = { portName = \"http-alt\" } }\n"},
		object:       "monitoring.coreos.com/v1/ServiceMonitor/" + env.ns + "/prometheus-memcached-exporter",
		gvr:          schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "servicemonitors"},
		objectName:   "prometheus-memcached-exporter",
		groupVersion: "monitoring.coreos.com/v1",
	}, map[string]string{
		"prometheus-operator-crds":      filepath.Join(charts, "prometheus-operator-crds"),
		"prometheus-memcached-exporter": filepath.Join(charts, "prometheus-memcached-exporter"),
	})
}

// gatedPair plans (saved) and applies g's operator and app releases from
// the chart directories dirs, and checks that the plan showed the gated
// object, that the apply deployed it, and that the next plan is empty.
func gatedPair(t *testing.T, env *engineEnv, g gatedRelease, dirs map[string]string) {
	repo := testrepo.NewHTTP(t)
	for _, c := range []*testrepoChart{g.operator, g.app} {
		repo.Add(t, testrepo.LoadChart(t, dirs[c.name], c.version), nil)
	}
	release := func(c *testrepoChart, extra string) string {
		return fmt.Sprintf(`
resource "helmrelease_release" %[1]q {
  name      = %[2]q
  namespace = %[3]q
  engine    = %[4]q
  chart     = { name = %[2]q, repository = %[5]q, version = %[6]q, username = %[7]q, password = %[8]q }
  timeout   = "5m"
%[9]s%[10]s}
`, strings.ReplaceAll(c.name, "-", "_"), c.name, env.ns, env.engine, repo.URL, c.version, testrepo.Username, testrepo.Password, c.body, extra)
	}
	w := newWorkspace(t, "gated")
	w.write(env.c.hcl(nil) + release(g.operator, "") + release(g.app, "  depends_on = [helmrelease_release."+strings.ReplaceAll(g.operator.name, "-", "_")+"]\n"))
	t.Cleanup(func() { w.run("destroy", "-auto-approve", "-input=false", "-no-color") })

	if _, err := discovery.NewDiscoveryClientForConfigOrDie(env.rest).ServerResourcesForGroupVersion(g.groupVersion); !apierrors.IsNotFound(err) {
		// A run before left the CRD: the plan is then the usual one.
		t.Logf("the cluster serves %s already (%v)", g.groupVersion, err)
	}
	w.must(0, "plan", "-input=false", "-no-color", "-out=gated.tfplan")
	show := w.must(0, "show", "-json", "gated.tfplan")
	var plan struct {
		ResourceChanges []struct {
			Address string `json:"address"`
			Change  struct {
				After map[string]any `json:"after"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal([]byte(show.stdout), &plan); err != nil {
		t.Fatal(err)
	}
	appAddress := "helmrelease_release." + strings.ReplaceAll(g.app.name, "-", "_")
	for _, rc := range plan.ResourceChanges {
		if rc.Address != appAddress {
			continue
		}
		resources, _ := rc.Change.After["resources"].(map[string]any)
		if y, _ := resources[g.object].(string); !strings.Contains(y, "kind: ") {
			t.Errorf("the plan does not show %s, which the apply deploys: %v", g.object, keys(resources))
		}
	}
	w.must(0, "apply", "-auto-approve", "-input=false", "-no-color", "gated.tfplan")
	if _, err := dynamic.NewForConfigOrDie(env.rest).Resource(g.gvr).Namespace(env.ns).Get(context.Background(), g.objectName, metav1.GetOptions{}); err != nil {
		t.Errorf("%s after the apply: %v", g.object, err)
	}
	w.planIsEmpty()
}
