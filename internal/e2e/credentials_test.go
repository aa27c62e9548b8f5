//go:build unix

package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// TestCredentialsOutOfReach: a password written into chart.repository
// (https://user:pass@host/…) is sent as the request's basic auth and
// appears in no output of the provider: not in the error of an unreachable
// repository, the trace log, the cache directory's file names or files,
// the chart source recorded in Helm storage, or `terraform show -json`
// beside what Terraform marks sensitive; a URL with a query string is
// refused at plan without quoting it. The token of a kube_config Secret's
// kubeconfig is in no output either.
func TestCredentialsOutOfReach(t *testing.T) {
	parallelMatrix(t)
	ns := newNamespace(t)
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	password := "S3CRET-url-" + hex.EncodeToString(b)
	repo := newRepository(t)
	repo.Password = password
	token := serviceAccountToken(t, ns)

	// A kubeconfig of the cluster with the service account's token, in a
	// Secret the release's kube_config names.
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: cluster.Host, CertificateAuthorityData: []byte(caPEM(t))}
	cfg.AuthInfos["test"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "test"}
	cfg.CurrentContext = "test"
	kubeconfig, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := clientset.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "workload-kubeconfig"}, Data: map[string][]byte{"value": kubeconfig},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	w := newWorkspace(t, "credentials")
	cacheDir := t.TempDir()
	logPath := filepath.Join(w.dir, "trace.log")
	withCredentials := strings.Replace(repo.URL, "://", "://"+testrepo.Username+":"+password+"@", 1)
	config := func(repository string) {
		w.env = []string{"TF_LOG=trace", "TF_LOG_PATH=" + logPath, "TF_VAR_repository=" + repository}
		w.write(fmt.Sprintf(`terraform {
  required_providers {
    helmrelease = { source = "helmrelease/helmrelease" }
  }
}

variable "repository" {
  type      = string
  sensitive = true
}

provider "helmrelease" {
  kubernetes = { config_path = %q }
  cache_dir  = %q
}

resource "helmrelease_release" "svc" {
  name        = "svc"
  namespace   = %q
  chart       = { name = "svc", version = "1.0.0", repository = var.repository }
  values      = { message = "hello" }
  kube_config = { secret_ref = { name = "workload-kubeconfig", key = "value" } }
}
`, cluster.Kubeconfig, cacheDir, ns))
	}

	outputs := map[string]string{}
	record := func(name string, res result) { outputs[name] = res.stdout + "\n" + res.stderr }
	config(withCredentials)
	record("apply", w.apply())
	if repo.IndexDownloads.Load() == 0 {
		t.Fatal("the repository served no index: the credentials of the URL were not sent")
	}
	record("plan", w.must(0, "plan", "-input=false", "-no-color", "-detailed-exitcode"))
	outputs["show -json of the state"] = withoutSensitive(t, w.must(0, "show", "-json").stdout)

	// Unreachable: the error names the repository without its password.
	config(strings.Replace(withCredentials, repo.Listener.Addr().String(), "127.0.0.1:1", 1))
	res := w.must(1, "plan", "-input=false", "-no-color")
	if !has(res.stderr, "127.0.0.1:1") {
		t.Errorf("the error does not name the unreachable repository:\n%s", res)
	}
	record("error of an unreachable repository", res)

	// A query string is refused at plan, before any request.
	config(repo.URL + "/?token=" + password)
	res = w.must(1, "plan", "-input=false", "-no-color")
	if !has(res.stderr, "query string") || !has(res.stderr, "chart.repository") {
		t.Errorf("a repository URL with a query string is not refused naming the attribute:\n%s", res)
	}
	record("error of a query string", res)

	config(withCredentials)
	record("destroy", w.must(0, "destroy", "-auto-approve", "-input=false", "-no-color"))
	trace, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	outputs["TF_LOG=trace"] = string(trace)
	for _, rel := range newStorage(t, ns).history("svc") {
		outputs[fmt.Sprintf("chart source recorded in revision %d", rel.Version)] = fmt.Sprint(rel.Chart.Metadata.Annotations)
	}
	err = filepath.WalkDir(cacheDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		outputs["cache file "+path] = path + "\n" + string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for output, text := range outputs {
		for name, secret := range map[string]string{"the repository URL's password": password, "the kube_config Secret's token": token} {
			if i := strings.Index(text, secret); i >= 0 {
				t.Errorf("%s shows %s: …%s…", output, name, excerpt(text, i, len(secret)))
			}
		}
	}
}
