package provider

import (
	"context"
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/postrender"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// TestAccRelease_lifecycle: create, no-op plan, a values change planned as
// the one object it changes, a chart version change, a post-renderer
// change, destroy.
func TestAccRelease_lifecycle(t *testing.T) {
	t.Parallel() // namespaced objects of its own namespace only; no environment of its own
	testLifecycle(t)
}

// TestAccRelease_lifecycleOpenTofu: the same on OpenTofu.
func TestAccRelease_lifecycleOpenTofu(t *testing.T) {
	if onOpenTofu(t) {
		return
	}
	testLifecycle(t)
}

// testLifecycle runs the lifecycle test on the Terraform (or OpenTofu)
// under test.
func testLifecycle(t *testing.T) {
	ns := testNamespace(t)
	repo := testrepo.NewHTTP(t)
	repo.Add(t, testrepo.LoadChart(t, webChartDir(t), "1.0.0"), nil)
	repo.Add(t, testrepo.LoadChart(t, webChartDir(t), "1.1.0"), nil)
	config := func(version, message, postRenderers string) string {
		return providerConfig() + fmt.Sprintf(`
resource "helmrelease_release" "r" {
  name      = "web"
  namespace = %q
  chart = {
    repository = %q
    name       = "web"
    version    = %q
    username   = %q
    password   = %q
  }
  values  = { message = %q, replicas = 2 }
  install = { create_namespace = true }
  %s
}
`, ns, repo.URL, version, testrepo.Username, testrepo.Password, message, postRenderers)
	}
	configMap := ns + "/web-config"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{
				// One version named: the plan of the create shows it.
				Config: config("1.0.0", "one", ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionCreate),
					plancheck.ExpectKnownValue(rel, tfjsonpath.New("chart_version"), knownvalue.StringExact("1.0.0")),
					plancheck.ExpectKnownValue(rel, tfjsonpath.New("resources").AtMapKey("v1/ConfigMap/"+configMap), objectField("one", "data", "message")),
					plancheck.ExpectKnownValue(rel, tfjsonpath.New("resources").AtMapKey("apps/v1/Deployment/"+ns+"/web"), objectField(2, "spec", "replicas")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("id"), knownvalue.StringExact(ns+"/web")),
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("release_name"), knownvalue.StringExact("web")),
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("app_version"), knownvalue.StringExact("2.0.0")),
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("ready"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("reason"), knownvalue.StringExact("InstallSucceeded")),
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("history"), knownvalue.ListSizeExact(1)),
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("resources"), knownvalue.MapSizeExact(3)),
				},
				Check: func(*terraform.State) error {
					if got := configMapMessage(t, ns); got != "one" {
						return fmt.Errorf("message in the cluster %q", got)
					}
					return nil
				},
			},
			{
				Config: config("1.0.0", "one", ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
			},
			{
				Config: config("1.0.0", "two", ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionUpdate),
					expectChangedObjects("v1/ConfigMap/" + configMap),
					plancheck.ExpectKnownValue(rel, tfjsonpath.New("resources").AtMapKey("v1/ConfigMap/"+configMap), objectField("two", "data", "message")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("reason"), knownvalue.StringExact("UpgradeSucceeded")),
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("history"), knownvalue.ListSizeExact(2)),
				},
				Check: func(*terraform.State) error {
					if got := configMapMessage(t, ns); got != "two" {
						return fmt.Errorf("message in the cluster %q", got)
					}
					return nil
				},
			},
			{
				// A range edited in: no refresh pinned it, so the upgrade
				// plans its chart as known after apply.
				Config: config("1.1.x", "two", ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(rel, tfjsonpath.New("chart_version")),
					plancheck.ExpectUnknownValue(rel, tfjsonpath.New("resources")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("last_applied_revision"), knownvalue.StringExact("1.1.0")),
				},
			},
			{
				Config: config("1.1.x", "two", `post_renderers = [{ kustomize = { patches = [{
    target = { kind = "ConfigMap" }
    patch  = jsonencode([{ op = "add", path = "/metadata/labels", value = { tier = "web" } }])
  }] } }]`),
				// The refresh pinned the range: the plan shows it all.
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(rel, tfjsonpath.New("chart_version"), knownvalue.StringExact("1.1.0")),
					expectChangedObjects("v1/ConfigMap/" + configMap),
					plancheck.ExpectKnownValue(rel, tfjsonpath.New("resources").AtMapKey("v1/ConfigMap/"+configMap), all(
						objectField("web", "metadata", "labels", "tier"),
						objectField("web", "metadata", "labels", postrender.OriginNameLabel),
					)),
				}},
			},
		},
	})
}

// TestAccRelease_drift: objects scaled, edited and deleted in the cluster
// show in the plan as exactly those changes, apply corrects them without a
// new revision, and the next plan is empty; ignore rules, the exclusion
// label and warn mode are respected.
func TestAccRelease_drift(t *testing.T) {
	t.Parallel() // namespaced objects of its own namespace only; no environment of its own
	ns := testNamespace(t)
	config := func(drift string) string {
		return providerConfig() + fmt.Sprintf(`
resource "helmrelease_release" "r" {
  name            = "web"
  namespace       = %q
  chart           = { name = %q }
  values          = { replicas = 2, password = "drift-s3cret" }
  install         = { create_namespace = true }
  drift_detection = %s
}
`, ns, webChartDir(t), drift)
	}
	deployment, configMap, secret := "apps/v1/Deployment/"+ns+"/web", "v1/ConfigMap/"+ns+"/web-config", "v1/Secret/"+ns+"/web-secret"
	ctx := context.Background()
	cs := func() kubernetes.Interface { return testClient(t) }
	scale := func(replicas int32) func() {
		return func() {
			s, err := cs().AppsV1().Deployments(ns).GetScale(ctx, "web", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			s.Spec.Replicas = replicas
			if _, err := cs().AppsV1().Deployments(ns).UpdateScale(ctx, "web", s, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	editConfigMap := func(labels map[string]string) {
		cm, err := cs().CoreV1().ConfigMaps(ns).Get(ctx, "web-config", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cm.Data["message"] = "edited"
		for k, v := range labels {
			cm.Labels[k] = v
		}
		if _, err := cs().CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	replicas := func(want int32) func(*terraform.State) error {
		return func(*terraform.State) error {
			d, err := cs().AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if *d.Spec.Replicas != want {
				return fmt.Errorf("deployment has %d replicas, want %d", *d.Spec.Replicas, want)
			}
			return nil
		}
	}
	enabled := `{ mode = "enabled" }`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{Config: config(enabled)},
			{
				PreConfig: func() {
					scale(5)()
					editConfigMap(nil)
					if err := cs().CoreV1().Secrets(ns).Delete(ctx, "web-secret", metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config: config(enabled),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionUpdate),
					expectChangedObjects(deployment, configMap, secret),
					plancheck.ExpectKnownValue(rel, tfjsonpath.New("resources").AtMapKey(deployment), objectField(2, "spec", "replicas")),
					plancheck.ExpectKnownValue(rel, tfjsonpath.New("resources").AtMapKey(configMap), objectField("hello", "data", "message")),
					plancheck.ExpectKnownValue(rel, tfjsonpath.New("resources").AtMapKey(secret), notContaining("drift-s3cret", base64.StdEncoding.EncodeToString([]byte("drift-s3cret")))),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					// Corrected without a new Helm revision.
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("history"), knownvalue.ListSizeExact(1)),
				},
				Check: resource.ComposeTestCheckFunc(replicas(2), func(*terraform.State) error {
					if got := configMapMessage(t, ns); got != "hello" {
						return fmt.Errorf("message %q after correction", got)
					}
					_, err := cs().CoreV1().Secrets(ns).Get(ctx, "web-secret", metav1.GetOptions{})
					return err
				}),
			},
			{
				Config:           config(enabled),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				// An ignore rule for the replicas: scaling is not drift.
				Config: config(`{ mode = "enabled", ignore = [{ paths = ["/spec/replicas"], target = { kind = "Deployment" } }] }`),
			},
			{
				PreConfig:        scale(7),
				Config:           config(`{ mode = "enabled", ignore = [{ paths = ["/spec/replicas"], target = { kind = "Deployment" } }] }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check:            replicas(7),
			},
			{
				// An object labelled driftDetection: disabled is left out.
				PreConfig:        func() { editConfigMap(map[string]string{reconcile.DriftExclusionKey: "disabled"}) },
				Config:           config(`{ mode = "enabled", ignore = [{ paths = ["/spec/replicas"], target = { kind = "Deployment" } }] }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{Config: config(`{ mode = "warn" }`)},
			{
				// Warn mode: reported, not planned, not corrected.
				PreConfig: func() {
					if err := cs().CoreV1().Secrets(ns).Delete(ctx, "web-secret", metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config:           config(`{ mode = "warn" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: func(*terraform.State) error {
					if _, err := cs().CoreV1().Secrets(ns).Get(ctx, "web-secret", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
						return fmt.Errorf("secret restored in warn mode: %w", err)
					}
					return nil
				},
			},
		},
	})
}

// TestAccRelease_ociTagPushedAgain: a chart tag pushed again to an OCI
// registry with other content is a new version (+<digest>) and an upgrade.
func TestAccRelease_ociTagPushedAgain(t *testing.T) {
	t.Parallel() // namespaced objects of its own namespace only; no environment of its own
	ns := testNamespace(t)
	registry := testrepo.NewOCI(t)
	push := func(message string) {
		c := testrepo.LoadChart(t, webChartDir(t), "1.0.0")
		// Packaging writes values.yaml as loaded.
		for _, f := range c.Raw {
			if f.Name == "values.yaml" {
				f.Data = []byte(strings.Replace(string(f.Data), "message: hello", "message: "+message, 1))
			}
		}
		registry.Push(t, c, nil)
	}
	push("first push")
	config := providerConfig() + fmt.Sprintf(`
resource "helmrelease_release" "r" {
  name      = "web"
  namespace = %q
  chart = {
    repository = %q
    name       = "web"
    version    = "1.0.0"
    username   = %q
    password   = %q
    ca_file    = %q
  }
  install = { create_namespace = true }
}
`, ns, registry.URL, testrepo.Username, testrepo.Password, registry.CAFile)
	var first string
	version := func(check func(string) error) knownvalue.Check {
		return knownvalue.StringFunc(func(v string) error {
			if !regexp.MustCompile(`^1\.0\.0\+[0-9a-f]{12}$`).MatchString(v) {
				return fmt.Errorf("chart_version %s, want 1.0.0+<12 hex>", v)
			}
			return check(v)
		})
	}
	configMap := "v1/ConfigMap/" + ns + "/web-config"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("chart_version"), version(func(v string) error { first = v; return nil })),
				},
			},
			{
				PreConfig: func() { push("second push") },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(rel, tfjsonpath.New("chart_version"), version(func(v string) error {
						if v == first {
							return fmt.Errorf("chart_version unchanged (%s) after the tag was pushed again", v)
						}
						return nil
					})),
					expectChangedObjects(configMap),
				}},
				Check: func(*terraform.State) error {
					if got := configMapMessage(t, ns); got != "second push" {
						return fmt.Errorf("message %q after the upgrade", got)
					}
					return nil
				},
			},
		},
	})
}

// TestAccRelease_manyFromOneRepository: releases planned and applied in
// parallel from one repository cost one index download in all: the first
// provider process downloads it, the others revalidate the disk cache.
func TestAccRelease_manyFromOneRepository(t *testing.T) {
	t.Parallel() // namespaced objects of its own namespace only; no environment of its own
	ns := testNamespace(t)
	repo := testrepo.NewHTTP(t)
	repo.Add(t, testrepo.LoadChart(t, webChartDir(t), "1.0.0"), nil)
	config := fmt.Sprintf(`
provider "helmrelease" {
  kubernetes = { config_path = %q }
  cache_dir  = %q
}

resource "helmrelease_release" "r" {
  count     = 5
  name      = "web-${count.index}"
  namespace = %q
  chart     = { repository = %q, name = "web", username = %q, password = %q }
  values    = { message = "release ${count.index}" }
  install   = { create_namespace = true }
}
`, testKubeconfig, t.TempDir(), ns, repo.URL, testrepo.Username, testrepo.Password)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("helmrelease_release.r[4]", tfjsonpath.New("resources").AtMapKey("v1/ConfigMap/"+ns+"/web-4-config"), objectField("release 4", "data", "message")),
			},
			Check: func(*terraform.State) error {
				if n := repo.IndexDownloads.Load(); n != 1 {
					return fmt.Errorf("index downloaded %d times for 5 releases", n)
				}
				return nil
			},
		}},
	})
}
