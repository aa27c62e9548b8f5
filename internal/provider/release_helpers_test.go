package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
)

const rel = "helmrelease_release.r"

// webChartDir is the release chart of the acceptance tests.
// localRevision matches the revision of a local chart of version: the
// version with 12 hex digits of the content digest.
func localRevision(version string) *regexp.Regexp {
	return regexp.MustCompile(`^` + regexp.QuoteMeta(version) + `\+[0-9a-f]{12}$`)
}

func webChartDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("testdata/charts/web")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// appChart is held by a test that installs testdata/charts/app, whose
// CRD and ClusterRole are cluster-scoped: one such release at a time,
// beside the tests of namespaced objects.
var appChart sync.Mutex

// installsAppChart holds appChart until the test ends.
func installsAppChart(t *testing.T) {
	t.Helper()
	appChart.Lock()
	t.Cleanup(appChart.Unlock)
}

// testNamespace is a namespace name for the test.
func testNamespace(t *testing.T) string {
	ns := "rel-" + strings.ToLower(strings.NewReplacer("_", "-", "/", "-").Replace(strings.TrimPrefix(t.Name(), "TestAccRelease_")))
	if len(ns) > 63 {
		ns = ns[:63]
	}
	return strings.TrimRight(ns, "-")
}

// changedObjects checks that the plan changes exactly the objects want of
// the resources attribute (added, removed or modified), as `terraform plan`
// shows them.
type changedObjects struct {
	addr string
	want []string
	// unknown are the objects planned as known after apply.
	unknown []string
}

func expectChangedObjects(keys ...string) plancheck.PlanCheck {
	return changedObjects{addr: rel, want: keys}
}

// expectPlannedObjects checks that the plan changes exactly the objects
// changed, and plans exactly the objects unknown as known after apply.
func expectPlannedObjects(changed, unknown []string) plancheck.PlanCheck {
	return changedObjects{addr: rel, want: changed, unknown: unknown}
}

func (c changedObjects) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != c.addr {
			continue
		}
		if unknown, ok := rc.Change.AfterUnknown.(map[string]any); ok && unknown["resources"] == true {
			resp.Error = fmt.Errorf("%s: resources are unknown in the plan", c.addr)
			return
		}
		before, after := objectsOf(rc.Change.Before), objectsOf(rc.Change.After)
		var unknown []string
		if u, ok := rc.Change.AfterUnknown.(map[string]any); ok {
			elems, _ := u["resources"].(map[string]any)
			for k, v := range elems {
				if v == true {
					unknown = append(unknown, k)
				}
			}
		}
		var changed []string
		for k, v := range after {
			if before[k] != v && !slices.Contains(unknown, k) {
				changed = append(changed, k)
			}
		}
		for k := range before {
			if _, ok := after[k]; !ok && !slices.Contains(unknown, k) {
				changed = append(changed, k)
			}
		}
		sort.Strings(changed)
		want := slices.Clone(c.want)
		sort.Strings(want)
		if !slices.Equal(changed, want) {
			resp.Error = fmt.Errorf("%s: plan changes objects %v, want %v", c.addr, changed, want)
		}
		sort.Strings(unknown)
		wantUnknown := slices.Clone(c.unknown)
		sort.Strings(wantUnknown)
		if !slices.Equal(unknown, wantUnknown) {
			resp.Error = errors.Join(resp.Error, fmt.Errorf("%s: plan has objects %v known after apply, want %v", c.addr, unknown, wantUnknown))
		}
		return
	}
	resp.Error = fmt.Errorf("%s not in the plan", c.addr)
}

func objectsOf(v any) map[string]string {
	out := map[string]string{}
	m, _ := v.(map[string]any)
	res, _ := m["resources"].(map[string]any)
	for k, v := range res {
		out[k], _ = v.(string)
	}
	return out
}

// releaseGone checks, at destroy, that Helm storage holds no revision of
// the release web.
func releaseGone(t *testing.T, namespace string) func(*terraform.State) error {
	return releaseGoneNamed(t, namespace, "web")
}

// releaseGoneNamed checks, at destroy, that Helm storage holds no revision
// of the release name.
func releaseGoneNamed(t *testing.T, namespace, name string) func(*terraform.State) error {
	return func(*terraform.State) error {
		secrets, err := testClient(t).CoreV1().Secrets(namespace).List(context.Background(), metav1.ListOptions{LabelSelector: "owner=helm,name=" + name})
		if err != nil {
			return err
		}
		if n := len(secrets.Items); n > 0 {
			return fmt.Errorf("release %s/%s still has %d revisions in storage", namespace, name, n)
		}
		return nil
	}
}

// configMapMessage reads the message of the release's ConfigMap web-config.
func configMapMessage(t *testing.T, namespace string) string {
	t.Helper()
	const name, key = "web-config", "message"
	cm, err := testClient(t).CoreV1().ConfigMaps(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("ConfigMap %s/%s: %v", namespace, name, err)
	}
	return cm.Data[key]
}

// priorState checks a value of the resource's state before the plan (the
// refreshed state), e.g. the status a failed apply saved.
type priorState struct {
	addr  string
	path  []string
	check knownvalue.Check
}

func expectPriorState(check knownvalue.Check, path ...string) plancheck.PlanCheck {
	return priorState{addr: rel, path: path, check: check}
}

func (c priorState) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	if req.Plan.PriorState == nil || req.Plan.PriorState.Values == nil {
		resp.Error = fmt.Errorf("no prior state")
		return
	}
	for _, r := range req.Plan.PriorState.Values.RootModule.Resources {
		if r.Address != c.addr {
			continue
		}
		var v any = r.AttributeValues
		for _, p := range c.path {
			switch t := v.(type) {
			case map[string]any:
				v = t[p]
			default:
				resp.Error = fmt.Errorf("%s: no %s in the prior state", c.addr, strings.Join(c.path, "."))
				return
			}
		}
		if f, ok := v.(float64); ok {
			// The plan's JSON holds float64; knownvalue checks json.Number.
			v = json.Number(strconv.FormatFloat(f, 'f', -1, 64))
		}
		if err := c.check.CheckValue(v); err != nil {
			resp.Error = fmt.Errorf("%s prior state %s: %w", c.addr, strings.Join(c.path, "."), err)
		}
		return
	}
	resp.Error = fmt.Errorf("%s not in the prior state", c.addr)
}

// helmCLI acts on releases of namespace as the Helm CLI would, outside
// Terraform.
func helmCLI(t *testing.T, namespace string) *helm.Client {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", testKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c, err := helm.NewClient(helm.ClientOptions{Getter: kube.NewGetter(cfg, namespace, ""), StorageNamespace: namespace})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// helmUpgrade is `helm upgrade <name> <web chart> --set …` outside Terraform.
func helmUpgrade(t *testing.T, namespace, name string, values map[string]any) {
	t.Helper()
	c, err := helm.LoadChart(webChartDir(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := helmCLI(t, namespace).Upgrade(context.Background(), name, c, values, helm.UpgradeOptions{Namespace: namespace, Timeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
}

// helmInstall is `helm install <name> <web chart> --create-namespace --set …`.
func helmInstall(t *testing.T, namespace, name string, values map[string]any) {
	t.Helper()
	c, err := helm.LoadChart(webChartDir(t))
	if err != nil {
		t.Fatal(err)
	}
	createValuesObjects(t, namespace)
	if _, err := helmCLI(t, namespace).Install(context.Background(), c, values, helm.InstallOptions{ReleaseName: name, Namespace: namespace, Timeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
}
