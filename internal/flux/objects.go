package flux

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/fluxcd/pkg/apis/meta"
	fluxchartutil "github.com/fluxcd/pkg/chartutil"
	"github.com/fluxcd/pkg/git"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/opencontainers/go-digest"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/postrender"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/values"
)

// Labels and annotations of the objects the provider writes.
const (
	// ManagedByLabel marks every object written for a release; its value is
	// ManagedBy.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedBy      = "terraform-provider-helmrelease"
	// ReleaseLabel names the HelmRelease an auxiliary object (source,
	// Secret) was written for.
	ReleaseLabel = "helmrelease.terraform.io/helmrelease"
	// SharedLabel marks a HelmRepository, and its credentials Secret,
	// that the releases of a namespace share: each release using it is
	// one of its owner references.
	SharedLabel = "helmrelease.terraform.io/shared-source"

	// RequestedAtAnnotation asks the controller to reconcile now; it
	// records the token handled in status.lastHandledReconcileAt.
	RequestedAtAnnotation = "reconcile.fluxcd.io/requestedAt"
	// ForceAtAnnotation and ResetAtAnnotation are acted on together with
	// a RequestedAtAnnotation of the same value.
	ForceAtAnnotation = "reconcile.fluxcd.io/forceAt"
	ResetAtAnnotation = "reconcile.fluxcd.io/resetAt"
	// PlannedVersionAnnotation names the chart version the plan resolved,
	// on a HelmRelease whose chart has values files: source-controller
	// versions that build by its HelmChart's generation, the plan by the
	// files' digest (AsPlanned).
	PlannedVersionAnnotation = "helmrelease.terraform.io/planned-chart-version"

	// ValuesKey is the key of the values Secret's values document.
	ValuesKey = "values.yaml"

	// helmChartLayer is the media type of a Helm chart's content layer.
	helmChartLayer = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
)

// DefaultInterval is spec.interval when none is set: how often the
// controller checks the release between Terraform runs.
const DefaultInterval = 10 * time.Minute

// Chart is the chart of a release as the plan resolved it.
type Chart struct {
	// Source is the chart as configured: a Helm repository (http, https)
	// or an OCI registry, with its credentials.
	Source chartsource.Source
	// Version is the resolved revision (chart version, with the OCI
	// manifest digest as build metadata for OCI charts).
	Version string
	// Digest is the OCI manifest digest (OCI charts).
	Digest string
	// SourceRevision is the Git revision the plan resolved
	// ("main@sha1:<hash>"), which the GitRepository is pinned to.
	SourceRevision string
}

// Release is everything one release is made of in the cluster.
type Release struct {
	Spec  *reconcile.Spec
	Chart Chart
	// Values are the inline values (spec.values); SensitiveValues go to a
	// Secret referenced last in spec.valuesFrom.
	Values          map[string]any
	SensitiveValues map[string]any
	// ValuesFrom are the configuration's references, in order.
	ValuesFrom []values.Reference
	// KubeConfig is spec.kubeConfig.secretRef when set.
	KubeConfig *meta.SecretKeyReference
	// Interval is spec.interval; zero is DefaultInterval.
	Interval time.Duration
	Suspend  bool
	// RequestedAt is the reconcile request token, empty for none.
	RequestedAt string
	// PostRenderStrategy is spec.postRenderStrategy, written when set: only
	// a CRD of helm-controller v1.6 or later declares it (earlier
	// controllers post-render no hook), whose own default (combined) is
	// not what a plan renders unless asked.
	PostRenderStrategy reconcile.PostRenderStrategy
	// DependsOn is spec.dependsOn: HelmReleases that must be ready first.
	DependsOn []meta.DependencyReference
	// ChartNameChangeStrategy is spec.upgrade.chartNameChangeStrategy,
	// written when set (helm-controller v1.6 or later).
	ChartNameChangeStrategy reconcile.ChartNameChangeStrategy
	// VerifySecret, when set, is the Secret of the release's namespace
	// holding the keys of Chart.Source.Verify, named by the
	// OCIRepository's spec.verify.secretRef instead of a Secret written
	// with the keys given.
	VerifySecret string
}

// Objects are the objects of a release, in the order they are applied.
type Objects struct {
	// Credentials of the chart source (username/password, TLS), or nil.
	Credentials *corev1.Secret
	// Source is the HelmRepository, OCIRepository, GitRepository or Bucket
	// of the chart.
	Source client.Object
	// Chart is the HelmChart shared by the namespace's releases of the
	// same chart, version and values files from a shared HelmRepository,
	// which spec.chartRef names; nil for other sources.
	Chart client.Object
	// Shared is set when Source and Credentials (and Chart) are shared with the other
	// releases of the namespace that use the same Helm repository, login,
	// TLS files and interval (a HelmRepository); an OCIRepository is the
	// release's own, pinned to the digest its plan resolved, and a
	// GitRepository to the commit.
	Shared bool
	// Verification holds the keys, certificates, trust policy or trusted
	// root of the OCIRepository's spec.verify, or nil.
	Verification *corev1.Secret
	// Values holds the sensitive values, or nil.
	Values      *corev1.Secret
	HelmRelease *helmv2.HelmRelease
}

// List is the objects that exist, in the order they are applied.
func (o *Objects) List() []client.Object {
	var out []client.Object
	if o.Credentials != nil {
		out = append(out, o.Credentials)
	}
	if o.Verification != nil {
		out = append(out, o.Verification)
	}
	if o.Source != nil {
		out = append(out, o.Source)
	}
	if o.Chart != nil {
		out = append(out, o.Chart)
	}
	if o.Values != nil {
		out = append(out, o.Values)
	}
	return append(out, o.HelmRelease)
}

// sharedObjects are the shared source and its credentials, when shared.
func (o *Objects) sharedObjects() []client.Object {
	if !o.Shared {
		return nil
	}
	var out []client.Object
	for _, obj := range []client.Object{o.Credentials, o.Source, o.Chart} {
		if obj != nil && !reflect.ValueOf(obj).IsNil() {
			out = append(out, obj)
		}
	}
	return out
}

// shared reports whether obj is the shared source or its credentials.
func (o *Objects) shared(obj client.Object) bool {
	return slices.Contains(o.sharedObjects(), obj)
}

// CredentialsName, ValuesName and SourceName name the objects written for
// the HelmRelease name (in its namespace).
func CredentialsName(name string) string { return name + "-chart-credentials" }
func ValuesName(name string) string      { return name + "-sensitive-values" }
func SourceName(name string) string      { return name }

// VerificationName names the Secret of an OCIRepository's spec.verify
// written for the HelmRelease name.
func VerificationName(name string) string { return name + "-chart-verification" }

// SharedCredentialsName names the credentials Secret of a shared source.
func SharedCredentialsName(source string) string { return source + "-credentials" }

// sharedSourceName names the HelmRepository shared by the releases whose
// source has the same URL, login (username; a rotated password is the
// same login), TLS files and interval: the repository's host, readable in
// kubectl get, and a digest of all of it.
func sharedSourceName(src chartsource.Source, credentials *corev1.Secret, interval time.Duration) string {
	h := sha256.New()
	for _, part := range []string{src.Repository, src.Auth.Username, strconv.FormatBool(src.Auth.PassCredentials), interval.String()} {
		fmt.Fprintf(h, "%d:%s;", len(part), part)
	}
	if credentials != nil {
		for _, key := range []string{"ca.crt", corev1.TLSCertKey, corev1.TLSPrivateKeyKey} {
			fmt.Fprintf(h, "%d:%s;", len(credentials.Data[key]), credentials.Data[key])
		}
	}
	host := "helm-repository"
	if u, err := url.Parse(src.Repository); err == nil && u.Hostname() != "" {
		host = strings.Trim(dnsUnsafe.ReplaceAllString(strings.ToLower(u.Hostname()), "-"), "-")
	}
	const digestLen = 10
	if max := 63 - digestLen - 1; len(host) > max {
		host = strings.TrimRight(host[:max], "-")
	}
	return host + "-" + hex.EncodeToString(h.Sum(nil))[:digestLen]
}

// sharedChartName names the HelmChart shared by the releases of the same
// chart, version, values files, strategy, repository and interval: the
// chart's name, readable in kubectl get, and a digest of all of it.
func sharedChartName(spec sourcev1.HelmChartSpec) string {
	h := sha256.New()
	for _, part := range []string{spec.SourceRef.Name, spec.Chart, spec.Version, spec.ReconcileStrategy, strings.Join(spec.ValuesFiles, "\x00"),
		strconv.FormatBool(spec.IgnoreMissingValuesFiles), spec.Interval.Duration.String()} {
		fmt.Fprintf(h, "%d:%s;", len(part), part)
	}
	name := strings.Trim(dnsUnsafe.ReplaceAllString(strings.ToLower(spec.Chart), "-"), "-")
	if name == "" {
		name = "chart"
	}
	const digestLen = 10
	if max := 63 - digestLen - 1; len(name) > max {
		name = strings.TrimRight(name[:max], "-")
	}
	return name + "-" + hex.EncodeToString(h.Sum(nil))[:digestLen]
}

// dnsUnsafe is what a DNS label may not hold.
var dnsUnsafe = regexp.MustCompile(`[^a-z0-9-]+`)

// Build returns the objects of r.
func Build(r *Release) (*Objects, error) {
	s := r.Spec
	src := r.Chart.Source
	interval := r.Interval
	if interval == 0 {
		interval = DefaultInterval
	}
	labels := map[string]string{ManagedByLabel: ManagedBy, ReleaseLabel: s.Name}
	objectMeta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: s.Namespace, Labels: labels}
	}
	hr := &helmv2.HelmRelease{
		TypeMeta:   metav1.TypeMeta{APIVersion: helmv2.GroupVersion.String(), Kind: helmv2.HelmReleaseKind},
		ObjectMeta: objectMeta(s.Name),
	}
	hr.Labels = map[string]string{ManagedByLabel: ManagedBy}
	hr.Spec.PostRenderStrategy = helmv2.PostRenderStrategy(r.PostRenderStrategy)
	if ref := src.ChartRef; ref != nil {
		// The chart is the artifact of an object managed elsewhere: the
		// HelmRelease names it, and no source is written.
		hr.Spec.ChartRef = &helmv2.CrossNamespaceSourceReference{Kind: ref.Kind, Name: ref.Name}
		if ref.Namespace != s.Namespace {
			hr.Spec.ChartRef.Namespace = ref.Namespace
		}
		out := &Objects{}
		if err := release(r, out, hr, objectMeta, interval); err != nil {
			return nil, err
		}
		return out, nil
	}
	if src.Repository == "" && src.Git == nil && src.Bucket == nil {
		return nil, errors.New("a local chart cannot be handed to Flux: the controller reads charts from a Helm repository, an OCI registry, Git or a bucket")
	}
	out := &Objects{Shared: src.Git == nil && src.Bucket == nil && !chartsource.IsOCI(src.Repository)}
	credentials, err := credentialsSecret(src, objectMeta(CredentialsName(s.Name)))
	if err != nil {
		return nil, err
	}
	sourceName := SourceName(s.Name)
	if out.Shared {
		sourceName = sharedSourceName(src, credentials, interval)
		shared := metav1.ObjectMeta{Name: sourceName, Namespace: s.Namespace, Labels: map[string]string{ManagedByLabel: ManagedBy, SharedLabel: "true"}}
		if credentials != nil {
			credentials.ObjectMeta = shared
			credentials.Name = SharedCredentialsName(sourceName)
		}
		objectMeta = func(name string) metav1.ObjectMeta {
			if name == sourceName {
				return shared
			}
			return metav1.ObjectMeta{Name: name, Namespace: s.Namespace, Labels: labels}
		}
	}
	out.Credentials = credentials
	version, _, _ := strings.Cut(r.Chart.Version, "+")
	sources := sourceBuild{r: r, out: out, hr: hr, objectMeta: objectMeta, credentials: credentials, interval: interval, version: version, sourceName: sourceName}
	switch {
	case src.Git != nil:
		sources.gitRepository()
	case src.Bucket != nil:
		sources.bucket()
	case chartsource.IsOCI(src.Repository):
		sources.ociRepository()
	default:
		sources.helmRepository()
	}
	if err := release(r, out, hr, objectMeta, interval); err != nil {
		return nil, err
	}
	return out, nil
}

// sourceBuild is what Build writes a release's chart source with: the
// release, the objects so far and its HelmRelease, how the objects of a
// name are labelled, the credentials Secret (nil for none), the interval,
// the chart version without build metadata, and the name of a shared
// source.
type sourceBuild struct {
	r           *Release
	out         *Objects
	hr          *helmv2.HelmRelease
	objectMeta  func(string) metav1.ObjectMeta
	credentials *corev1.Secret
	interval    time.Duration
	version     string
	sourceName  string
}

// gitRepository writes a GitRepository of the release's own, at the
// revision the plan resolved.
func (sb sourceBuild) gitRepository() {
	r, out, hr, objectMeta, credentials, interval := sb.r, sb.out, sb.hr, sb.objectMeta, sb.credentials, sb.interval
	src, s := r.Chart.Source, r.Spec
	repo := &sourcev1.GitRepository{
		TypeMeta:   metav1.TypeMeta{APIVersion: sourcev1.GroupVersion.String(), Kind: sourcev1.GitRepositoryKind},
		ObjectMeta: objectMeta(SourceName(s.Name)),
		Spec: sourcev1.GitRepositorySpec{
			URL:       src.Git.URL,
			Reference: gitReference(src.Git.Ref, r.Chart.SourceRevision),
			Interval:  metav1.Duration{Duration: interval},
		},
	}
	if credentials != nil {
		repo.Spec.SecretRef = &meta.LocalObjectReference{Name: credentials.Name}
	}
	out.Source = repo
	hr.Spec.Chart = chartTemplate(src, sourcev1.GitRepositoryKind, repo.Name)
}

// bucket writes a Bucket of the release's own.
func (sb sourceBuild) bucket() {
	r, out, hr, objectMeta, credentials, interval := sb.r, sb.out, sb.hr, sb.objectMeta, sb.credentials, sb.interval
	src, s := r.Chart.Source, r.Spec
	b := src.Bucket
	bucket := &sourcev1.Bucket{
		TypeMeta:   metav1.TypeMeta{APIVersion: sourcev1.GroupVersion.String(), Kind: sourcev1.BucketKind},
		ObjectMeta: objectMeta(SourceName(s.Name)),
		Spec: sourcev1.BucketSpec{
			Provider: b.Provider, BucketName: b.BucketName, Endpoint: b.Endpoint, Insecure: b.Insecure,
			Region: b.Region, Prefix: b.Prefix, Interval: metav1.Duration{Duration: interval},
		},
	}
	if credentials != nil {
		if credentials.Data["accesskey"] != nil {
			bucket.Spec.SecretRef = &meta.LocalObjectReference{Name: credentials.Name}
		}
		if credentials.Data[corev1.TLSCertKey] != nil || credentials.Data["ca.crt"] != nil {
			bucket.Spec.CertSecretRef = &meta.LocalObjectReference{Name: credentials.Name}
		}
	}
	if r.RequestedAt != "" {
		// source-controller lists the bucket at its interval: asked
		// now, it builds the planned objects (flux reconcile source
		// bucket does the same).
		bucket.Annotations = map[string]string{RequestedAtAnnotation: r.RequestedAt}
	}
	out.Source = bucket
	hr.Spec.Chart = chartTemplate(src, sourcev1.BucketKind, bucket.Name)
}

// ociRepository writes an OCIRepository of the release's own, at the
// version and digest the plan resolved, with its verification.
func (sb sourceBuild) ociRepository() {
	r, out, hr, objectMeta, credentials, interval := sb.r, sb.out, sb.hr, sb.objectMeta, sb.credentials, sb.interval
	src, s := r.Chart.Source, r.Spec
	repo := &sourcev1.OCIRepository{
		TypeMeta:   metav1.TypeMeta{APIVersion: sourcev1.GroupVersion.String(), Kind: sourcev1.OCIRepositoryKind},
		ObjectMeta: objectMeta(SourceName(s.Name)),
		Spec: sourcev1.OCIRepositorySpec{
			URL:           strings.TrimSuffix(src.Repository, "/") + "/" + src.Name,
			Reference:     &sourcev1.OCIRepositoryRef{Tag: sb.version, Digest: r.Chart.Digest},
			LayerSelector: &sourcev1.OCILayerSelector{MediaType: helmChartLayer, Operation: sourcev1.OCILayerCopy},
			Interval:      &metav1.Duration{Duration: interval},
			Insecure:      src.Auth.PlainHTTP,
		},
	}
	if credentials != nil {
		if credentials.Data[corev1.DockerConfigJsonKey] != nil {
			repo.Spec.SecretRef = &meta.LocalObjectReference{Name: credentials.Name}
		}
		if credentials.Data[corev1.TLSCertKey] != nil || credentials.Data["ca.crt"] != nil {
			repo.Spec.CertSecretRef = &meta.LocalObjectReference{Name: credentials.Name}
		}
	}
	if src.Verify != nil {
		repo.Spec.Verify, out.Verification = ociVerify(src.Verify, r.VerifySecret, objectMeta(VerificationName(s.Name)))
	}
	out.Source = repo
	hr.Spec.ChartRef = &helmv2.CrossNamespaceSourceReference{Kind: sourcev1.OCIRepositoryKind, Name: repo.Name}
}

// helmRepository writes the namespace's shared HelmRepository of the
// URL and credentials, and the shared HelmChart of the chart, version and
// values files.
func (sb sourceBuild) helmRepository() {
	r, out, hr, objectMeta, credentials, interval := sb.r, sb.out, sb.hr, sb.objectMeta, sb.credentials, sb.interval
	src := r.Chart.Source
	repo := &sourcev1.HelmRepository{
		TypeMeta:   metav1.TypeMeta{APIVersion: sourcev1.GroupVersion.String(), Kind: sourcev1.HelmRepositoryKind},
		ObjectMeta: objectMeta(sb.sourceName),
		Spec: sourcev1.HelmRepositorySpec{
			URL:             src.Repository,
			PassCredentials: src.Auth.PassCredentials,
			Interval:        metav1.Duration{Duration: interval},
		},
	}
	if r.RequestedAt != "" {
		// source-controller fetches the index at its interval: asked
		// now, it has the version the plan resolved (a HelmChart of a
		// version its index lacks stalls). Run asks only for a version
		// whose shared HelmChart is not built (indexRequest).
		repo.Annotations = map[string]string{RequestedAtAnnotation: r.RequestedAt}
	}
	if credentials != nil {
		if credentials.Data["username"] != nil {
			repo.Spec.SecretRef = &meta.LocalObjectReference{Name: credentials.Name}
		}
		if credentials.Data[corev1.TLSCertKey] != nil || credentials.Data["ca.crt"] != nil {
			repo.Spec.CertSecretRef = &meta.LocalObjectReference{Name: credentials.Name}
		}
	}
	out.Source = repo
	// One HelmChart for the namespace's releases of the same chart,
	// sb.version and values files: source-controller builds it once,
	// instead of once per release from the same index.
	chart := &sourcev1.HelmChart{
		TypeMeta:   metav1.TypeMeta{APIVersion: sourcev1.GroupVersion.String(), Kind: sourcev1.HelmChartKind},
		ObjectMeta: objectMeta(sb.sourceName),
		Spec: sourcev1.HelmChartSpec{
			Chart:                    src.Name,
			Version:                  sb.version,
			SourceRef:                sourcev1.LocalHelmChartSourceReference{Kind: sourcev1.HelmRepositoryKind, Name: repo.Name},
			Interval:                 metav1.Duration{Duration: interval},
			ReconcileStrategy:        string(src.ReconcileStrategy),
			ValuesFiles:              src.ValuesFiles,
			IgnoreMissingValuesFiles: src.IgnoreMissingValuesFiles,
		},
	}
	chart.Name = sharedChartName(chart.Spec)
	out.Chart = chart
	hr.Spec.ChartRef = &helmv2.CrossNamespaceSourceReference{Kind: sourcev1.HelmChartKind, Name: chart.Name}
}

// release completes hr, the HelmRelease of r, and puts it and its values
// Secret into out.
func release(r *Release, out *Objects, hr *helmv2.HelmRelease, objectMeta func(string) metav1.ObjectMeta, interval time.Duration) error {
	s := r.Spec
	hr.Spec.Interval = metav1.Duration{Duration: interval}
	hr.Spec.KubeConfig = kubeConfigRef(r.KubeConfig)
	hr.Spec.Suspend = r.Suspend
	hr.Spec.DependsOn = r.DependsOn
	hr.Spec.ReleaseName = s.ReleaseName
	hr.Spec.TargetNamespace = s.TargetNamespace
	hr.Spec.StorageNamespace = s.StorageNamespace
	hr.Spec.Timeout = duration(s.Timeout)
	hr.Spec.MaxHistory = s.MaxHistory
	hr.Spec.ServiceAccountName = s.ServiceAccountName
	if s.PersistentClient {
		t := true
		hr.Spec.PersistentClient = &t
	}
	if s.WaitStrategy != "" || len(s.HealthChecks) > 0 {
		// Explicit: the controller's default depends on a feature gate.
		hr.Spec.WaitStrategy = &helmv2.WaitStrategy{Name: helmv2.WaitStrategyName(s.GetWaitStrategy())}
	}
	hr.Spec.HealthCheckExprs = s.HealthChecks
	hr.Spec.Install = install(s.Install)
	hr.Spec.Upgrade = upgrade(s.Upgrade, r.ChartNameChangeStrategy)
	hr.Spec.Test = test(s.Test)
	hr.Spec.Rollback = rollback(s.Rollback)
	hr.Spec.Uninstall = uninstall(s.Uninstall)
	hr.Spec.DriftDetection = drift(s.Drift)
	hr.Spec.PostRenderers = postRenderers(s.PostRenderers)
	if len(s.CommonMetadata.Labels)+len(s.CommonMetadata.Annotations) > 0 {
		hr.Spec.CommonMetadata = &helmv2.CommonMetadata{Labels: s.CommonMetadata.Labels, Annotations: s.CommonMetadata.Annotations}
	}
	for _, ref := range r.ValuesFrom {
		hr.Spec.ValuesFrom = append(hr.Spec.ValuesFrom, helmv2.ValuesReference{
			Kind: ref.Kind, Name: ref.Name, ValuesKey: ref.ValuesKey, TargetPath: ref.TargetPath, Optional: ref.Optional, Literal: ref.Literal,
		})
	}
	inline := r.Values
	if len(r.SensitiveValues) > 0 {
		doc, err := yaml.Marshal(r.SensitiveValues)
		if err != nil {
			return fmt.Errorf("encoding the sensitive values: %w", err)
		}
		secret := &corev1.Secret{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: objectMeta(ValuesName(s.Name)),
			Type:       corev1.SecretTypeOpaque,
			Data:       map[string][]byte{ValuesKey: doc},
		}
		out.Values = secret
		hr.Spec.ValuesFrom = append(hr.Spec.ValuesFrom, helmv2.ValuesReference{Kind: "Secret", Name: secret.Name, ValuesKey: ValuesKey})
		// The controller merges spec.values over valuesFrom; the provider
		// merges sensitive values over inline ones: what they set is left
		// out of spec.values, so that both compose the same values.
		inline = without(inline, r.SensitiveValues)
	}
	if len(inline) > 0 {
		b, err := json.Marshal(inline)
		if err != nil {
			return fmt.Errorf("encoding the values: %w", err)
		}
		hr.Spec.Values = &apiextensionsv1.JSON{Raw: b}
	}
	annotations := map[string]string{}
	if r.RequestedAt != "" {
		annotations[RequestedAtAnnotation] = r.RequestedAt
	}
	if s.ForceAt != "" {
		annotations[ForceAtAnnotation] = s.ForceAt
	}
	if s.ResetAt != "" {
		annotations[ResetAtAnnotation] = s.ResetAt
	}
	if len(r.Chart.Source.ValuesFiles) > 0 && r.Chart.Source.ChartRef == nil && r.Chart.Version != "" {
		annotations[PlannedVersionAnnotation] = r.Chart.Version
	}
	if len(annotations) > 0 {
		hr.Annotations = annotations
	}
	out.HelmRelease = hr
	return nil
}

// credentialsSecret is the Secret of a source's credentials and TLS
// files, read now from the Terraform machine; nil when there are none.
func credentialsSecret(src chartsource.Source, m metav1.ObjectMeta) (*corev1.Secret, error) {
	data := map[string][]byte{}
	secretType := corev1.SecretTypeOpaque
	switch {
	case src.Git != nil:
		// GitRepository's secretRef keys (fluxcd/pkg/git NewAuthOptions).
		for key, value := range map[string]string{"username": src.Auth.Username, "password": src.Auth.Password, "identity": src.Git.Identity, "known_hosts": src.Git.KnownHosts} {
			if value != "" {
				data[key] = []byte(value)
			}
		}
	case src.Bucket != nil:
		// Bucket's secretRef keys: a static key pair, or none.
		if src.Auth.Username != "" || src.Auth.Password != "" {
			data["accesskey"], data["secretkey"] = []byte(src.Auth.Username), []byte(src.Auth.Password)
		}
	case src.Auth.Username == "" && src.Auth.Password == "":
	case chartsource.IsOCI(src.Repository):
		// OCIRepository reads a registry login as Docker's config.
		host, _, _ := strings.Cut(strings.TrimPrefix(src.Repository, "oci://"), "/")
		login := src.Auth.Username + ":" + src.Auth.Password
		config, err := json.Marshal(map[string]any{"auths": map[string]any{host: map[string]string{
			"username": src.Auth.Username, "password": src.Auth.Password, "auth": base64.StdEncoding.EncodeToString([]byte(login)),
		}}})
		if err != nil {
			return nil, fmt.Errorf("encoding the registry login: %w", err)
		}
		data[corev1.DockerConfigJsonKey] = config
		secretType = corev1.SecretTypeDockerConfigJson
	default:
		data["username"], data["password"] = []byte(src.Auth.Username), []byte(src.Auth.Password)
	}
	for key, file := range map[string]string{"ca.crt": src.Auth.CAFile, corev1.TLSCertKey: src.Auth.CertFile, corev1.TLSPrivateKeyKey: src.Auth.KeyFile} {
		if file == "" {
			continue
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("reading the chart repository's TLS file: %w", err)
		}
		data[key] = b
	}
	if len(data) == 0 {
		return nil, nil
	}
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: m,
		Type:       secretType,
		Data:       data,
	}, nil
}

// chartTemplate is the HelmRelease's chart template of a chart at the
// path src.Name of the source kind/name (a GitRepository, a Bucket).
func chartTemplate(src chartsource.Source, kind, name string) *helmv2.HelmChartTemplate {
	return &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{
		Chart:                    src.Name,
		SourceRef:                &helmv2.CrossNamespaceObjectReference{Kind: kind, Name: name},
		ReconcileStrategy:        string(src.ReconcileStrategy),
		ValuesFiles:              rootValuesFiles(src.Name, src.ValuesFiles),
		IgnoreMissingValuesFiles: src.IgnoreMissingValuesFiles,
	}}
}

// rootValuesFiles names files, values files of the chart at chartPath
// named relative to the chart's directory (as chart.values_files names
// them, for every source), relative to the root of the Git repository
// or bucket holding it: source-controller reads the valuesFiles of a
// HelmChart of those sources there (of a Helm repository's, in the
// chart).
func rootValuesFiles(chartPath string, files []string) []string {
	if len(files) == 0 {
		return nil
	}
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = path.Join(path.Clean(chartPath), path.Clean(strings.TrimPrefix(f, "./")))
	}
	return out
}

// chartValuesFiles is rootValuesFiles the other way: files named relative
// to a Git repository's or bucket's root, named relative to the chart
// at chartPath in it. A file outside the chart's directory is an error:
// the provider reads values files from the chart.
func chartValuesFiles(chartPath string, files []string) ([]string, error) {
	if len(files) == 0 {
		return nil, nil
	}
	dir := path.Clean(strings.TrimPrefix(chartPath, "./"))
	out := make([]string, len(files))
	for i, f := range files {
		rel := path.Clean(f)
		var ok bool
		if dir == "." {
			ok = rel != ".." && !strings.HasPrefix(rel, "../") && !path.IsAbs(rel)
		} else {
			rel, ok = strings.CutPrefix(rel, dir+"/")
		}
		if !ok {
			return nil, fmt.Errorf("values file %q is outside the chart's directory %q: the provider reads values files from the chart (chart.values_files, relative to it); move the file into the chart's directory", f, chartPath)
		}
		out[i] = rel
	}
	return out, nil
}

// gitReference is the GitRepository reference of ref, pinned to the
// commit of revision where source-controller can check it out: with the
// branch it is on, or alone. A tag (a semver range's: the tag it chose)
// and a reference that is no branch are written as such, since
// source-controller clones only branches to find a commit.
func gitReference(ref chartsource.GitRef, revision string) *sourcev1.GitRepositoryRef {
	pointer, hash := git.SplitRevision(revision)
	commit := hash.String()
	switch {
	case revision == "":
		return &sourcev1.GitRepositoryRef{Branch: ref.Branch, Tag: ref.Tag, SemVer: ref.SemVer, Name: ref.Name, Commit: ref.Commit}
	case ref.Commit != "" && ref.Name == "":
		return &sourcev1.GitRepositoryRef{Branch: ref.Branch, Commit: commit}
	case ref.Name != "":
		if b, ok := strings.CutPrefix(ref.Name, "refs/heads/"); ok {
			return &sourcev1.GitRepositoryRef{Branch: b, Commit: commit}
		}
		return &sourcev1.GitRepositoryRef{Name: ref.Name}
	case ref.SemVer != "" || ref.Tag != "":
		return &sourcev1.GitRepositoryRef{Tag: pointer}
	}
	branch := ref.Branch
	if branch == "" {
		branch = git.DefaultBranch
	}
	return &sourcev1.GitRepositoryRef{Branch: branch, Commit: commit}
}

// without is v without the leaves that over sets: merging over onto the
// result gives what merging over onto v gives, whatever the order.
func without(v, over map[string]any) map[string]any {
	out := make(map[string]any, len(v))
	for k, x := range v {
		o, set := over[k]
		if !set {
			out[k] = x
			continue
		}
		xm, xok := x.(map[string]any)
		om, ook := o.(map[string]any)
		if xok && ook {
			if rest := without(xm, om); len(rest) > 0 {
				out[k] = rest
			}
		}
	}
	return out
}

func kubeConfigRef(ref *meta.SecretKeyReference) *meta.KubeConfigReference {
	if ref == nil {
		return nil
	}
	return &meta.KubeConfigReference{SecretRef: ref}
}

func duration(d time.Duration) *metav1.Duration {
	if d == 0 {
		return nil
	}
	return &metav1.Duration{Duration: d}
}

func install(s reconcile.InstallSpec) *helmv2.Install {
	out := &helmv2.Install{
		Timeout:                  duration(s.Timeout),
		CRDs:                     helmv2.CRDsPolicy(s.CRDs),
		Replace:                  s.Replace,
		CreateNamespace:          s.CreateNamespace,
		DisableHooks:             s.DisableHooks,
		DisableOpenAPIValidation: s.DisableOpenAPIValidation,
		DisableSchemaValidation:  s.DisableSchemaValidation,
		DisableTakeOwnership:     s.DisableTakeOwnership,
		DisableWait:              s.DisableWait,
		DisableWaitForJobs:       s.DisableWaitForJobs,
		ServerSideApply:          s.ServerSideApply,
	}
	if st := s.Strategy; st.Name != "" {
		out.Strategy = &helmv2.InstallStrategy{Name: string(st.Name), RetryInterval: duration(st.RetryInterval)}
	}
	if r := s.Remediation; r != (reconcile.Remediation{}) {
		out.Remediation = &helmv2.InstallRemediation{Retries: r.Retries, IgnoreTestFailures: r.IgnoreTestFailures, RemediateLastFailure: r.RemediateLastFailure}
	}
	if *out == (helmv2.Install{}) {
		return nil
	}
	return out
}

func upgrade(s reconcile.UpgradeSpec, chartNameChange reconcile.ChartNameChangeStrategy) *helmv2.Upgrade {
	out := &helmv2.Upgrade{
		Timeout:                  duration(s.Timeout),
		CRDs:                     helmv2.CRDsPolicy(s.CRDs),
		CleanupOnFail:            s.CleanupOnFail,
		DisableHooks:             s.DisableHooks,
		DisableOpenAPIValidation: s.DisableOpenAPIValidation,
		DisableSchemaValidation:  s.DisableSchemaValidation,
		DisableTakeOwnership:     s.DisableTakeOwnership,
		DisableWait:              s.DisableWait,
		DisableWaitForJobs:       s.DisableWaitForJobs,
		Force:                    s.Force,
		PreserveValues:           s.PreserveValues,
		ServerSideApply:          helmv2.ServerSideApplyMode(s.ServerSideApply),
		ChartNameChangeStrategy:  helmv2.ChartNameChangeStrategy(chartNameChange),
	}
	if st := s.Strategy; st.Name != "" {
		out.Strategy = &helmv2.UpgradeStrategy{Name: string(st.Name), RetryInterval: duration(st.RetryInterval)}
	}
	if r := s.Remediation; r != (reconcile.Remediation{}) {
		out.Remediation = &helmv2.UpgradeRemediation{Retries: r.Retries, IgnoreTestFailures: r.IgnoreTestFailures, RemediateLastFailure: r.RemediateLastFailure}
		if r.Strategy != "" {
			st := helmv2.RemediationStrategy(r.Strategy)
			out.Remediation.Strategy = &st
		}
	}
	if *out == (helmv2.Upgrade{}) {
		return nil
	}
	return out
}

func test(s reconcile.TestSpec) *helmv2.Test {
	if !s.Enable && s.Timeout == 0 && !s.IgnoreFailures && len(s.Filters) == 0 {
		return nil
	}
	out := &helmv2.Test{Enable: s.Enable, Timeout: duration(s.Timeout), IgnoreFailures: s.IgnoreFailures}
	if len(s.Filters) > 0 {
		filters := make([]helmv2.Filter, 0, len(s.Filters))
		for _, f := range s.Filters {
			filters = append(filters, helmv2.Filter{Name: f.Name, Exclude: f.Exclude})
		}
		out.Filters = &filters
	}
	return out
}

func rollback(s reconcile.RollbackSpec) *helmv2.Rollback {
	out := &helmv2.Rollback{
		Timeout:            duration(s.Timeout),
		CleanupOnFail:      s.CleanupOnFail,
		DisableHooks:       s.DisableHooks,
		DisableWait:        s.DisableWait,
		DisableWaitForJobs: s.DisableWaitForJobs,
		Force:              s.Force,
		Recreate:           s.Recreate, //nolint:staticcheck // honoured by helm-controller v1.4 (Helm 3)
		ServerSideApply:    helmv2.ServerSideApplyMode(s.ServerSideApply),
	}
	if *out == (helmv2.Rollback{}) {
		return nil
	}
	return out
}

func uninstall(s reconcile.UninstallSpec) *helmv2.Uninstall {
	out := &helmv2.Uninstall{
		Timeout:      duration(s.Timeout),
		DisableHooks: s.DisableHooks,
		DisableWait:  s.DisableWait,
		KeepHistory:  s.KeepHistory,
	}
	if s.DeletionPropagation != "" {
		p := s.DeletionPropagation
		out.DeletionPropagation = &p
	}
	if *out == (helmv2.Uninstall{}) {
		return nil
	}
	return out
}

func drift(s reconcile.DriftSpec) *helmv2.DriftDetection {
	if s.Mode == "" && len(s.Ignore) == 0 {
		return nil
	}
	out := &helmv2.DriftDetection{Mode: helmv2.DriftDetectionMode(s.Mode)}
	for _, r := range s.Ignore {
		out.Ignore = append(out.Ignore, helmv2.IgnoreRule{Paths: r.Paths, Target: selector(r.Target)})
	}
	return out
}

func selector(s *postrender.Selector) *kustomize.Selector {
	if s == nil {
		return nil
	}
	return &kustomize.Selector{
		Group: s.Group, Version: s.Version, Kind: s.Kind, Name: s.Name, Namespace: s.Namespace,
		LabelSelector: s.LabelSelector, AnnotationSelector: s.AnnotationSelector,
	}
}

// postRenderers are the post-renderers in v2's form: the deprecated
// strategic merge and JSON 6902 lists become patches, which Kustomize
// applies the same way.
// postRenderers are the Kustomize post-renderers; commands, which
// helm-controller cannot run, are refused before (the provider's
// validation).
func postRenderers(in []postrender.Renderer) []helmv2.PostRenderer {
	var out []helmv2.PostRenderer
	for _, r := range in {
		k := r.Kustomize
		kz := &helmv2.Kustomize{}
		for _, p := range k.Patches {
			kz.Patches = append(kz.Patches, kustomize.Patch{Patch: p.Patch, Target: selector(p.Target)})
		}
		for _, p := range k.PatchesStrategicMerge {
			kz.Patches = append(kz.Patches, kustomize.Patch{Patch: p})
		}
		for _, p := range k.PatchesJSON6902 {
			target := p.Target
			kz.Patches = append(kz.Patches, kustomize.Patch{Patch: p.Patch, Target: selector(&target)})
		}
		for _, i := range k.Images {
			kz.Images = append(kz.Images, kustomize.Image{Name: i.Name, NewName: i.NewName, NewTag: i.NewTag, Digest: i.Digest})
		}
		out = append(out, helmv2.PostRenderer{Kustomize: kz})
	}
	return out
}

// ConfigDigest is the digest of composed values as helm-controller
// records it in its history (configDigest).
func ConfigDigest(v map[string]any) string {
	return fluxchartutil.DigestValues(digest.Canonical, v).String()
}

// ociVerify is the spec.verify of an OCIRepository that verifies as v
// says, and the Secret written with v's keys (nil when secret names the
// user's, or keyless verification has no trusted root to write). The
// Secret's keys are those source-controller reads: *.pub (cosign), *.crt
// and trustpolicy.json (notation), trusted_root.json (keyless cosign,
// spec.verify.trustedRootSecretRef).
func ociVerify(v *chartsource.Verification, secret string, m metav1.ObjectMeta) (*sourcev1.OCIRepositoryVerification, *corev1.Secret) {
	spec := &sourcev1.OCIRepositoryVerification{Provider: v.Provider}
	for _, id := range v.Identities {
		spec.MatchOIDCIdentity = append(spec.MatchOIDCIdentity, sourcev1.OIDCIdentityMatch{Issuer: id.Issuer, Subject: id.Subject})
	}
	if secret != "" {
		spec.SecretRef = &meta.LocalObjectReference{Name: secret}
		return spec, nil
	}
	data := map[string][]byte{}
	for i, key := range v.PublicKeys {
		if v.Provider == chartsource.ProviderNotation {
			data[fmt.Sprintf("ca-%d.crt", i)] = key
		} else {
			data[fmt.Sprintf("cosign-%d.pub", i)] = key
		}
	}
	if v.Provider == chartsource.ProviderNotation {
		// source-controller needs one: the provider's default is written.
		data[TrustPolicyKey] = v.TrustPolicy
		if v.TrustPolicy == nil {
			data[TrustPolicyKey] = []byte(chartsource.DefaultTrustPolicy)
		}
	}
	if v.TrustedRoot != nil {
		data[TrustedRootKey] = v.TrustedRoot
	}
	if len(data) == 0 {
		return spec, nil // keyless against Sigstore's public-good instance
	}
	out := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: m, Type: corev1.SecretTypeOpaque, Data: data}
	if len(v.PublicKeys) > 0 {
		spec.SecretRef = &meta.LocalObjectReference{Name: out.Name}
	}
	if v.TrustedRoot != nil {
		spec.TrustedRootSecretRef = &meta.LocalObjectReference{Name: out.Name}
	}
	return spec, out
}
