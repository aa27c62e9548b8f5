package provider

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// TestAccRelease_helmInstalledRefused: a release installed by plain Helm
// under the name is refused at plan with the import remedy, and left as it
// was.
func TestAccRelease_helmInstalledRefused(t *testing.T) {
	t.Parallel() // namespaced objects of its own namespace only; no environment of its own
	ns := testNamespace(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					helmInstall(t, ns, "web", map[string]any{"message": "helm"})
					t.Cleanup(func() { _, _ = helmCLI(t, ns).Uninstall("web", helm.UninstallOptions{Timeout: time.Minute}) })
				},
				Config:      webConfig(t, ns, `values = { message = "terraform" }`),
				ExpectError: errorText(`Error: Release already exists … release ` + ns + `/web.v1 exists and was not made by a helmrelease_release … Import the release (terraform import <address> ` + ns + `/web) to manage it with this resource, or set another release_name.`),
			},
			{
				PreConfig: func() {
					if got, rev := configMapMessage(t, ns), releaseRevision(t, ns); got != "helm" || rev != 1 {
						t.Errorf("the refused plan touched the release: message %q, revision %d", got, rev)
					}
				},
				Config:      webConfig(t, ns, `values = { message = "terraform" }`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`Release already exists`),
			},
		},
	})
}

// TestAccRelease_manualRollback: a `helm rollback` made outside Terraform
// is detected by digest, planned as an upgrade back to the configuration
// (the objects it changed), and applied.
func TestAccRelease_manualRollback(t *testing.T) {
	t.Parallel() // namespaced objects of its own namespace only; no environment of its own
	ns := testNamespace(t)
	configMap := "v1/ConfigMap/" + ns + "/web-config"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{Config: webConfig(t, ns, `values = { message = "one" }`)},
			{Config: webConfig(t, ns, `values = { message = "two" }`), Check: messageIs(t, ns, "two")},
			{
				PreConfig: func() {
					if err := helmCLI(t, ns).Rollback("web", helm.RollbackOptions{Version: 1, Timeout: time.Minute}); err != nil {
						t.Fatal(err)
					}
					if got := configMapMessage(t, ns); got != "one" {
						t.Fatalf("message %q after helm rollback", got)
					}
				},
				Config: webConfig(t, ns, `values = { message = "two" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(rel, tfjsonpath.New("status")),
					expectChangedObjects(configMap),
				}},
				Check: resource.ComposeTestCheckFunc(messageIs(t, ns, "two"), func(*terraform.State) error {
					if rev := releaseRevision(t, ns); rev != 4 {
						return fmt.Errorf("revision %d after upgrading back, want 4 (install, upgrade, rollback, upgrade)", rev)
					}
					return nil
				}),
			},
		},
	})
}

// TestAccRelease_failedUninstall: an uninstall whose pre-delete hook fails
// keeps the resource in the state, with the cause and the remedy; the next
// apply (here setting uninstall.disable_hooks, the remedy) takes back the
// release the failed uninstall left, and destroying then succeeds.
func TestAccRelease_failedUninstall(t *testing.T) {
	t.Parallel() // namespaced objects of its own namespace only; no environment of its own
	ns := testNamespace(t)
	failing := webConfig(t, ns, `values = { failDelete = true }`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{Config: failing},
			{
				Config:      failing,
				Destroy:     true,
				ExpectError: errorText(`Error: Release uninstall failed … pre-delete … The release and this resource are kept. … uninstall.disable_hooks = true`),
			},
			{
				// Still in the state: an update, not a create.
				PreConfig: func() {
					if rev := releaseRevision(t, ns); rev != 1 {
						t.Errorf("release revision %d after the failed uninstall", rev)
					}
				},
				Config: webConfig(t, ns, `values = { failDelete = true }
  uninstall = { disable_hooks = true }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionUpdate),
				}},
				// The release the failed uninstall left is taken back:
				// rolled back onto itself, deployed again.
				Check: func(*terraform.State) error {
					latest, err := helmCLI(t, ns).LastRelease("web")
					if err != nil {
						return err
					}
					if latest.Version != 2 || latest.Info.Status.String() != "deployed" {
						return fmt.Errorf("release v%d %s after the apply, want v2 deployed", latest.Version, latest.Info.Status)
					}
					return nil
				},
			},
		},
	})
}

// TestAccRelease_suspendedDestroy: destroying a suspended release leaves
// it installed, as helm-controller does.
func TestAccRelease_suspendedDestroy(t *testing.T) {
	t.Parallel() // namespaced objects of its own namespace only; no environment of its own
	ns := testNamespace(t)
	testClient(t) // skips without the test cluster
	t.Cleanup(func() { _, _ = helmCLI(t, ns).Uninstall("web", helm.UninstallOptions{Timeout: time.Minute}) })
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			rel, err := helmCLI(t, ns).LastRelease("web")
			if err != nil {
				return fmt.Errorf("reading the release after destroy: %w", err)
			}
			if rel == nil {
				return errors.New("suspended release gone after destroy")
			}
			if got := configMapMessage(t, ns); got != "kept" {
				return fmt.Errorf("message %q after destroy", got)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{Config: webConfig(t, ns, `values = { message = "kept" }`)},
			{Config: webConfig(t, ns, `values = { message = "kept" }`+"\n  suspend = true")},
		},
	})
}

// TestAccRelease_driftSelectors: ignore rules select objects by label and
// annotation selectors (and leave the others alone), and objects annotated
// with the provider's or Flux's driftDetection key are left out.
func TestAccRelease_driftSelectors(t *testing.T) {
	t.Parallel() // namespaced objects of its own namespace only; no environment of its own
	ns := testNamespace(t)
	config := webConfig(t, ns, `values = { password = "s3cret" }
  common_metadata = { labels = { team = "web" }, annotations = { tier = "frontend" } }
  drift_detection = {
    mode = "enabled"
    ignore = [
      { paths = ["/data/message"], target = { kind = "ConfigMap", label_selector = "team=web" } },
      { paths = ["/spec/replicas"], target = { kind = "Deployment", annotation_selector = "tier=frontend" } },
      # Selecting nothing: the Secret's drift must show.
      { paths = ["/data"], target = { kind = "Secret", label_selector = "team=other" } },
      { paths = ["/data"], target = { kind = "Secret", annotation_selector = "tier=backend" } },
    ]
  }`)
	ctx := context.Background()
	patch := func(kind, name, body string) {
		t.Helper()
		cs := testClient(t)
		var err error
		switch kind {
		case "ConfigMap":
			_, err = cs.CoreV1().ConfigMaps(ns).Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{})
		case "Secret":
			_, err = cs.CoreV1().Secrets(ns).Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{})
		case "Deployment":
			_, err = cs.AppsV1().Deployments(ns).Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	secret := "v1/Secret/" + ns + "/web-secret"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() {
					patch("ConfigMap", "web-config", `{"data":{"message":"edited"}}`)
					patch("Deployment", "web", `{"spec":{"replicas":4}}`)
					patch("Secret", "web-secret", `{"stringData":{"password":"edited"}}`)
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectChangedObjects(secret),
				}},
			},
			{
				// Excluded by Flux's annotation: another image is no drift.
				PreConfig: func() {
					patch("Deployment", "web", `{"metadata":{"annotations":{"`+reconcile.FluxDriftExclusionKey+`":"disabled"}},"spec":{"template":{"spec":{"containers":[{"name":"web","image":"busybox:1.37"}]}}}}`)
				},
				Config:           config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				// Excluded by the provider's annotation.
				PreConfig: func() {
					patch("Secret", "web-secret", `{"metadata":{"annotations":{"`+reconcile.DriftExclusionKey+`":"disabled"}},"stringData":{"password":"edited again"}}`)
				},
				Config:           config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

// TestAccRelease_kubeConfigSecret: with kube_config.secret_ref, the release
// is made with the kubeconfig of the Secret, here one that impersonates a
// service account allowed less than the provider's identity: what it may
// not do fails naming it, and succeeds once it may.
func TestAccRelease_kubeConfigSecret(t *testing.T) {
	t.Parallel() // namespaced objects of its own namespace only; no environment of its own
	ns := testNamespace(t)
	ctx := context.Background()
	user := "system:serviceaccount:" + ns + ":deployer"
	role := func(resources ...string) {
		t.Helper()
		cs := testClient(t)
		r := &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: ns},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"", "apps", "batch"}, Resources: resources, Verbs: []string{"*"}}},
		}
		if _, err := cs.RbacV1().Roles(ns).Update(ctx, r, metav1.UpdateOptions{}); apierrors.IsNotFound(err) {
			_, err = cs.RbacV1().Roles(ns).Create(ctx, r, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
		} else if err != nil {
			t.Fatal(err)
		}
	}
	setup := func() {
		cs := testClient(t)
		createValuesObjects(t, ns)
		role("secrets", "deployments", "replicasets", "jobs", "pods", "events")
		_, err := cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "deployer", Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "deployer"},
			Subjects:   []rbacv1.Subject{{Kind: "User", Name: user}},
		}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		// The tests' kubeconfig, impersonating the deployer.
		cfg, err := clientcmd.LoadFromFile(testKubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		if err := clientcmdapi.FlattenConfig(cfg); err != nil {
			t.Fatal(err)
		}
		cfg.AuthInfos[cfg.Contexts[cfg.CurrentContext].AuthInfo].Impersonate = user
		data, err := clientcmd.Write(*cfg)
		if err != nil {
			t.Fatal(err)
		}
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "workload-kubeconfig", Namespace: ns}, Data: map[string][]byte{"value": data}}
		if _, err := cs.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	config := providerConfig() + fmt.Sprintf(`
resource "helmrelease_release" "r" {
  name        = "web"
  namespace   = %q
  chart       = { name = %q }
  values      = { message = "through the Secret's kubeconfig" }
  kube_config = { secret_ref = { name = "workload-kubeconfig", key = "value" } }
}
`, ns, webChartDir(t))
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{
				// The deployer may not create ConfigMaps; the provider's
				// identity may.
				PreConfig:   setup,
				Config:      config,
				ExpectError: regexp.MustCompile(`(?s)configmaps "web-config" is forbidden: User\s+"` + regexp.QuoteMeta(user) + `"\s+cannot`),
			},
			{
				PreConfig: func() { role("secrets", "deployments", "replicasets", "jobs", "pods", "events", "configmaps") },
				Config:    config,
				Check:     messageIs(t, ns, "through the Secret's kubeconfig"),
			},
		},
	})
}
