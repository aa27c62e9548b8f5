package provider

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// nowhere checks that no plan or state shows any of secrets, in any
// attribute (write-only values are in neither), nor its base64.
type nowhere struct{ secrets []string }

func (c nowhere) find(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	for _, s := range c.secrets {
		if strings.Contains(string(b), s) {
			return fmt.Errorf("%q is there", s)
		}
	}
	return nil
}

func (c nowhere) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	if err := c.find(req.Plan); err != nil {
		resp.Error = fmt.Errorf("the plan (terraform show -json): %w", err)
	}
}

func (c nowhere) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	if err := c.find(req.State); err != nil {
		resp.Error = fmt.Errorf("the state (terraform show -json): %w", err)
	}
}

// TestAccRelease_writeOnly: sensitive_values_wo and chart.password_wo reach
// the release and the repository but never the plan, the state file or
// Terraform's trace log, not even where the chart copies them into a
// ConfigMap (refreshed the same way: the plans after each apply are
// empty); a new write-only value is planned as the upgrade of what it
// changes, and a version bump with the same value changes no object.
func TestAccRelease_writeOnly(t *testing.T) {
	if inOwnProcess(t) {
		return
	}
	terraformAtLeast(t, "1.11.0")
	ns := testNamespace(t)
	repo := testrepo.NewHTTP(t)
	repo.Add(t, testrepo.LoadChart(t, webChartDir(t), "1.0.0"), nil)
	const first, second = "wo-first-s3cret-value", "wo-second-s3cret-value"
	secrets := []string{first, second, testrepo.Password}
	for _, s := range []string{first, second} {
		secrets = append(secrets, base64.StdEncoding.EncodeToString([]byte(s)))
	}
	logFile := filepath.Join(t.TempDir(), "trace.log")
	t.Setenv("TF_LOG", "trace")
	t.Setenv("TF_ACC_LOG_PATH", logFile)
	workDir := t.TempDir()
	// The secrets come from ephemeral variables (Terraform stores them in
	// no plan), set from the environment, so that the test's own dump of
	// the configuration in the log does not hold them.
	t.Setenv("TF_VAR_repository_password", testrepo.Password)
	secret := func(value string) func() { return func() { t.Setenv("TF_VAR_password", value) } }
	// One chart version: a refresh cannot resolve a chart whose password
	// is write-only, so no pin would hold a range for the plans, which
	// would show its objects as known after apply.
	config := func(version int) string {
		return providerConfig() + `
variable "password" {
  type      = string
  ephemeral = true
}
variable "repository_password" {
  type      = string
  ephemeral = true
}
` + resourceBlockWithChart(ns, fmt.Sprintf(`{
    repository          = %q
    name                = "web"
    version             = "1.0.0"
    username            = %q
    password_wo         = var.repository_password
    password_wo_version = 1
  }`, repo.URL, testrepo.Username), fmt.Sprintf(`sensitive_values_wo = jsonencode({ password = var.password, message = "copied: ${var.password}" })
  sensitive_values_wo_version = %d`, version))
	}
	secretIs := func(want string) func(*terraform.State) error {
		return func(*terraform.State) error {
			s, err := testClient(t).CoreV1().Secrets(ns).Get(context.Background(), "web-secret", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if got := string(s.Data["password"]); got != want {
				return fmt.Errorf("the release's Secret holds %q, want %q", got, want)
			}
			return nil
		}
	}
	stateFileFree := func(*terraform.State) error {
		dirs, err := filepath.Glob(filepath.Join(workDir, "work*", "terraform.tfstate"))
		if err != nil {
			return fmt.Errorf("finding the state file: %w", err)
		}
		if len(dirs) != 1 {
			return fmt.Errorf("state files %v, want one", dirs)
		}
		b, err := os.ReadFile(dirs[0])
		if err != nil {
			return err
		}
		if !strings.Contains(string(b), `"sensitive_values_wo_version": `) {
			return fmt.Errorf("the state file has no sensitive_values_wo_version: the check would prove nothing")
		}
		return nowhere{secrets}.find(string(b))
	}
	check := nowhere{secrets}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		WorkingDir:               workDir,
		Steps: []resource.TestStep{
			{
				PreConfig:         secret(first),
				Config:            config(1),
				ConfigPlanChecks:  resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{check}},
				ConfigStateChecks: []statecheck.StateCheck{check},
				Check:             resource.ComposeTestCheckFunc(secretIs(first), stateFileFree),
			},
			{
				// A new value, the same version: seen at plan all the same.
				PreConfig: secret(second),
				Config:    config(1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					check, plancheck.ExpectResourceAction(rel, plancheck.ResourceActionUpdate),
					// The chart copies the message into its ConfigMap:
					// shown keyed, so that its change shows too.
					expectChangedObjects("v1/ConfigMap/"+ns+"/web-config", "v1/Secret/"+ns+"/web-secret"),
				}},
				ConfigStateChecks: []statecheck.StateCheck{check},
				Check:             resource.ComposeTestCheckFunc(secretIs(second), stateFileFree),
			},
			{
				// A new version, the same value: nothing to upgrade.
				Config: config(2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					check, plancheck.ExpectResourceAction(rel, plancheck.ResourceActionUpdate), expectChangedObjects(),
				}},
				Check: func(*terraform.State) error {
					if rev := releaseRevision(t, ns); rev != 2 {
						return fmt.Errorf("release at revision %d, want 2", rev)
					}
					return nil
				},
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
	for _, s := range secrets {
		if i := strings.Index(string(trace), s); i >= 0 {
			t.Errorf("the trace log shows %q: …%s…", s, trace[max(0, i-500):min(len(trace), i+100)])
		}
	}
}
