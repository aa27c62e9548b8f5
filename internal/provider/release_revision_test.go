package provider

import (
	"context"
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

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// copyChart copies the chart directory src into a new directory, so that a
// test may edit it; it returns the copy's path.
func copyChart(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o750)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// messageIs checks the message of the release's ConfigMap in the cluster.
func messageIs(t *testing.T, ns, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if got := configMapMessage(t, ns); got != want {
			return fmt.Errorf("ConfigMap message %q, want %q", got, want)
		}
		return nil
	}
}

// releaseRevision is the newest revision of release web in Helm storage.
func releaseRevision(t *testing.T, ns string) int {
	t.Helper()
	return releaseRevisionOf(t, ns, "web")
}

// releaseRevisionOf is the newest revision of release name in Helm storage.
func releaseRevisionOf(t *testing.T, ns, name string) int {
	t.Helper()
	rel, err := helmCLI(t, ns).LastRelease(name)
	if err != nil || rel == nil {
		t.Fatalf("release %s: %v", name, err)
	}
	return rel.Version
}

// editChartFile is a plan check that edits a chart file between the plan
// and the apply of a step.
type editChartFile struct {
	t          *testing.T
	path, data string
}

func (e editChartFile) CheckPlan(context.Context, plancheck.CheckPlanRequest, *plancheck.CheckPlanResponse) {
	writeFile(e.t, e.path, e.data)
}

// TestAccRelease_localChartRevision: a local chart edited without a new
// version, its values files listed, changed or reordered, each plan an
// upgrade of what they change; a chart edited between plan and apply is
// refused.
func TestAccRelease_localChartRevision(t *testing.T) {
	t.Parallel() // namespaced objects of its own namespace only; no environment of its own
	ns := testNamespace(t)
	chart := copyChart(t, webChartDir(t))
	writeFile(t, filepath.Join(chart, "templates", "NOTES.txt"), "web says {{ .Values.message }}")
	configMapTemplate := filepath.Join(chart, "templates", "configmap.yaml")
	configMap := "v1/ConfigMap/" + ns + "/web-config"
	config := func(extra string) string {
		return providerConfig() + resourceBlockWithChart(ns, fmt.Sprintf("{\n    name = %q\n    %s\n  }", chart, extra))
	}
	var revision string
	var revisions int
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{
				Config: config(""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("chart_version"), knownvalue.StringFunc(func(v string) error {
						revision = v
						if !localRevision("1.0.0").MatchString(v) {
							return fmt.Errorf("chart_version %s, want 1.0.0+<12 hex>", v)
						}
						return nil
					})),
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("notes"), knownvalue.StringExact("web says hello")),
					statecheck.ExpectSensitiveValue(rel, tfjsonpath.New("notes")),
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("description"), knownvalue.StringExact("Installed by helmrelease")),
				},
			},
			{
				// A template edited, the version in Chart.yaml kept.
				PreConfig: func() {
					writeFile(t, configMapTemplate, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\ndata:\n  message: {{ .Values.message | quote }}\n  edited: \"yes\"\n")
				},
				Config: config(""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(rel, tfjsonpath.New("chart_version"), knownvalue.StringFunc(func(v string) error {
						if v == revision || !localRevision("1.0.0").MatchString(v) {
							return fmt.Errorf("chart_version %s after the edit (was %s)", v, revision)
						}
						return nil
					})),
					expectChangedObjects(configMap),
					plancheck.ExpectUnknownValue(rel, tfjsonpath.New("description")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("description"), knownvalue.StringExact("Upgraded by helmrelease")),
				},
				Check: func(*terraform.State) error {
					cm, err := testClient(t).CoreV1().ConfigMaps(ns).Get(context.Background(), "web-config", metav1.GetOptions{})
					if err != nil {
						return err
					}
					if cm.Data["edited"] != "yes" {
						return fmt.Errorf("the edit did not reach the cluster: %v", cm.Data)
					}
					return nil
				},
			},
			{
				// Values files listed.
				PreConfig: func() { writeFile(t, filepath.Join(chart, "values-prod.yaml"), "message: from values-prod\n") },
				Config:    config(`values_files = ["values.yaml", "values-prod.yaml"]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectChangedObjects(configMap),
				}},
				Check: messageIs(t, ns, "from values-prod"),
			},
			{
				// A values file's content changed.
				PreConfig: func() { writeFile(t, filepath.Join(chart, "values-prod.yaml"), "message: from values-prod, edited\n") },
				Config:    config(`values_files = ["values.yaml", "values-prod.yaml"]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectChangedObjects(configMap),
				}},
				Check: messageIs(t, ns, "from values-prod, edited"),
			},
			{
				// The list reordered: values.yaml now wins.
				Config: config(`values_files = ["values-prod.yaml", "values.yaml"]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectChangedObjects(configMap),
				}},
				Check: messageIs(t, ns, "hello"),
			},
			{
				// A missing file refused, then skipped when asked.
				Config:      config(`values_files = ["values.yaml", "values-eu.yaml"]`),
				ExpectError: regexp.MustCompile(`(?s)Chart values file not usable.*chart web has no values file "values-eu.yaml"`),
			},
			{
				Config: config(`values_files = ["values-prod.yaml", "values.yaml", "values-eu.yaml"]
    ignore_missing_values_files = true`),
				// The files in use are the same: the revision too.
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(rel, plancheck.ResourceActionUpdate), expectChangedObjects()}},
			},
			{
				// The chart edited between plan and apply: the refresh
				// pinned the chart's files, and the apply's own plan,
				// reading others, stops with this provider's error before
				// anything is applied (never Terraform's "inconsistent
				// final plan").
				Config: config(`values_files = ["values-prod.yaml", "values.yaml", "values-eu.yaml"]
    ignore_missing_values_files = true`),
				PreConfig: func() {
					revisions = releaseRevision(t, ns)
					writeFile(t, filepath.Join(chart, "values-prod.yaml"), "message: planned\n")
				},
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					editChartFile{t, filepath.Join(chart, "values-prod.yaml"), "message: not planned\n"},
				}},
				ExpectError: regexp.MustCompile(`(?s)Local chart changed since the plan.*its files\s+changed\s+since\s+the\s+plan\s+read\s+them`),
			},
			{
				// With ChartVersion only the version counts: an edit is not
				// a new revision (the strategy change itself is one).
				PreConfig: func() {
					if got := releaseRevision(t, ns); got != revisions {
						t.Errorf("the refused apply made revision %d (was %d)", got, revisions)
					}
				},
				Config: config(`reconcile_strategy = "ChartVersion"`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("chart_version"), knownvalue.StringExact("1.0.0")),
				},
			},
			{
				PreConfig: func() {
					writeFile(t, configMapTemplate, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-config\ndata:\n  message: {{ .Values.message | quote }}\n")
				},
				Config:             config(`reconcile_strategy = "ChartVersion"`),
				PlanOnly:           true,
				ExpectNonEmptyPlan: false,
			},
		},
	})
}

// TestAccRelease_chartPublishedAgain: a version of a Helm repository
// published again with other content, under an unchanged constraint, is
// planned as an upgrade with the new chart_digest; a new version under
// the constraint too.
func TestAccRelease_chartPublishedAgain(t *testing.T) {
	t.Parallel() // namespaced objects of its own namespace only; no environment of its own
	ns := testNamespace(t)
	repo := testrepo.NewHTTP(t)
	publish := func(version, message string) {
		c := testrepo.LoadChart(t, webChartDir(t), version)
		for _, f := range c.Raw {
			if f.Name == "values.yaml" {
				f.Data = []byte(strings.Replace(string(f.Data), "message: hello", "message: "+message, 1))
			}
		}
		repo.Add(t, c, nil)
	}
	publish("1.0.0", "first")
	config := providerConfig() + resourceBlockWithChart(ns, fmt.Sprintf(`{
    repository = %q
    name       = "web"
    version    = "1.x"
    username   = %q
    password   = %q
  }`, repo.URL, testrepo.Username, testrepo.Password))
	configMap := "v1/ConfigMap/" + ns + "/web-config"
	var digest string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("chart_version"), knownvalue.StringExact("1.0.0")),
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("chart_digest"), knownvalue.StringFunc(func(v string) error { digest = v; return nil })),
				},
				Check: messageIs(t, ns, "first"),
			},
			{
				PreConfig: func() { publish("1.0.0", "published again") },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(rel, tfjsonpath.New("chart_version"), knownvalue.StringExact("1.0.0")),
					plancheck.ExpectKnownValue(rel, tfjsonpath.New("chart_digest"), knownvalue.StringFunc(func(v string) error {
						if v == digest || v == "" {
							return fmt.Errorf("chart_digest %q, was %q", v, digest)
						}
						return nil
					})),
					expectChangedObjects(configMap),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("status").AtMapKey("history").AtSliceIndex(0).AtMapKey("chart_digest"), knownvalue.StringFunc(func(v string) error {
						if v == digest || v == "" {
							return fmt.Errorf("latest revision made from digest %q", v)
						}
						return nil
					})),
				},
				Check: messageIs(t, ns, "published again"),
			},
			{
				PreConfig: func() { publish("1.1.0", "new version") },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(rel, tfjsonpath.New("chart_version"), knownvalue.StringExact("1.1.0")),
					expectChangedObjects(configMap),
				}},
				Check: messageIs(t, ns, "new version"),
			},
		},
	})
}

// TestAccRelease_valuesFromChanged: a ConfigMap or Secret of values_from
// changed since the last apply is planned as an upgrade of what it
// changes.
func TestAccRelease_valuesFromChanged(t *testing.T) {
	t.Parallel() // namespaced objects of its own namespace only; no environment of its own
	ns := testNamespace(t)
	values := func(message, password string) {
		createValuesObjects(t, ns,
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-values"}, Data: map[string]string{"values.yaml": "message: " + message + "\n"}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web-secret-values"}, StringData: map[string]string{"password": password}},
		)
	}
	values("from a ConfigMap", "first")
	config := webConfig(t, ns, `values_from = [
    { kind = "ConfigMap", name = "web-values" },
    { kind = "Secret", name = "web-secret-values", values_key = "password", target_path = "password" },
  ]`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{Config: config, Check: messageIs(t, ns, "from a ConfigMap")},
			{
				PreConfig: func() { values("from a ConfigMap, changed", "first") },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(rel, plancheck.ResourceActionUpdate),
					expectChangedObjects("v1/ConfigMap/" + ns + "/web-config"),
				}},
				Check: messageIs(t, ns, "from a ConfigMap, changed"),
			},
			{
				PreConfig: func() { values("from a ConfigMap, changed", "second") },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectChangedObjects("v1/Secret/" + ns + "/web-secret"),
				}},
			},
		},
	})
}

// nonReproducibleChart writes a chart whose templates call functions that
// render differently every time: a password kept across upgrades with
// lookup (random on install), a timestamp by the day, a generated CA, and
// a ConfigMap of plain values. It returns its directory.
func nonReproducibleChart(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "generated")
	for name, data := range map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: generated\nversion: 0.1.0\n",
		"values.yaml": "message: hello\n",
		"templates/password.yaml": `{{- $existing := lookup "v1" "Secret" .Release.Namespace (printf "%s-password" .Release.Name) }}
apiVersion: v1
kind: Secret
metadata:
  name: {{ .Release.Name }}-password
data:
  {{- if $existing }}
  password: {{ index $existing.data "password" }}
  {{- else }}
  password: {{ randAlphaNum 24 | b64enc }}
  {{- end }}
`,
		"templates/stamp.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-stamp
data:
  day: {{ now | date "2006-01-02" | quote }}
`,
		"templates/ca.yaml": `{{- $ca := genCA "generated-ca" 365 }}
apiVersion: v1
kind: Secret
metadata:
  name: {{ .Release.Name }}-ca
type: kubernetes.io/tls
data:
  tls.crt: {{ $ca.Cert | b64enc }}
  tls.key: {{ $ca.Key | b64enc }}
`,
		"templates/config.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
data:
  message: {{ .Values.message | quote }}
`,
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o750); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, name), data)
	}
	return dir
}

// TestAccRelease_nonReproducible: a chart with random, generated and
// time-dependent values is created (no inconsistent final plan), plans
// nothing when nothing changed, and a values change plans what it changes
// plus the objects a render cannot reproduce, as known after apply; the
// lookup-kept password survives the upgrade.
func TestAccRelease_nonReproducible(t *testing.T) {
	t.Parallel() // namespaced objects of its own namespace only; no environment of its own
	ns := testNamespace(t)
	chart := nonReproducibleChart(t)
	config := func(message string) string {
		return providerConfig() + resourceBlockWithChart(ns, fmt.Sprintf("{ name = %q }", chart), fmt.Sprintf("values = { message = %q }", message))
	}
	key := func(kind, name string) string { return "v1/" + kind + "/" + ns + "/web-" + name }
	password := func() string {
		s, err := testClient(t).CoreV1().Secrets(ns).Get(context.Background(), "web-password", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return string(s.Data["password"])
	}
	var first string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             releaseGone(t, ns),
		Steps: []resource.TestStep{
			{
				Config: config("one"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					// On install lookup finds nothing: the password is random.
					expectPlannedObjects([]string{key("ConfigMap", "config")}, []string{key("Secret", "password"), key("ConfigMap", "stamp"), key("Secret", "ca")}),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					// After the apply, what was deployed.
					statecheck.ExpectKnownValue(rel, tfjsonpath.New("resources").AtMapKey(key("Secret", "ca")), knownvalue.NotNull()),
				},
				Check: func(*terraform.State) error {
					if first = password(); len(first) != 24 {
						return fmt.Errorf("password %q", first)
					}
					return nil
				},
			},
			{
				Config:   config("one"),
				PlanOnly: true,
			},
			{
				Config: config("two"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					// The kept password renders alike: not in the plan.
					expectPlannedObjects([]string{key("ConfigMap", "config")}, []string{key("ConfigMap", "stamp"), key("Secret", "ca")}),
				}},
				Check: func(*terraform.State) error {
					if got := password(); got != first {
						return fmt.Errorf("password %q after the upgrade, was %q", got, first)
					}
					return nil
				},
			},
		},
	})
}

// TestTemplate_nonReproducible: helmrelease_template names the objects a
// render cannot reproduce, through the same render path as the plan.
func TestTemplate_nonReproducible(t *testing.T) {
	t.Parallel() // no cluster; KUBECONFIG is unset for the package (TestMain)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
data "helmrelease_template" "t" {
  name  = "web"
  chart = { name = %q }
}
`, nonReproducibleChart(t)),
			ConfigStateChecks: []statecheck.StateCheck{
				// Without a cluster lookup finds nothing: the password is random.
				statecheck.ExpectKnownValue(tmpl, tfjsonpath.New("non_reproducible"), knownvalue.ListExact([]knownvalue.Check{
					knownvalue.StringExact("v1/ConfigMap/default/web-stamp"),
					knownvalue.StringExact("v1/Secret/default/web-ca"),
					knownvalue.StringExact("v1/Secret/default/web-password"),
				})),
				statecheck.ExpectKnownValue(tmpl, resourceAt("v1/ConfigMap/default/web-config"), objectField("hello", "data", "message")),
			},
		}},
	})
}
