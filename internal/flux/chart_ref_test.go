package flux

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testcluster"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testenv"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// TestHelmChartVerify: chart_ref to a HelmChart reads its spec.verify,
// with the keys of its Secret, for a chart of an OCI HelmRepository
// (resolved by the artifact's version), and refuses one of a Helm
// repository over HTTP, whose charts cosign and notation cannot sign. The
// objects are written as source-controller leaves them Ready, with no
// controller at work.
func TestHelmChartVerify(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the test cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	versions, err := testcluster.FluxVersions()
	if err != nil {
		t.Fatal(err)
	}
	hc := versions[testcluster.HelmController]
	if err := testcluster.InstallFluxCRDs(ctx, testKubeconfig, hc[len(hc)-1], os.Stderr); err != nil {
		testenv.SkipUnlessRequired(t, "needs Flux's CRDs, from the sources of its controllers: "+err.Error())
	}
	ns := newNamespace(t, kubernetes.NewForConfigOrDie(testRESTConfig))
	e, err := New(testRESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	key := testrepo.NewCosignKey(t)
	verify := &sourcev1.HelmChartVerification{Provider: "cosign", SecretRef: &meta.LocalObjectReference{Name: "signers"}}
	objects := []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "signers", Namespace: ns}, Data: map[string][]byte{"release.pub": key.PublicPEM}},
		&sourcev1.HelmRepository{ObjectMeta: metav1.ObjectMeta{Name: "oci", Namespace: ns}, Spec: sourcev1.HelmRepositorySpec{
			Type: sourcev1.HelmRepositoryTypeOCI, URL: "oci://registry.example.com/charts", Interval: metav1.Duration{Duration: time.Hour}}},
		&sourcev1.HelmRepository{ObjectMeta: metav1.ObjectMeta{Name: "http", Namespace: ns}, Spec: sourcev1.HelmRepositorySpec{
			URL: "https://charts.example.com", Interval: metav1.Duration{Duration: time.Hour}}},
	}
	charts := map[string]string{"from-oci": sourcev1.HelmRepositoryKind + "/oci", "from-http": sourcev1.HelmRepositoryKind + "/http"}
	for name, source := range charts {
		kind, sourceName, _ := strings.Cut(source, "/")
		objects = append(objects, &sourcev1.HelmChart{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: sourcev1.HelmChartSpec{
			Chart: "web", Version: "1.0.0", Interval: metav1.Duration{Duration: time.Hour}, Verify: verify,
			SourceRef: sourcev1.LocalHelmChartSourceReference{Kind: kind, Name: sourceName}}})
	}
	for _, o := range objects {
		if err := e.Kube.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for name := range charts {
		obj := &sourcev1.HelmChart{}
		if err := e.Kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
			t.Fatal(err)
		}
		obj.Status.ObservedGeneration = obj.Generation
		obj.Status.Conditions = []metav1.Condition{{Type: meta.ReadyCondition, Status: metav1.ConditionTrue, Reason: meta.SucceededReason, Message: "packaged", LastTransitionTime: metav1.Now(), ObservedGeneration: obj.Generation}}
		obj.Status.Artifact = &meta.Artifact{Revision: "1.0.0", Path: "helmchart/web-1.0.0.tgz", URL: "http://source-controller/web-1.0.0.tgz", Digest: "sha256:" + strings.Repeat("a", 64), LastUpdateTime: metav1.Now()}
		if err := e.Kube.Status().Update(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}

	src, err := e.ChartRefSource(ctx, chartsource.ChartRef{Kind: chartsource.KindHelmChart, Name: "from-oci", Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	if src.Repository != "oci://registry.example.com/charts" || src.Name != "web" || src.Version != "=1.0.0" || src.Artifact == nil || src.Artifact.Revision != "1.0.0" || src.Artifact.Digest != "sha256:"+strings.Repeat("a", 64) {
		t.Errorf("source %+v, want web =1.0.0 of the registry, artifact 1.0.0 of the digest source-controller stored (the chart layer it pulled)", src)
	}
	if v := src.Verify; v == nil || v.Provider != chartsource.ProviderCosign || !slices.ContainsFunc(v.PublicKeys, func(k []byte) bool { return string(k) == string(key.PublicPEM) }) {
		t.Errorf("verification %+v, want cosign with the key of the Secret signers", src.Verify)
	}
	_, err = e.ChartRefSource(ctx, chartsource.ChartRef{Kind: chartsource.KindHelmChart, Name: "from-http", Namespace: ns})
	if !errors.Is(err, chartsource.ErrChartRef) || !strings.Contains(err.Error(), "spec.verify applies to charts of an OCI HelmRepository only") || !strings.Contains(err.Error(), "HelmRepository http") {
		t.Errorf("HelmChart of an HTTP HelmRepository with spec.verify: %v, want refused saying why", err)
	}
}
