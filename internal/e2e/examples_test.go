//go:build unix

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testenv"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// TestExamples: every example directory is validated, applied as written
// against the local cluster (its chart repository variables pointed at a
// test repository serving a podinfo of the same name and values), planned
// again with no change, and destroyed. What an example says must exist
// beforehand (a service account, a kubeconfig Secret, values objects,
// releases to import) is created first. The examples run side by side,
// each in namespaces of its own: the namespaces they name, prefixed.
func TestExamples(t *testing.T) {
	parallelMatrix(t)
	podinfo := testdataPath("charts", "podinfo")

	repo := testrepo.NewHTTP(t)
	repo.Password = "" // public, as the examples' default repository
	oci := testrepo.NewOCIWithPassword(t, "")
	for _, v := range []string{"6.5.4", "6.7.1"} {
		repo.Add(t, testrepo.LoadChart(t, podinfo, v), nil)
		oci.Push(t, testrepo.LoadChart(t, podinfo, v), nil)
	}
	newer := os.Getenv("HELMRELEASE_TEST_TERRAFORM_NEWER")

	for i, ex := range []struct {
		dir string
		// newer: the example needs Terraform >= 1.12 or 1.14.
		newer bool
		// setup makes what the example says exists, in the example's
		// namespaces (ns maps a name the example writes to its own).
		setup func(t *testing.T, ns func(string) string)
		vars  []string
		// query runs terraform query instead of apply.
		query bool
		// invoke is an action the apply invokes after the first apply;
		// invokeChanges: the plan after it shows a change (a request to
		// handle), which the next apply makes.
		invoke        string
		invokeChanges bool
		// invokeNoHelmAction: that plan plans no install or upgrade.
		invokeNoHelmAction bool
		// tfvars are the variables a platform sets (written as
		// terraform.tfvars.json); with them, KUBECONFIG is unset, so that
		// the example reaches the cluster with what they give alone.
		tfvars func(t *testing.T, ns func(string) string) map[string]any
	}{
		{dir: "examples/provider", vars: []string{"kubeconfig=" + cluster.Kubeconfig}},
		{dir: "examples/resources/helmrelease_release"},
		{dir: "examples/resources/helmrelease_release/drift"},
		{dir: "examples/resources/helmrelease_release/post_renderers"},
		{dir: "examples/resources/helmrelease_release/remediation"},
		{dir: "examples/resources/helmrelease_release/values_from", setup: func(t *testing.T, ns func(string) string) {
			create(t, ns("apps"), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "podinfo-defaults"}, Data: map[string]string{"values.yaml": "ingress:\n  enabled: false\n"}})
			create(t, ns("apps"), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "podinfo-ui"}, StringData: map[string]string{"message": "from a Secret"}})
		}},
		{dir: "examples/resources/helmrelease_release/service_account", setup: func(t *testing.T, ns func(string) string) {
			create(t, ns("team-a"), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer"}})
			create(t, ns("team-a"), &rbacv1.Role{
				ObjectMeta: metav1.ObjectMeta{Name: "deployer"},
				Rules: []rbacv1.PolicyRule{{APIGroups: []string{"", "apps"}, Verbs: []string{"*"},
					Resources: []string{"deployments", "replicasets", "services", "configmaps", "secrets", "pods", "pods/log"}}},
			})
			create(t, ns("team-a"), &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "deployer"},
				RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "deployer"},
				Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "deployer", Namespace: ns("team-a")}},
			})
		}},
		{dir: "examples/resources/helmrelease_release/kube_config", setup: func(t *testing.T, ns func(string) string) {
			kc, err := os.ReadFile(cluster.Kubeconfig)
			if err != nil {
				t.Fatal(err)
			}
			create(t, ns("fleet"), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "workload-1-kubeconfig"}, Data: map[string][]byte{"value": kc}})
		}},
		{dir: "examples/resources/helmrelease_release/import_blocks", newer: true, setup: func(t *testing.T, ns func(string) string) {
			helmInstall(t, podinfo, ns("apps"), "podinfo")
			helmInstall(t, podinfo, ns("apps"), "backend")
		}},
		{dir: "examples/actions/helmrelease_test", newer: true, invoke: "action.helmrelease_test.podinfo"},
		{dir: "examples/actions/helmrelease_force", newer: true, invoke: "action.helmrelease_force.podinfo", invokeChanges: true},
		{dir: "examples/actions/helmrelease_reset", newer: true, invoke: "action.helmrelease_reset.podinfo", invokeChanges: true, invokeNoHelmAction: true},
		{dir: "examples/list-resources/helmrelease_release", newer: true, query: true, setup: func(t *testing.T, ns func(string) string) {
			helmInstall(t, podinfo, ns("apps"), "podinfo")
		}},
		{dir: "examples/data-sources/helmrelease_chart", vars: []string{"oci_repository=" + oci.URL, "oci_ca_file=" + oci.CAFile}},
		{dir: "examples/data-sources/helmrelease_template"},
		{dir: "examples/functions/merge_values", newer: true},
		{dir: "examples/demo"},
		{dir: "examples/guides/hcp_kubernetes_credentials", tfvars: hcpKubernetesCredentials},
	} {
		prefix := fmt.Sprintf("ex%d-", i)
		ns := func(name string) string { return prefix + name }
		t.Run(strings.TrimPrefix(ex.dir, "examples/"), func(t *testing.T) {
			t.Parallel()
			namespaces(t, ns("apps"), ns("team-a"), ns("fleet"))
			w := newWorkspace(t, "example")
			copyDir(t, filepath.Join(repoRoot, ex.dir), w.dir)
			inNamespaces(t, w.dir, prefix)
			if ex.newer {
				if newer == "" {
					testenv.SkipUnlessRequired(t, "needs a newer Terraform: set HELMRELEASE_TEST_TERRAFORM_NEWER")
				}
				w.bin = newer
			}
			w.env = []string{"KUBECONFIG=" + cluster.Kubeconfig}
			if ex.tfvars != nil {
				w.env = []string{"KUBECONFIG="}
				writeJSON(t, filepath.Join(w.dir, "terraform.tfvars.json"), ex.tfvars(t, ns))
			}
			var args []string
			if strings.Contains(readAll(t, w.dir), "var.chart_repository") {
				args = append(args, "-var", "chart_repository="+repo.URL)
			}
			for _, v := range ex.vars {
				args = append(args, "-var", v)
			}
			if ex.setup != nil {
				ex.setup(t, ns)
			}
			w.must(0, "validate", "-no-color")
			if ex.query {
				res := w.must(0, append([]string{"query", "-no-color"}, args...)...)
				if !has(res.stdout, ns("apps")+"/podinfo") {
					t.Errorf("the query lists no %s/podinfo:\n%s", ns("apps"), res)
				}
				return
			}
			w.must(0, append([]string{"apply", "-auto-approve", "-input=false", "-no-color"}, args...)...)
			if ex.invoke != "" {
				w.must(0, append([]string{"apply", "-auto-approve", "-input=false", "-no-color", "-invoke=" + ex.invoke}, args...)...)
				want := 0
				if ex.invokeChanges {
					want = 2
				}
				res := w.must(want, append([]string{"plan", "-input=false", "-no-color", "-detailed-exitcode"}, args...)...)
				if ex.invokeNoHelmAction && strings.Contains(res.stdout, "planned_action") {
					t.Errorf("the plan after %s plans a Helm action:\n%s", ex.invoke, res)
				}
				w.must(0, append([]string{"apply", "-auto-approve", "-input=false", "-no-color"}, args...)...)
			}
			w.must(0, append([]string{"plan", "-input=false", "-no-color", "-detailed-exitcode"}, args...)...)
			w.must(0, append([]string{"destroy", "-auto-approve", "-input=false", "-no-color"}, args...)...)
		})
	}
}

// hcpKubernetesCredentials are the variables of the HCP Terraform
// dynamic credentials guide as HCP Terraform sets them: token files, by
// alias, of an identity the cluster's RBAC lets deploy podinfo in apps
// and team-a (here a ServiceAccount's token, where HCP Terraform's is its
// run's workload identity token), and the clusters' addresses.
func hcpKubernetesCredentials(t *testing.T, ns func(string) string) map[string]any {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	create(t, ns("apps"), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "hcp-workspace"}})
	for _, n := range []string{ns("apps"), ns("team-a")} {
		create(t, n, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "hcp-workspace"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"", "apps"}, Verbs: []string{"*"},
				Resources: []string{"deployments", "replicasets", "services", "configmaps", "secrets", "pods", "pods/log"}}},
		})
		create(t, n, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "hcp-workspace"},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "hcp-workspace"},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "hcp-workspace", Namespace: ns("apps")}},
		})
	}
	tr, err := clientset.CoreV1().ServiceAccounts(ns("apps")).CreateToken(ctx, "hcp-workspace", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	paths := map[string]any{}
	for _, alias := range []string{"default", "STAGING"} {
		path := filepath.Join(dir, alias+".token")
		if err := os.WriteFile(path, []byte(tr.Status.Token), 0o600); err != nil {
			t.Fatal(err)
		}
		paths[alias] = map[string]any{"token_path": path}
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", cluster.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ca := cfg.CAData
	if len(ca) == 0 {
		if ca, err = os.ReadFile(cfg.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	api := map[string]any{"host": cfg.Host, "cluster_ca_certificate": string(ca)}
	return map[string]any{
		"tfc_kubernetes_dynamic_credentials": map[string]any{"default": paths["default"], "aliases": map[string]any{"STAGING": paths["STAGING"]}},
		"clusters":                           map[string]any{"default": api, "staging": api},
	}
}

// exampleNamespaces are the namespaces an example's configuration names:
// a namespace attribute, and the namespace of an import block's ID.
var exampleNamespaces = []*regexp.Regexp{
	regexp.MustCompile(`(namespace\s*=\s*")([a-z0-9-]+)(")`),
	regexp.MustCompile(`(id\s*=\s*")([a-z0-9-]+)(/)`),
}

// inNamespaces rewrites the namespaces the .tf and .tfquery.hcl files
// under dir name with prefix, so that examples run side by side.
func inNamespaces(t *testing.T, dir, prefix string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || (filepath.Ext(path) != ".tf" && !strings.HasSuffix(path, ".tfquery.hcl")) {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, re := range exampleNamespaces {
			b = re.ReplaceAll(b, []byte("${1}"+prefix+"${2}${3}"))
		}
		return os.WriteFile(path, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// writeJSON writes v as JSON into the file path (terraform.tfvars.json).
func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// namespaces makes sure each namespace exists and deletes them, with what
// is left in them, after the test, waiting until they are gone (the next
// example creates them again). They are deleted together: the namespace
// controller takes 5 to 10 s for each.
func namespaces(t *testing.T, names ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, ns := range names {
		_, err := clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		for _, ns := range names {
			_ = clientset.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
		}
		for _, ns := range names {
			_ = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
				_, err := clientset.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
				return apierrors.IsNotFound(err), nil
			})
		}
	})
}

// create creates obj in ns.
func create(t *testing.T, ns string, obj any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var err error
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		_, err = clientset.CoreV1().ConfigMaps(ns).Create(ctx, o, metav1.CreateOptions{})
	case *corev1.Secret:
		_, err = clientset.CoreV1().Secrets(ns).Create(ctx, o, metav1.CreateOptions{})
	case *corev1.ServiceAccount:
		_, err = clientset.CoreV1().ServiceAccounts(ns).Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.Role:
		_, err = clientset.RbacV1().Roles(ns).Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.RoleBinding:
		_, err = clientset.RbacV1().RoleBindings(ns).Create(ctx, o, metav1.CreateOptions{})
	default:
		t.Fatalf("create: unsupported %T", obj)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// helmInstall installs the chart at dir as `helm install` does.
func helmInstall(t *testing.T, dir, ns, name string) {
	t.Helper()
	helmInstallOn(t, restConfig, dir, ns, name)
}

// helmInstallOn is helmInstall on the cluster of restConfig.
func helmInstallOn(t *testing.T, restConfig *rest.Config, dir, ns, name string) {
	t.Helper()
	helmInstallChart(t, restConfig, testrepo.LoadChart(t, dir, "6.7.1"), ns, name)
}

// helmInstallChart installs ch as `helm install` does, without values.
func helmInstallChart(t *testing.T, restConfig *rest.Config, ch *chart.Chart, ns, name string) {
	t.Helper()
	c, err := helm.NewClient(helm.ClientOptions{Getter: kube.NewGetter(restConfig, ns, ""), StorageNamespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := c.Install(ctx, ch, nil, helm.InstallOptions{ReleaseName: name, Namespace: ns, Timeout: time.Minute, Wait: true}); err != nil {
		t.Fatal(err)
	}
}

// copyDir copies the files of src, and of its directories that are not
// examples of their own (no .tf file, or a module under modules/), to dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		from, to := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		if e.IsDir() {
			if tfFiles, _ := filepath.Glob(filepath.Join(from, "*.tf")); len(tfFiles) > 0 && filepath.Base(src) != "modules" {
				continue
			}
			if err := os.MkdirAll(to, 0o750); err != nil {
				t.Fatal(err)
			}
			copyDir(t, from, to)
			continue
		}
		if strings.HasPrefix(e.Name(), "terraform.tfstate") || e.Name() == ".terraform.lock.hcl" {
			continue
		}
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// readAll is the text of the .tf files of dir.
func readAll(t *testing.T, dir string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.tf"))
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}
