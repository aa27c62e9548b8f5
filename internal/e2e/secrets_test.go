//go:build unix

package e2e

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// TestSecretsNeverShown walks every input that can carry a secret through
// every output a user, a pull request or a log collector sees: plan and
// apply output, `terraform show -json` of the plan and of the state (where
// only what Terraform itself marks sensitive may hold it), the trace log
// (TF_LOG=trace, Terraform's and the provider's), error messages (a plan
// the API server refuses while quoting the values) and the release
// description.
func TestSecretsNeverShown(t *testing.T) {
	parallelMatrix(t)
	ns := newNamespace(t)
	marker := func(name string) string {
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		// "!" makes it an invalid label value: the API server quotes it.
		return "S3CRET." + name + "." + hex.EncodeToString(b) + "!"
	}
	// A password of several lines with quotes, a backslash and <>&: the
	// API server quotes it escaped (%q), Terraform's JSON escapes <>&.
	multiLine := func(name string) string {
		b := make([]byte, 72)
		_, _ = rand.Read(b)
		enc := base64.StdEncoding.EncodeToString(b)
		return marker(name) + `"q\<&>` + "\n" + enc[:48] + "\n" + enc[48:] + "\n"
	}
	inputs := map[string]string{
		"sensitive_values":        multiLine("sensitive-values"),
		"values_from Secret":      marker("values-from"),
		"chart password":          marker("repo-password"),
		"registry password":       marker("registry-password"),
		"kubernetes token":        serviceAccountToken(t, ns),
		"sensitive_values (YAML)": marker("nested"),
	}

	repo := newRepository(t)
	repo.Password = inputs["chart password"]
	oci := testrepo.NewOCIWithPassword(t, inputs["registry password"])
	oci.Push(t, testrepo.LoadChart(t, testdataPath("charts", "svc"), "1.0.0"), nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := clientset.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "svc-values"},
		StringData: map[string]string{"values.yaml": "apiKey: " + inputs["values_from Secret"] + "\n"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	w := newWorkspace(t, "secrets")
	logPath := filepath.Join(w.dir, "trace.log")
	w.env = []string{
		"TF_LOG=trace", "TF_LOG_PATH=" + logPath,
		"TF_VAR_sensitive=" + inputs["sensitive_values"],
		"TF_VAR_nested=" + inputs["sensitive_values (YAML)"],
		"TF_VAR_repo_password=" + inputs["chart password"],
		"TF_VAR_registry_password=" + inputs["registry password"],
		"TF_VAR_token=" + inputs["kubernetes token"],
	}
	config := func(leak bool) string {
		return fmt.Sprintf(`
terraform {
  required_providers {
    helmrelease = { source = "helmrelease/helmrelease" }
  }
}

variable "sensitive" {
  type      = string
  sensitive = true
}
variable "nested" {
  type      = string
  sensitive = true
}
variable "repo_password" {
  type      = string
  sensitive = true
}
variable "registry_password" {
  type      = string
  sensitive = true
}
variable "token" {
  type      = string
  sensitive = true
}

provider "helmrelease" {
  kubernetes = {
    host                   = %[1]q
    token                  = var.token
    cluster_ca_certificate = %[2]q
  }
  registries = [{ url = %[3]q, username = %[4]q, password = var.registry_password }]
  cache_dir  = %[5]q
}

resource "helmrelease_release" "http" {
  name      = "http"
  namespace = %[6]q
  chart = {
    name       = "svc"
    version    = "1.0.0"
    repository = %[7]q
    username   = %[4]q
    password   = var.repo_password
  }
  values           = { message = "hello", leak = %[8]t, copySecrets = true }
  sensitive_values = yamlencode({ password = var.sensitive, nested = { list = [var.nested] } })
  values_from      = [{ kind = "Secret", name = "svc-values" }]
}

resource "helmrelease_release" "oci" {
  name      = "oci"
  namespace = %[6]q
  chart = {
    name       = "svc"
    version    = "1.0.0"
    repository = %[9]q
    ca_file    = %[10]q
  }
  values           = { copySecrets = true }
  sensitive_values = yamlencode({ password = var.sensitive })
}
`, cluster.Host, caPEM(t), strings.TrimSuffix(oci.URL, "/charts"), testrepo.Username, t.TempDir(), ns, repo.URL, leak, oci.URL, oci.CAFile)
	}

	// Every output, by name.
	outputs := map[string]string{}
	record := func(name string, res result) {
		outputs[name] = res.stdout + "\n" + res.stderr
	}
	w.write(config(false))
	record("plan output", w.must(0, "plan", "-input=false", "-no-color", "-out=tfplan"))
	outputs["show -json of the plan"] = withoutSensitive(t, w.must(0, "show", "-json", "tfplan").stdout)
	record("apply output", w.must(0, "apply", "-input=false", "-no-color", "tfplan"))
	state := w.must(0, "show", "-json").stdout
	outputs["show -json of the state"] = withoutSensitive(t, state)
	// The secrets the chart copies into its ConfigMap show keyed.
	if !regexp.MustCompile(`password-copy: '?\(sensitive value\) hmac-sha256:[0-9a-f]{64}`).MatchString(state) ||
		!regexp.MustCompile(`connection: '?postgres://app:\(sensitive value\) hmac-sha256:[0-9a-f]{64}@db`).MatchString(state) {
		t.Errorf("the state's resources do not show the copied secrets as keyed hashes:\n%s", state)
	}
	if !strings.Contains(state, `"config_digest":"hmac-sha256:`) || !strings.Contains(state, `"last_attempted_config_digest":"hmac-sha256:`) {
		t.Errorf("the status records no keyed digests of the values:\n%s", state)
	}
	// The digests of values and releases anyone could compute from a
	// guess: what a status recorded before keyed digests.
	var unkeyed []string
	for _, name := range []string{"http", "oci"} {
		for _, rel := range newStorage(t, ns).history(name) {
			unkeyed = append(unkeyed, reconcile.PlainDigests(rel)...)
		}
	}

	// The API server refuses the values in labels, quoting them.
	w.write(config(true))
	res := w.must(1, "plan", "-input=false", "-no-color")
	if !has(res.stderr, "Invalid value") || !has(res.stderr, "(sensitive value)") {
		t.Errorf("the refused plan does not show the API server's error with the values redacted:\n%s", res)
	}
	record("error messages", res)
	res = w.must(1, "apply", "-input=false", "-no-color", "-auto-approve", "-refresh=false")
	record("error messages of apply", res)

	w.write(config(false))
	w.planIsEmpty()
	outputs["release description and status"] = withoutSensitive(t, w.must(0, "show", "-json").stdout)
	record("destroy output", w.must(0, "destroy", "-input=false", "-no-color", "-auto-approve"))
	trace, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(trace), "helmrelease") || len(trace) < 10000 {
		t.Fatalf("the trace log holds no provider lines (%d bytes)", len(trace))
	}
	outputs["TF_LOG=trace"] = string(trace)

	for output, text := range outputs {
		for _, d := range unkeyed {
			if strings.Contains(text, strings.TrimPrefix(d, "sha256:")) {
				t.Errorf("%s shows %s, a digest of values holding secrets that a guess can confirm", output, d)
			}
		}
	}
	for input, secret := range inputs {
		sum := sha256.Sum256([]byte(secret))
		forms := map[string]string{
			"in clear":     secret,
			"base64":       base64.StdEncoding.EncodeToString([]byte(secret)),
			"SHA-256":      hex.EncodeToString(sum[:]),
			"Go-quoted":    strings.Trim(strconv.Quote(secret), `"`),
			"JSON-escaped": jsonEscaped(secret),
		}
		if lines := strings.Split(strings.TrimSpace(secret), "\n"); len(lines) > 1 {
			for i, line := range lines {
				forms[fmt.Sprintf("line %d", i+1)] = line
				forms[fmt.Sprintf("JSON-escaped line %d", i+1)] = jsonEscaped(line)
			}
		}
		for output, text := range outputs {
			t.Run(input+"/"+output, func(t *testing.T) {
				for form, s := range forms {
					if i := strings.Index(text, s); i >= 0 {
						t.Errorf("%s shows the %s %s: …%s…", output, input, form, excerpt(text, i, len(s)))
					}
				}
			})
		}
	}
}

// jsonEscaped is s escaped as in a JSON string, without the quotes.
func jsonEscaped(s string) string {
	b, _ := json.Marshal(s) // a string: cannot fail
	return strings.Trim(string(b), `"`)
}

// excerpt is text around [i, i+n) for an error message, the secret masked.
func excerpt(text string, i, n int) string {
	from, to := max(0, i-120), min(len(text), i+n+40)
	return text[from:i] + "<SECRET>" + text[i+n:to]
}

// withoutSensitive is Terraform's JSON output with every value Terraform
// itself marks sensitive removed, and the values of variables declared
// sensitive: what remains must hold no secret.
func withoutSensitive(t *testing.T, out string) string {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("terraform show -json: %v\n%s", err, out)
	}
	// Modules' resources: values beside sensitive_values.
	var module func(m any)
	module = func(m any) {
		mod, _ := m.(map[string]any)
		if mod == nil {
			return
		}
		for _, r := range asList(mod["resources"]) {
			res, _ := r.(map[string]any)
			if res != nil {
				res["values"] = prune(res["values"], res["sensitive_values"])
			}
		}
		for _, c := range asList(mod["child_modules"]) {
			module(c)
		}
	}
	for _, key := range []string{"values", "planned_values"} {
		if v, ok := doc[key].(map[string]any); ok {
			module(v["root_module"])
		}
	}
	if prior, ok := doc["prior_state"].(map[string]any); ok {
		if v, ok := prior["values"].(map[string]any); ok {
			module(v["root_module"])
		}
	}
	for _, c := range asList(doc["resource_changes"]) {
		rc, _ := c.(map[string]any)
		if change, ok := rc["change"].(map[string]any); ok {
			change["before"] = prune(change["before"], change["before_sensitive"])
			change["after"] = prune(change["after"], change["after_sensitive"])
		}
	}
	// Variables declared sensitive: Terraform keeps their values in the
	// plan, marked so by the configuration.
	if vars, ok := doc["variables"].(map[string]any); ok {
		declared := map[string]any{}
		if cfg, ok := doc["configuration"].(map[string]any); ok {
			if root, ok := cfg["root_module"].(map[string]any); ok {
				declared, _ = root["variables"].(map[string]any)
			}
		}
		for name := range vars {
			if d, ok := declared[name].(map[string]any); ok && d["sensitive"] == true {
				delete(vars, name)
			}
		}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// prune is v with the parts sensitivity marks true removed.
func prune(v, sensitivity any) any {
	switch s := sensitivity.(type) {
	case bool:
		if s {
			return "(removed: sensitive)"
		}
		return v
	case map[string]any:
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		for k, sub := range s {
			if _, ok := m[k]; ok {
				m[k] = prune(m[k], sub)
			}
		}
		return m
	case []any:
		l, ok := v.([]any)
		if !ok {
			return v
		}
		for i := range l {
			if i < len(s) {
				l[i] = prune(l[i], s[i])
			}
		}
		return l
	}
	return v
}

func asList(v any) []any { l, _ := v.([]any); return l }

// caPEM is the cluster's CA certificate.
func caPEM(t *testing.T) string {
	t.Helper()
	return caPEMOf(t, restConfig)
}

// serviceAccountToken is a token of a service account allowed everything,
// for the provider's kubernetes.token.
func serviceAccountToken(t *testing.T, ns string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "terraform"}}
	if _, err := clientset.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "faults-" + ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "terraform", Namespace: ns}},
	}
	if _, err := clientset.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = clientset.RbacV1().ClusterRoleBindings().Delete(context.Background(), binding.Name, metav1.DeleteOptions{})
	})
	return tokenOf(ctx, t, clientset, ns, "terraform")
}

// tokenOf is an hour's token of the service account ns/name.
func tokenOf(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string) string {
	t.Helper()
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptrTo(int64(3600))},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

func ptrTo[T any](v T) *T { return &v }
