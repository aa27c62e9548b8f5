package provider

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const rel = "helmrelease_release.r"

// webChartDir is the release chart of the acceptance tests.
func webChartDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("testdata/charts/web")
	if err != nil {
		t.Fatal(err)
	}
	return dir
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
}

func expectChangedObjects(addr string, keys ...string) plancheck.PlanCheck {
	return changedObjects{addr: addr, want: keys}
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
		var changed []string
		for k, v := range after {
			if before[k] != v {
				changed = append(changed, k)
			}
		}
		for k := range before {
			if _, ok := after[k]; !ok {
				changed = append(changed, k)
			}
		}
		sort.Strings(changed)
		want := slices.Clone(c.want)
		sort.Strings(want)
		if !slices.Equal(changed, want) {
			resp.Error = fmt.Errorf("%s: plan changes objects %v, want %v", c.addr, changed, want)
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
// the release.
func releaseGone(t *testing.T, namespace, name string) func(*terraform.State) error {
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

// configMapData reads a ConfigMap key from the cluster.
func configMapData(t *testing.T, namespace, name, key string) string {
	t.Helper()
	cm, err := testClient(t).CoreV1().ConfigMaps(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("ConfigMap %s/%s: %v", namespace, name, err)
	}
	return cm.Data[key]
}
