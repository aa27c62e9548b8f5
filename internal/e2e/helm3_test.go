//go:build unix

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testenv"
)

// TestReleasesOfHelm3: releases Helm 3 wrote keep being written client-side
// by this provider's Helm 4 (helm-controller's "auto": the records they
// have say no apply method): one this provider installed before it ran
// Helm 4, with the state and the cluster that version left
// (testdata/provider-helm3), and one the Helm 3 CLI installed, imported.
// Each plans no change; an upgrade keeps the objects (same uids), records
// "csa", and writes no field by server-side apply; the plan after it is
// empty.
func TestReleasesOfHelm3(t *testing.T) {
	parallelMatrix(t)
	fixture := testdataPath("provider-helm3")
	provider := fmt.Sprintf(`terraform {
  required_providers {
    helmrelease = { source = "helmrelease/helmrelease" }
  }
}

provider "helmrelease" {
  kubernetes = { config_path = %q }
}
`, cluster.Kubeconfig)

	t.Run("provider", func(t *testing.T) {
		const ns = "helm3-fixture" // the fixture's
		createNamespace(t, ns)
		restoreObjects(t, filepath.Join(fixture, "cluster.yaml"))
		st := newStorage(t, ns)
		w := newWorkspace(t, "provider-helm3")
		copyDir(t, filepath.Join(fixture, "charts"), filepath.Join(w.dir, "charts"))
		state, err := os.ReadFile(filepath.Join(fixture, "state.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(w.dir, "terraform.tfstate"), state, 0o600); err != nil {
			t.Fatal(err)
		}
		resource, err := os.ReadFile(filepath.Join(fixture, "main.tf"))
		if err != nil {
			t.Fatal(err)
		}
		w.write(provider + string(resource))
		w.planIsEmpty()
		upgradedClientSide(t, w, st, ns, "app", "app-podinfo", func() {
			w.write(provider + strings.Replace(string(resource), "written by Helm 3", "upgraded by Helm 4", 1))
		})
	})

	t.Run("cli", func(t *testing.T) {
		testenv.FullSuiteOnly(t, "the Helm 3 CLI, built from tools/helm3")
		helm3 := os.Getenv("HELMRELEASE_TEST_HELM3")
		if helm3 == "" {
			testenv.SkipUnlessRequired(t, "needs the Helm 3 CLI: set HELMRELEASE_TEST_HELM3 to a helm v3 binary (make test-all builds one from tools/helm3)")
		}
		ns := newNamespace(t)
		st := newStorage(t, ns)
		w := newWorkspace(t, "cli-helm3")
		copyDir(t, filepath.Join(fixture, "charts"), filepath.Join(w.dir, "charts"))
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, helm3, "install", "cli", "./charts/app", "--namespace", ns, "--kubeconfig", cluster.Kubeconfig,
			"--set", "ui.message=installed by the Helm 3 CLI", "--wait", "--timeout", "2m")
		cmd.Dir = w.dir
		cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("helm install (Helm 3): %v\n%s", err, out)
		}
		if got := st.latest("cli").ApplyMethod; got != "" {
			t.Fatalf("the Helm 3 CLI's record says apply_method %q, want none", got)
		}
		config := func(message string) string {
			return provider + fmt.Sprintf(`
import {
  to = helmrelease_release.cli
  id = "%[1]s/cli"
}

resource "helmrelease_release" "cli" {
  name      = "cli"
  namespace = %[1]q
  chart     = { name = "./charts/app" }
  values    = { ui = { message = %[2]q } }
}
`, ns, message)
		}
		w.write(config("installed by the Helm 3 CLI"))
		w.apply()
		w.planIsEmpty()
		upgradedClientSide(t, w, st, ns, "cli", "cli-podinfo", func() { w.write(config("upgraded by Helm 4")) })
	})
}

// upgradedClientSide applies the configuration change writes and checks
// that release name was upgraded client-side, its Deployment deployment
// kept, and that the plan after it is empty; then destroys it.
func upgradedClientSide(t *testing.T, w *workspace, st *storage, ns, name, deployment string, writes func()) {
	t.Helper()
	uid := deploymentUID(t, clientset, ns, deployment)
	before := st.latest(name).Version
	writes()
	w.apply()
	after := st.latest(name)
	if after.Version != before+1 || after.ApplyMethod != "csa" {
		t.Errorf("after the upgrade: revision %d with apply_method %q, want revision %d with csa", after.Version, after.ApplyMethod, before+1)
	}
	if got := deploymentUID(t, clientset, ns, deployment); got != uid {
		t.Errorf("Deployment %s uid %s after the upgrade, want the same %s", deployment, got, uid)
	}
	d, err := clientset.AppsV1().Deployments(ns).Get(context.Background(), deployment, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range d.ManagedFields {
		if f.Manager == helm.FieldManager && f.Operation == metav1.ManagedFieldsOperationApply {
			t.Errorf("Deployment %s has fields applied server-side by %s after the upgrade", deployment, f.Manager)
		}
	}
	w.planIsEmpty()
	w.must(0, "destroy", "-auto-approve", "-input=false", "-no-color")
}

// createNamespace creates namespace ns, deleted after the test.
func createNamespace(t *testing.T, ns string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = clientset.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	})
}

// restoreObjects creates the objects of the YAML stream at path as Helm 3
// created them: client-side, as the provider's field manager.
func restoreObjects(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	resources := map[string]schema.GroupVersionResource{
		"Secret":     {Version: "v1", Resource: "secrets"},
		"Service":    {Version: "v1", Resource: "services"},
		"Deployment": {Group: "apps", Version: "v1", Resource: "deployments"},
	}
	dyn := dynamic.NewForConfigOrDie(restConfig)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, doc := range strings.Split(string(b), "\n---\n") {
		var obj unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
			t.Fatal(err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		gvr, ok := resources[obj.GetKind()]
		if !ok {
			t.Fatalf("%s: no resource for kind %s", path, obj.GetKind())
		}
		if _, err := dyn.Resource(gvr).Namespace(obj.GetNamespace()).Create(ctx, &obj, metav1.CreateOptions{FieldManager: helm.FieldManager}); err != nil {
			t.Fatalf("restoring %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
}
