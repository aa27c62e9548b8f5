package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// bigNamespace is where the release of many objects goes.
const bigNamespace = "planbench-big"

// bigRelease measures one release of a chart of objects objects, 1 MB of
// CRDs among them: apply, a plan with no change (and the same plan of the
// same state with the floor provider, when given: what Terraform itself
// costs for a state this size), a plan after one ConfigMap was changed
// out of band (which must show that object and no other), destroy; and
// the state's size beside the manifest's.
func bigRelease(ctx context.Context, tf terraform, objects int, kubeconfig, profile string, floor *floorBuild) error {
	const crds = 4
	if objects < crds+1 {
		return fmt.Errorf("-objects: %d is fewer than the %d CRDs and one ConfigMap", objects, crds)
	}
	srv, err := bigChartServer(objects, crds)
	if err != nil {
		return err
	}
	defer srv.Close()
	tf.srvs = []*testrepo.IndexServer{srv}
	if err := os.MkdirAll(tf.dir, 0o750); err != nil {
		return err
	}
	config := fmt.Sprintf(`terraform {
  required_providers {
    helmrelease = { source = "helmrelease/helmrelease" }
  }
}

provider "helmrelease" {
  kubernetes = { config_path = %q }
  cache_dir  = %q
}

variable "message" {
  type    = string
  default = "hello"
}

resource "helmrelease_release" "big" {
  name            = "big"
  namespace       = %q
  chart           = { repository = %q, name = "big", version = "1.0.0" }
  values          = { message = var.message }
  install         = { create_namespace = true }
  drift_detection = { mode = "enabled" }
  timeout         = "10m"
}
`, kubeconfig, filepath.Join(tf.dir, "cache"), bigNamespace, srv.URL)
	if err := os.WriteFile(filepath.Join(tf.dir, "main.tf"), []byte(config), 0o600); err != nil {
		return err
	}
	profileDir := func(step string) string {
		if profile == "" {
			return ""
		}
		dir, err := filepath.Abs(filepath.Join(profile, fmt.Sprintf("objects%d-%s", objects, step)))
		if err != nil || os.MkdirAll(dir, 0o750) != nil {
			return ""
		}
		return dir
	}

	fmt.Printf("one release of %d objects; %d CPUs; wall clock, CPU time of terraform and the provider together, the provider's peak RSS (VmHWM) and its anonymous part (RssAnon), API requests of the run net of the cluster's idle rate\n\n", objects, runtime.NumCPU())
	fmt.Printf("%-5s %-22s %10s %10s %10s %10s %10s %12s\n", "N", "run", "wall", "CPU", "RSS MB", "anon MB", "indexes", "API req")
	before, err := tf.api.byRequest()
	if err != nil {
		return err
	}
	install := tf
	install.profileDir = profileDir("install")
	m, err := install.run([]string{"apply", "-auto-approve", "-input=false"}, 0)
	if err != nil {
		return fmt.Errorf("installing: %w", err)
	}
	m.row(1, "apply (install)")
	after, err := tf.api.byRequest()
	if err != nil {
		return err
	}
	applyRequests := requestsBetween(before, after)
	t := tf
	t.profileDir = profileDir("nochange")
	if m, err = t.run([]string{"plan", "-input=false", "-detailed-exitcode"}, 0); err != nil {
		return fmt.Errorf("planning with no change: %w", err)
	}
	m.row(1, "plan, no change")
	if floor != nil {
		f := t
		f.rc, f.provider, f.profileDir = floor.rc, floor.binary, ""
		if m, err = f.run([]string{"plan", "-input=false", "-detailed-exitcode"}, 0); err != nil {
			return fmt.Errorf("the floor provider's plan: %w", err)
		}
		m.row(1, "plan, schema floor")
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	edited := fmt.Sprintf("big-%d", (objects-crds)/2)
	if _, err := cs.CoreV1().ConfigMaps(bigNamespace).Patch(ctx, edited, types.MergePatchType, []byte(`{"data":{"message":"changed by hand"}}`), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("changing %s out of band: %w", edited, err)
	}
	t.profileDir = profileDir("drift")
	if m, err = t.run([]string{"plan", "-input=false", "-detailed-exitcode", "-out=drift.tfplan"}, 2); err != nil {
		return fmt.Errorf("planning after a change out of band: %w", err)
	}
	m.row(1, "plan, one object drifted")
	changed, err := changedResources(ctx, tf, "drift.tfplan")
	if err != nil {
		return err
	}

	state, err := os.Stat(filepath.Join(tf.dir, "terraform.tfstate"))
	if err != nil {
		return err
	}
	c2, err := helm.NewClient(helm.ClientOptions{Getter: kube.NewGetter(cfg, bigNamespace, ""), StorageNamespace: bigNamespace})
	if err != nil {
		return err
	}
	rel, err := c2.LastRelease("big")
	if err != nil {
		return fmt.Errorf("reading the release: %w", err)
	}
	if rel == nil {
		return errors.New("the release is not in storage")
	}
	// Every object changed: the chart puts the message in each ConfigMap.
	requests := func(args []string, step, name string) (string, error) {
		before, err := tf.api.byRequest()
		if err != nil {
			return "", err
		}
		t.profileDir = profileDir(step)
		m, err := t.run(args, 0)
		if err != nil {
			return "", err
		}
		m.row(1, name)
		after, err := tf.api.byRequest()
		if err != nil {
			return "", err
		}
		return requestsBetween(before, after), nil
	}
	upgradeRequests, err := requests([]string{"apply", "-auto-approve", "-input=false", "-var", "message=changed"}, "upgrade", "apply, every object changed")
	if err != nil {
		return fmt.Errorf("applying a change of every object: %w", err)
	}
	destroyRequests, err := requests([]string{"destroy", "-auto-approve", "-input=false", "-var", "message=changed"}, "destroy", "destroy")
	if err != nil {
		return fmt.Errorf("destroying: %w", err)
	}
	fmt.Printf("\nthe drift plan changes %d of the release's objects: %v\n", len(changed), changed)
	fmt.Printf("state %.2f MB; the release's manifest %.2f MB\n", float64(state.Size())/(1<<20), float64(len(rel.Manifest))/(1<<20))
	fmt.Printf("API requests by verb and resource:\n  install: %s\n  every object changed: %s\n  destroy: %s\n", applyRequests, upgradeRequests, destroyRequests)
	if len(changed) != 1 || changed[0] != "v1/ConfigMap/"+bigNamespace+"/"+edited {
		return fmt.Errorf("the drift plan changes %v, want just the ConfigMap %s", changed, edited)
	}
	return nil
}

// requestsBetween lists the request counts that grew by 10 or more, most
// first.
func requestsBetween(before, after map[string]float64) string {
	type count struct {
		key string
		n   float64
	}
	var counts []count
	for k, v := range after {
		if d := v - before[k]; d >= 10 {
			counts = append(counts, count{k, d})
		}
	}
	sort.Slice(counts, func(i, j int) bool { return counts[i].n > counts[j].n })
	var parts []string
	for _, c := range counts {
		parts = append(parts, fmt.Sprintf("%s %.0f", c.key, c.n))
	}
	return strings.Join(parts, ", ")
}

// changedResources lists the keys of resources whose planned value differs
// from the refreshed one in a saved plan.
func changedResources(ctx context.Context, tf terraform, plan string) ([]string, error) {
	cmd := exec.CommandContext(ctx, "terraform", "show", "-json", plan)
	cmd.Dir = tf.dir
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+tf.rc, "CHECKPOINT_DISABLE=1")
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("terraform show -json: %w", err)
	}
	var p struct {
		ResourceChanges []struct {
			Change struct {
				Before, After struct {
					Resources map[string]*string `json:"resources"`
				}
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal(out, &p); err != nil {
		return nil, fmt.Errorf("reading the plan: %w", err)
	}
	var changed []string
	for _, rc := range p.ResourceChanges {
		for k, after := range rc.Change.After.Resources {
			before := rc.Change.Before.Resources[k]
			if before == nil || after == nil || *before != *after {
				changed = append(changed, k)
			}
		}
		for k := range rc.Change.Before.Resources {
			if _, ok := rc.Change.After.Resources[k]; !ok {
				changed = append(changed, k)
			}
		}
	}
	return changed, nil
}
