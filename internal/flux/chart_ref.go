package flux

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
)

// ChartRefSource is the chart source of the Flux object ref names (a
// HelmRelease's spec.chartRef), read from the object's own spec and
// Secrets: the OCI repository and the manifest of its artifact, or the
// HelmChart's Helm repository, Git repository or bucket with the version
// and source revision of its artifact. A resolve of it finds the chart
// helm-controller deploys, from the same origin with the same
// credentials. An object that is not Ready, or uses what the provider
// cannot reach from outside the cluster (a cloud provider's identity, a
// service account, a proxy), is an error marked chartsource.ErrChartRef.
func (e *Client) ChartRefSource(ctx context.Context, ref chartsource.ChartRef) (chartsource.Source, error) {
	key := client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}
	switch ref.Kind {
	case chartsource.KindOCIRepository:
		repo := &sourcev1.OCIRepository{}
		if err := e.getRef(ctx, ref, repo); err != nil {
			return chartsource.Source{}, err
		}
		if err := readyRef(ref, repo.Generation, repo.Status.ObservedGeneration, repo.Status.Conditions, repo.Status.Artifact); err != nil {
			return chartsource.Source{}, err
		}
		s := repo.Spec
		if err := unsupported(ref, []setField{
			{"spec.provider " + s.Provider, s.Provider != "" && s.Provider != sourcev1.GenericOCIProvider},
			{"spec.serviceAccountName", s.ServiceAccountName != ""},
			{"spec.proxySecretRef", s.ProxySecretRef != nil},
		}); err != nil {
			return chartsource.Source{}, err
		}
		i := strings.LastIndex(s.URL, "/")
		if !strings.HasPrefix(s.URL, "oci://") || i <= len("oci://") {
			return chartsource.Source{}, refError(ref, "its URL %q names no chart (oci://host/path/chart)", s.URL)
		}
		src := chartsource.Source{Repository: s.URL[:i], Name: s.URL[i+1:], ChartRef: &ref, Artifact: &chartsource.Artifact{Revision: repo.Status.Artifact.Revision}}
		var err error
		if src.Auth, err = e.refAuth(ctx, ref, key.Namespace, s.SecretRef, s.CertSecretRef, registryHost(s.URL)); err != nil {
			return chartsource.Source{}, err
		}
		src.Auth.PlainHTTP = s.Insecure
		// The signature source-controller verified is verified again: the
		// chart pulled is the one it let through.
		if src.Verify, err = e.ociVerification(ctx, ref, s.Verify); err != nil {
			return chartsource.Source{}, err
		}
		return src, nil
	case chartsource.KindHelmChart:
		hc := &sourcev1.HelmChart{}
		if err := e.getRef(ctx, ref, hc); err != nil {
			return chartsource.Source{}, err
		}
		if err := readyRef(ref, hc.Generation, hc.Status.ObservedGeneration, hc.Status.Conditions, hc.Status.Artifact); err != nil {
			return chartsource.Source{}, err
		}
		return e.helmChartSource(ctx, ref, hc)
	}
	return chartsource.Source{}, refError(ref, "a chart reference names an OCIRepository or a HelmChart")
}

// helmChartSource is the source of a Ready HelmChart.
func (e *Client) helmChartSource(ctx context.Context, ref chartsource.ChartRef, hc *sourcev1.HelmChart) (chartsource.Source, error) {
	artifact := hc.Status.Artifact
	src := chartsource.Source{
		Name: hc.Spec.Chart, ValuesFiles: hc.Spec.ValuesFiles, IgnoreMissingValuesFiles: hc.Spec.IgnoreMissingValuesFiles,
		ReconcileStrategy: chartsource.ReconcileStrategy(hc.Spec.ReconcileStrategy), ChartRef: &ref,
		Artifact: &chartsource.Artifact{Revision: artifact.Revision, SourceRevision: hc.Status.ObservedSourceArtifactRevision},
	}
	ns := ref.Namespace
	sref := chartsource.ChartRef{Kind: hc.Spec.SourceRef.Kind, Name: hc.Spec.SourceRef.Name, Namespace: ns}
	// Cosign and notation sign OCI manifests: a chart of another source
	// cannot be verified, and a verification is never skipped silently
	// (source-controller fails such a HelmChart, or an older CRD lets one
	// of Git or a bucket through unverified).
	verifyRefused := func() error {
		return refError(ref, "its spec.verify applies to charts of an OCI HelmRepository only, and its source is the %s %s: remove spec.verify, or publish the chart to an OCI registry and sign it", sref.Kind, sref.Name)
	}
	if hc.Spec.Verify != nil && sref.Kind != sourcev1.HelmRepositoryKind {
		return src, verifyRefused()
	}
	var err error
	switch sref.Kind {
	case sourcev1.HelmRepositoryKind:
		err = e.helmRepositoryChart(ctx, ref, sref, hc, &src, verifyRefused)
	case sourcev1.GitRepositoryKind:
		err = e.gitRepositoryChart(ctx, sref, hc, &src)
	case sourcev1.BucketKind:
		err = e.bucketChart(ctx, sref, hc, &src)
	default:
		return src, refError(ref, "its source is a %s: the provider reads charts from a HelmRepository, GitRepository or Bucket", sref.Kind)
	}
	if err != nil {
		return src, err
	}
	if src.Git != nil || src.Bucket != nil {
		// source-controller reads these from the source's root.
		if src.ValuesFiles, err = chartValuesFiles(hc.Spec.Chart, hc.Spec.ValuesFiles); err != nil {
			return src, refError(ref, "%s", err)
		}
	}
	return src, nil
}

// helmRepositoryChart completes src, the source of a HelmChart of a
// HelmRepository (sref): its URL, the version built, credentials and,
// for an OCI repository, the HelmChart's verification. verifyRefused,
// when the HelmChart verifies, refuses a repository that is not OCI.
func (e *Client) helmRepositoryChart(ctx context.Context, ref, sref chartsource.ChartRef, hc *sourcev1.HelmChart, src *chartsource.Source, verifyRefused func() error) error {
	artifact, ns := hc.Status.Artifact, sref.Namespace
	var err error
	repo := &sourcev1.HelmRepository{}
	if err := e.getRef(ctx, sref, repo); err != nil {
		return err
	}
	s := repo.Spec
	oci := s.Type == sourcev1.HelmRepositoryTypeOCI
	if hc.Spec.Verify != nil && !oci {
		return verifyRefused()
	}
	if err := unsupported(sref, []setField{
		{"spec.provider " + s.Provider, s.Provider != "" && s.Provider != sourcev1.GenericOCIProvider},
	}); err != nil {
		return err
	}
	src.Repository = s.URL
	if oci && !strings.HasPrefix(src.Repository, "oci://") {
		src.Repository = "oci://" + src.Repository
	}
	// The version the HelmChart built: without the generation
	// source-controller appends when it merges values files.
	src.Version = artifact.Revision
	if len(hc.Spec.ValuesFiles) > 0 {
		src.Version, _, _ = strings.Cut(src.Version, "+")
	}
	src.Version = "=" + src.Version
	if len(hc.Spec.ValuesFiles) == 0 {
		// source-controller stores the archive as downloaded: from an
		// OCI repository, the chart layer of the manifest the tag named
		// then, which a tag pushed again since no longer names.
		src.Artifact.Digest = artifact.Digest
	}
	if src.Auth, err = e.refAuth(ctx, sref, ns, s.SecretRef, s.CertSecretRef, registryHost(src.Repository)); err != nil {
		return err
	}
	src.Auth.PassCredentials = s.PassCredentials
	src.Auth.PlainHTTP = oci && s.Insecure
	if oci {
		// As source-controller: the HelmChart's spec.verify, checked
		// against the manifest of the version it built.
		if src.Verify, err = e.helmChartVerification(ctx, ref, hc.Spec.Verify); err != nil {
			return err
		}
	}
	return nil
}

// gitRepositoryChart completes src, the source of a HelmChart of a
// GitRepository (sref): its URL, reference, the revision built and
// credentials.
func (e *Client) gitRepositoryChart(ctx context.Context, sref chartsource.ChartRef, hc *sourcev1.HelmChart, src *chartsource.Source) error {
	ns := sref.Namespace
	repo := &sourcev1.GitRepository{}
	if err := e.getRef(ctx, sref, repo); err != nil {
		return err
	}
	s := repo.Spec
	if err := unsupported(sref, []setField{
		{"spec.provider " + s.Provider, s.Provider != "" && s.Provider != sourcev1.GitProviderGeneric},
		{"spec.serviceAccountName", s.ServiceAccountName != ""},
		{"spec.proxySecretRef", s.ProxySecretRef != nil},
		{"spec.recurseSubmodules", s.RecurseSubmodules},
		{"spec.include", len(s.Include) > 0},
	}); err != nil {
		return err
	}
	g := &chartsource.Git{URL: s.URL, Pinned: hc.Status.ObservedSourceArtifactRevision}
	if r := s.Reference; r != nil {
		g.Ref = chartsource.GitRef{Branch: r.Branch, Tag: r.Tag, SemVer: r.SemVer, Name: r.Name, Commit: r.Commit}
	}
	if s.SecretRef != nil {
		data, err := e.secretData(ctx, sref, ns, s.SecretRef.Name)
		if err != nil {
			return err
		}
		src.Auth = chartsource.Auth{Username: data["username"], Password: data["password"], CAPEM: data["ca.crt"], CertPEM: data["tls.crt"], KeyPEM: data["tls.key"]}
		if src.Auth.CAPEM == "" {
			src.Auth.CAPEM = data["caFile"]
		}
		g.Identity, g.KnownHosts = data["identity"], data["known_hosts"]
	}
	src.Git = g
	return nil
}

// bucketChart completes src, the source of a HelmChart of a Bucket
// (sref): its endpoint and bucket, the revision built and credentials.
func (e *Client) bucketChart(ctx context.Context, sref chartsource.ChartRef, hc *sourcev1.HelmChart, src *chartsource.Source) error {
	ns := sref.Namespace
	var err error
	b := &sourcev1.Bucket{}
	if err := e.getRef(ctx, sref, b); err != nil {
		return err
	}
	s := b.Spec
	if err := unsupported(sref, []setField{
		{"spec.provider " + s.Provider, s.Provider != "" && s.Provider != sourcev1.BucketProviderGeneric && s.Provider != sourcev1.BucketProviderAmazon},
		{"spec.sts", s.STS != nil},
		{"spec.proxySecretRef", s.ProxySecretRef != nil},
	}); err != nil {
		return err
	}
	src.Bucket = &chartsource.Bucket{Endpoint: s.Endpoint, BucketName: s.BucketName, Prefix: s.Prefix, Region: s.Region, Provider: s.Provider, Insecure: s.Insecure,
		Pinned: hc.Status.ObservedSourceArtifactRevision}
	if src.Auth, err = e.refAuth(ctx, sref, ns, nil, s.CertSecretRef, ""); err != nil {
		return err
	}
	if s.SecretRef != nil {
		data, err := e.secretData(ctx, sref, ns, s.SecretRef.Name)
		if err != nil {
			return err
		}
		src.Auth.Username, src.Auth.Password = data["accesskey"], data["secretkey"]
	}
	return nil
}

// getRef reads the object ref names into obj.
func (e *Client) getRef(ctx context.Context, ref chartsource.ChartRef, obj client.Object) error {
	err := e.Kube.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, obj)
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		return refError(ref, "it does not exist")
	case apimeta.IsNoMatchError(err):
		return refError(ref, "the cluster does not serve the kind: install Flux's source-controller")
	}
	return fmt.Errorf("%w: reading %s: %w", chartsource.ErrChartRef, ref, err)
}

// readyRef refuses an object source-controller has not made Ready at its
// generation, saying why, as helm-controller waits for one.
func readyRef(ref chartsource.ChartRef, generation, observed int64, conditions []metav1.Condition, artifact *meta.Artifact) error {
	ready := apimeta.FindStatusCondition(conditions, meta.ReadyCondition)
	switch {
	case ready != nil && ready.Status != metav1.ConditionTrue:
		// First: a failed reconcile leaves observedGeneration behind.
		return refError(ref, "it is not Ready (%s): %s", ready.Reason, ready.Message)
	case observed != generation:
		return refError(ref, "source-controller has not reconciled its generation %d yet", generation)
	case ready == nil:
		return refError(ref, "source-controller has not reconciled it yet (no Ready condition)")
	case artifact == nil:
		return refError(ref, "it has no artifact yet")
	}
	return nil
}

// unsupported refuses the first field set of ref's object that the
// provider cannot follow from outside the cluster.
func unsupported(ref chartsource.ChartRef, fields []setField) error {
	for _, f := range fields {
		if f.set {
			return refError(ref, "%s is not supported: the provider fetches the chart itself, with the object's URL and Secrets", f.name)
		}
	}
	return nil
}

// setField is a field of a source object's spec, and whether it is set.
type setField struct {
	name string
	set  bool
}

// refAuth is the credentials of a source's secretRef (user name and
// password, or for an OCI registry a Docker config's login for host) and
// certSecretRef (ca.crt, tls.crt, tls.key).
func (e *Client) refAuth(ctx context.Context, ref chartsource.ChartRef, namespace string, secretRef, certSecretRef *meta.LocalObjectReference, host string) (chartsource.Auth, error) {
	var auth chartsource.Auth
	if secretRef != nil {
		data, err := e.secretData(ctx, ref, namespace, secretRef.Name)
		if err != nil {
			return auth, err
		}
		auth.Username, auth.Password = data["username"], data["password"]
		if cfg := data[corev1.DockerConfigJsonKey]; cfg != "" && auth.Username == "" {
			if auth.Username, auth.Password, err = dockerLogin(cfg, host); err != nil {
				return auth, refError(ref, "Secret %s/%s: %s", namespace, secretRef.Name, err)
			}
		}
	}
	if certSecretRef != nil {
		data, err := e.secretData(ctx, ref, namespace, certSecretRef.Name)
		if err != nil {
			return auth, err
		}
		auth.CAPEM, auth.CertPEM, auth.KeyPEM = data["ca.crt"], data[corev1.TLSCertKey], data[corev1.TLSPrivateKeyKey]
	}
	return auth, nil
}

// secretData reads a Secret a source names. Its values are never part of
// an error.
func (e *Client) secretData(ctx context.Context, ref chartsource.ChartRef, namespace, name string) (map[string]string, error) {
	s := &corev1.Secret{}
	if err := e.Kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, refError(ref, "its Secret %s/%s does not exist", namespace, name)
		}
		return nil, fmt.Errorf("%w: reading the Secret %s/%s of %s: %w", chartsource.ErrChartRef, namespace, name, ref, err)
	}
	out := make(map[string]string, len(s.Data))
	for k, v := range s.Data {
		out[k] = string(v)
	}
	for k, v := range s.StringData {
		out[k] = v
	}
	return out, nil
}

// dockerLogin is the user name and password a Docker config JSON holds
// for host.
func dockerLogin(config, host string) (username, password string, err error) {
	var cfg struct {
		Auths map[string]struct {
			Username string `json:"username"`
			Password string `json:"password"`
			Auth     []byte `json:"auth"`
		} `json:"auths"`
	}
	if json.Unmarshal([]byte(config), &cfg) != nil {
		return "", "", fmt.Errorf("%s is not a Docker config", corev1.DockerConfigJsonKey)
	}
	for h, a := range cfg.Auths {
		if h != host && registryHost(h) != host {
			continue
		}
		if a.Username != "" || a.Password != "" {
			return a.Username, a.Password, nil
		}
		user, pass, ok := strings.Cut(string(a.Auth), ":")
		if !ok {
			return "", "", fmt.Errorf("the login for %s has no user name and password", host)
		}
		return user, pass, nil
	}
	return "", "", fmt.Errorf("%s holds no login for %s", corev1.DockerConfigJsonKey, host)
}

// registryHost is the host[:port] of a registry URL or reference.
func registryHost(s string) string {
	if u, err := url.Parse(s); err == nil && u.Host != "" {
		return u.Host
	}
	host, _, _ := strings.Cut(s, "/")
	return host
}

// refError is an error about the object ref names, marked
// chartsource.ErrChartRef.
func refError(ref chartsource.ChartRef, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", chartsource.ErrChartRef, ref, fmt.Sprintf(format, args...))
}
