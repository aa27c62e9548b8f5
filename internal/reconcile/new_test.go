package reconcile

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
)

func TestServiceAccountImpersonation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.cs.CoreV1().ServiceAccounts(f.ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "deployer"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s := f.spec(func(s *Spec) { s.ServiceAccountName = "deployer" })
	e, err := New(ctx, s, Options{Config: testRESTConfig})
	if err != nil {
		t.Fatal(err)
	}
	e.Key = testDigests.Key
	run := func() error {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
		return e.Reconcile(ctx, &Request{Spec: s, Chart: engineChart("1.0.0"), Status: &Status{}}, nil)
	}
	err = run()
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "system:serviceaccount:"+f.ns+":deployer") {
		t.Fatalf("without RBAC: %v, want forbidden for the service account", err)
	}
	if _, err := f.cs.RbacV1().Roles(f.ns).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "deployer"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.cs.RbacV1().RoleBindings(f.ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "deployer"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "deployer"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "deployer", Namespace: f.ns}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The API server's RBAC cache takes a moment to see the binding.
	deadline := time.Now().Add(30 * time.Second)
	for err = run(); apierrors.IsForbidden(err) && time.Now().Before(deadline); err = run() {
		time.Sleep(250 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("with a RoleBinding in the namespace: %v", err)
	}
}

func TestKubeConfigFromSecret(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	raw, err := os.ReadFile(testKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	// The test kubeconfig names its certificates by path: inline them.
	cfg, err := clientcmd.Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := clientcmd.ResolveLocalPaths(cfg); err != nil {
		t.Fatal(err)
	}
	for _, c := range cfg.Clusters {
		if c.CertificateAuthority != "" {
			if c.CertificateAuthorityData, err = os.ReadFile(c.CertificateAuthority); err != nil {
				t.Fatal(err)
			}
			c.CertificateAuthority = ""
		}
	}
	for _, a := range cfg.AuthInfos {
		if a.ClientCertificate != "" {
			a.ClientCertificateData, _ = os.ReadFile(a.ClientCertificate)
			a.ClientKeyData, _ = os.ReadFile(a.ClientKey)
			a.ClientCertificate, a.ClientKey = "", ""
		}
	}
	inline, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.cs.CoreV1().Secrets(f.ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "remote"},
		Data:       map[string][]byte{"value.yaml": inline},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s := f.spec(nil)
	if _, err := New(ctx, s, Options{Config: testRESTConfig, KubeConfig: &KubeConfigRef{Name: "absent"}}); err == nil || !strings.Contains(err.Error(), "kubeconfig Secret "+f.ns+"/absent not found") {
		t.Errorf("missing Secret: %v", err)
	}
	if _, err := New(ctx, s, Options{Config: testRESTConfig, KubeConfig: &KubeConfigRef{Name: "remote", Key: "other"}}); err == nil || !strings.Contains(err.Error(), "has no key") {
		t.Errorf("missing key: %v", err)
	}
	e, err := New(ctx, s, Options{Config: testRESTConfig, KubeConfig: &KubeConfigRef{Name: "remote"}})
	if err != nil {
		t.Fatal(err)
	}
	e.Key = testDigests.Key
	ctxT, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := e.Reconcile(ctxT, &Request{Spec: s, Chart: engineChart("1.0.0"), Status: &Status{}}, nil); err != nil {
		t.Fatal(err)
	}
	if f.latest() == nil {
		t.Error("no release after reconciling through the kubeconfig of the Secret")
	}
}
