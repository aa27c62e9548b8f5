package provider

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAccRelease_unknowns: values known only after apply (from another
// resource) make the planned objects unknown, as does a provider whose
// cluster settings come from another resource; both apply.
func TestAccRelease_unknowns(t *testing.T) {
	t.Parallel() // namespaced objects of its own namespace only; no environment of its own
	ns := testNamespace(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{
				Config: fmt.Sprintf(`
resource "terraform_data" "cluster" {
  input = %q
}

resource "terraform_data" "message" {
  input = "from another resource"
}

provider "helmrelease" {
  kubernetes = { config_path = terraform_data.cluster.output }
}

resource "helmrelease_release" "r" {
  name      = "web"
  namespace = %q
  chart     = { name = %q }
  values    = { message = terraform_data.message.output }
  install   = { create_namespace = true }
}
`, testKubeconfig, ns, webChartDir(t)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue(rel, tfjsonpath.New("resources")),
					plancheck.ExpectUnknownValue(rel, tfjsonpath.New("status")),
					// A local chart's revision: its version and content digest.
					plancheck.ExpectKnownValue(rel, tfjsonpath.New("chart_version"), knownvalue.StringRegexp(localRevision("1.0.0"))),
					plancheck.ExpectKnownValue(rel, tfjsonpath.New("release_name"), knownvalue.StringExact("web")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("resources").AtMapKey("v1/ConfigMap/"+ns+"/web-config"), objectField("from another resource", "data", "message")),
				},
			},
		},
	})
}

// TestAccRelease_secrets: sensitive_values and the Secret data they make
// appear neither in the plan's computed attributes nor in Terraform's and
// the provider's trace log.
func TestAccRelease_secrets(t *testing.T) {
	if inOwnProcess(t) {
		return
	}
	ns := testNamespace(t)
	const secret = "tf-log-s3cret-value"
	encoded := base64.StdEncoding.EncodeToString([]byte(secret))
	logFile := filepath.Join(t.TempDir(), "trace.log")
	t.Setenv("TF_LOG", "trace")
	t.Setenv("TF_ACC_LOG_PATH", logFile)
	// From the environment, so that the test's own dump of the
	// configuration in the log does not hold it.
	t.Setenv("TF_VAR_password", secret)
	createValuesObjects(t, ns, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web-values"}, StringData: map[string]string{"values.yaml": "extra: " + secret + "-from-secret\n"}})
	config := func(message string) string {
		return `
variable "password" {
  type      = string
  sensitive = true
}
` + webConfig(t, ns, fmt.Sprintf(`values           = { message = %q }
  sensitive_values = yamlencode({ password = var.password })
  values_from      = [{ kind = "Secret", name = "web-values" }]`, message))
	}
	sum := sha256.Sum256([]byte(secret))
	plainDigest := hex.EncodeToString(sum[:])
	noSecret := plancheck.PlanCheck(secretFreePlan{secrets: []string{secret, encoded, plainDigest}})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{
				Config:           config("one"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{noSecret}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectSensitiveValue(rel, tfjsonpath.New("sensitive_values")),
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("resources").AtMapKey("v1/Secret/"+ns+"/web-secret"), all(
						// Keyed: the plain digest of a guess finds nothing.
						notContaining(secret, encoded, plainDigest),
						knownvalue.StringRegexp(regexp.MustCompile(`password: '?\(sensitive value\) hmac-sha256:[0-9a-f]{64}`)),
					)),
				},
				Check: func(*terraform.State) error {
					s, err := testClient(t).CoreV1().Secrets(ns).Get(context.Background(), "web-secret", metav1.GetOptions{})
					if err != nil {
						return err
					}
					if string(s.Data["password"]) != secret {
						return fmt.Errorf("the release's Secret holds %q", s.Data["password"])
					}
					return nil
				},
			},
			{
				Config:           config("two"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{noSecret, plancheck.ExpectResourceAction(rel, plancheck.ResourceActionUpdate)}},
			},
		},
	})
	trace, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(trace), "running action") {
		t.Fatalf("the trace log has no line of the provider's (%d bytes): the check would prove nothing", len(trace))
	}
	for _, s := range []string{secret, encoded} {
		if i := strings.Index(string(trace), s); i >= 0 {
			t.Errorf("the trace log shows %q: …%s…", s, trace[max(0, i-2000):min(len(trace), i+100)])
		}
	}
}

// secretFreePlan checks that nothing of the plan but the sensitive_values
// attribute itself (which Terraform keeps, marked sensitive) holds the
// secrets.
type secretFreePlan struct{ secrets []string }

func (c secretFreePlan) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		for _, v := range []any{rc.Change.Before, rc.Change.After} {
			m, ok := v.(map[string]any)
			if !ok {
				continue
			}
			shown := map[string]any{}
			for k, v := range m {
				if k != "sensitive_values" {
					shown[k] = v
				}
			}
			b, _ := json.Marshal(shown)
			for _, s := range c.secrets {
				if strings.Contains(string(b), s) {
					resp.Error = fmt.Errorf("%s: the plan shows %q outside sensitive_values", rc.Address, s)
					return
				}
			}
		}
	}
}

// TestAccRelease_suspend: while suspended, a configuration change is
// recorded with a warning and no Helm action; resumed, it rolls out.
func TestAccRelease_suspend(t *testing.T) {
	t.Parallel() // namespaced objects of its own namespace only; no environment of its own
	ns := testNamespace(t)
	message := func(want string) func(*terraform.State) error {
		return func(*terraform.State) error {
			if got := configMapMessage(t, ns); got != want {
				return fmt.Errorf("message in the cluster %q, want %q", got, want)
			}
			return nil
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{Config: webConfig(t, ns, `values = { message = "one" }`)},
			{
				Config: webConfig(t, ns, `values = { message = "two" }`+"\n  suspend = true"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionUpdate),
					expectChangedObjects(),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("history"), knownvalue.ListSizeExact(1)),
				},
				Check: message("one"),
			},
			{
				Config: webConfig(t, ns, `values = { message = "two" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectChangedObjects("v1/ConfigMap/" + ns + "/web-config"),
				}},
				Check: message("two"),
			},
		},
	})
}
