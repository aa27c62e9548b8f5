package flux

import (
	"context"
	"errors"
	"fmt"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
)

// ChartOf is the chart a HelmRelease names, as configured: its source's
// URL, the chart name and version (constraint), the reconcile strategy
// and values files, and whether an OCI registry is reached over plain
// HTTP (Auth.PlainHTTP). Credentials are not read.
func (e *Client) ChartOf(ctx context.Context, hr *helmv2.HelmRelease) (chartsource.Source, error) {
	ns := func(n string) string {
		if n != "" {
			return n
		}
		return hr.Namespace
	}
	switch {
	case templateKind(hr) == sourcev1.OCIRepositoryKind:
		// helm-controller v1.7 generates the OCIRepository of this spec.
		return e.ociChartOf(ctx, hr, hr.Spec.Chart.Spec.OCIRepositorySpec)
	case hr.Spec.Chart != nil:
		ref := hr.Spec.Chart.Spec.SourceRef
		if ref == nil {
			return chartsource.Source{}, errors.New("its chart template names no sourceRef")
		}
		return e.templateChartOf(ctx, hr.Spec.Chart.Spec, ns(ref.Namespace))
	case hr.Spec.ChartRef != nil:
		ref := hr.Spec.ChartRef
		named := &chartsource.ChartRef{Kind: ref.Kind, Name: ref.Name, Namespace: ns(ref.Namespace)}
		if ref.Kind == sourcev1.HelmChartKind {
			hc := &sourcev1.HelmChart{}
			if err := e.Kube.Get(ctx, client.ObjectKey{Namespace: named.Namespace, Name: ref.Name}, hc); err != nil {
				return chartsource.Source{}, fmt.Errorf("reading its HelmChart: %w", err)
			}
			if hc.Labels[ManagedByLabel] != ManagedBy {
				// Managed elsewhere: the configuration names it.
				return chartsource.Source{Name: ref.Name, ChartRef: named}, nil
			}
			// The HelmChart the provider shares among releases: the chart
			// its configuration named.
			s := hc.Spec
			return e.templateChartOf(ctx, helmv2.HelmChartTemplateSpec{
				Chart: s.Chart, Version: s.Version, SourceRef: &helmv2.CrossNamespaceObjectReference{Kind: s.SourceRef.Kind, Name: s.SourceRef.Name},
				ReconcileStrategy: s.ReconcileStrategy, ValuesFiles: s.ValuesFiles, IgnoreMissingValuesFiles: s.IgnoreMissingValuesFiles,
			}, named.Namespace)
		}
		if ref.Kind != sourcev1.OCIRepositoryKind {
			return chartsource.Source{}, fmt.Errorf("its chartRef names a %s, not an OCIRepository or a HelmChart", ref.Kind)
		}
		repo := &sourcev1.OCIRepository{}
		if err := e.Kube.Get(ctx, client.ObjectKey{Namespace: named.Namespace, Name: ref.Name}, repo); err != nil {
			return chartsource.Source{}, fmt.Errorf("reading its OCIRepository: %w", err)
		}
		if repo.Labels[ManagedByLabel] != ManagedBy {
			// Managed elsewhere: the configuration names it.
			return chartsource.Source{Name: ref.Name, ChartRef: named}, nil
		}
		return e.ociChartOf(ctx, hr, repo.Spec)
	}
	return chartsource.Source{}, errors.New("it names no chart")
}

// ociChartOf is the chart of an OCIRepository spec: the provider's own
// OCIRepository, or the chart template helm-controller v1.7 makes one of.
// The chart is the URL's last path segment, its repository the rest; the
// version its semver or tag reference (a digest alone leaves it to the
// plan to resolve the newest); its verification as chart.verify.
func (e *Client) ociChartOf(ctx context.Context, hr *helmv2.HelmRelease, spec sourcev1.OCIRepositorySpec) (chartsource.Source, error) {
	i := strings.LastIndex(spec.URL, "/")
	if !strings.HasPrefix(spec.URL, "oci://") || i <= len("oci://") {
		return chartsource.Source{}, fmt.Errorf("its OCIRepository URL %q names no chart", spec.URL)
	}
	version := ""
	if r := spec.Reference; r != nil {
		version = r.SemVer
		if version == "" {
			version = r.Tag
		}
	}
	verify, err := e.verifyConfigOf(ctx, hr, spec.Verify)
	if err != nil {
		return chartsource.Source{}, err
	}
	return chartsource.Source{Name: spec.URL[i+1:], Repository: spec.URL[:i], Version: version, Auth: chartsource.Auth{PlainHTTP: spec.Insecure},
		VerifyConfig: verify}, nil
}

// templateChartOf is the chart of a HelmChart template (or of a HelmChart
// the provider wrote, read as one) whose source is in namespace.
func (e *Client) templateChartOf(ctx context.Context, t helmv2.HelmChartTemplateSpec, namespace string) (chartsource.Source, error) {
	switch t.SourceRef.Kind {
	case sourcev1.GitRepositoryKind:
		return e.gitChartOf(ctx, t, namespace)
	case sourcev1.BucketKind:
		return e.bucketChartOf(ctx, t, namespace)
	case sourcev1.HelmRepositoryKind:
	default:
		return chartsource.Source{}, fmt.Errorf("its chart comes from a %s, not a HelmRepository, GitRepository or Bucket", t.SourceRef.Kind)
	}
	repo := &sourcev1.HelmRepository{}
	if err := e.Kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: t.SourceRef.Name}, repo); err != nil {
		return chartsource.Source{}, fmt.Errorf("reading its HelmRepository: %w", err)
	}
	url := repo.Spec.URL
	if repo.Spec.Type == sourcev1.HelmRepositoryTypeOCI && !strings.HasPrefix(url, "oci://") {
		url = "oci://" + url
	}
	version := t.Version
	if version == "*" {
		version = ""
	}
	return chartsource.Source{
		Name: t.Chart, Repository: url, Version: version, ValuesFiles: t.ValuesFiles,
		IgnoreMissingValuesFiles: t.IgnoreMissingValuesFiles, ReconcileStrategy: chartsource.ReconcileStrategy(t.ReconcileStrategy),
		Auth: chartsource.Auth{PlainHTTP: repo.Spec.Type == sourcev1.HelmRepositoryTypeOCI && repo.Spec.Insecure},
	}, nil
}

// gitChartOf is the chart of t from its GitRepository. The commit the
// provider pinned its own GitRepository to is left out: the configuration
// names the branch, and the plan resolves its commit.
func (e *Client) gitChartOf(ctx context.Context, t helmv2.HelmChartTemplateSpec, namespace string) (chartsource.Source, error) {
	repo := &sourcev1.GitRepository{}
	if err := e.Kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: t.SourceRef.Name}, repo); err != nil {
		return chartsource.Source{}, fmt.Errorf("reading its GitRepository: %w", err)
	}
	g := &chartsource.Git{URL: repo.Spec.URL}
	if r := repo.Spec.Reference; r != nil {
		g.Ref = chartsource.GitRef{Branch: r.Branch, Tag: r.Tag, SemVer: r.SemVer, Name: r.Name, Commit: r.Commit}
		if repo.Labels[ManagedByLabel] == ManagedBy && r.Branch != "" {
			g.Ref.Commit = ""
		}
	}
	if repo.Spec.SecretRef != nil {
		// The host keys of its credentials Secret are public; of the
		// Secret of a GitRepository managed elsewhere, read when readable
		// (without them the plan shows chart.git.known_hosts set).
		own := repo.Labels[ManagedByLabel] == ManagedBy
		secret := &corev1.Secret{}
		if err := e.Kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: repo.Spec.SecretRef.Name}, secret); err != nil && own {
			return chartsource.Source{}, fmt.Errorf("reading its GitRepository's Secret %s: %w", repo.Spec.SecretRef.Name, err)
		}
		g.KnownHosts = string(secret.Data["known_hosts"])
	}
	files, err := chartValuesFiles(t.Chart, t.ValuesFiles)
	if err != nil {
		return chartsource.Source{}, err
	}
	return chartsource.Source{
		Name: t.Chart, Git: g, ValuesFiles: files,
		IgnoreMissingValuesFiles: t.IgnoreMissingValuesFiles, ReconcileStrategy: chartsource.ReconcileStrategy(t.ReconcileStrategy),
	}, nil
}

// bucketChartOf is the chart of t from its Bucket.
func (e *Client) bucketChartOf(ctx context.Context, t helmv2.HelmChartTemplateSpec, namespace string) (chartsource.Source, error) {
	b := &sourcev1.Bucket{}
	if err := e.Kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: t.SourceRef.Name}, b); err != nil {
		return chartsource.Source{}, fmt.Errorf("reading its Bucket: %w", err)
	}
	files, err := chartValuesFiles(t.Chart, t.ValuesFiles)
	if err != nil {
		return chartsource.Source{}, err
	}
	return chartsource.Source{
		Name: t.Chart, ValuesFiles: files, IgnoreMissingValuesFiles: t.IgnoreMissingValuesFiles, ReconcileStrategy: chartsource.ReconcileStrategy(t.ReconcileStrategy),
		Bucket: &chartsource.Bucket{Endpoint: b.Spec.Endpoint, BucketName: b.Spec.BucketName, Prefix: b.Spec.Prefix, Region: b.Spec.Region, Provider: b.Spec.Provider, Insecure: b.Spec.Insecure},
	}, nil
}

// verifyConfigOf is the chart.verify that wrote v, the verification of the
// OCIRepository the provider wrote for hr: the keys, trust policy and
// trusted root of the provider's own Secret (VerificationName) as they
// were given, another Secret by its name.
func (e *Client) verifyConfigOf(ctx context.Context, hr *helmv2.HelmRelease, v *sourcev1.OCIRepositoryVerification) (*chartsource.VerifyConfig, error) {
	if v == nil {
		return nil, nil
	}
	out := &chartsource.VerifyConfig{}
	if v.Provider != chartsource.ProviderCosign {
		out.Provider = v.Provider
	}
	for _, id := range v.MatchOIDCIdentity {
		out.Identities = append(out.Identities, chartsource.Identity{Issuer: id.Issuer, Subject: id.Subject})
	}
	own := VerificationName(hr.Name)
	if v.SecretRef != nil && v.SecretRef.Name != own {
		out.SecretRef = &chartsource.SecretRef{Name: v.SecretRef.Name}
	}
	if (v.SecretRef == nil || v.SecretRef.Name != own) && (v.TrustedRootSecretRef == nil || v.TrustedRootSecretRef.Name != own) {
		return out, nil
	}
	secret := &corev1.Secret{}
	if err := e.Kube.Get(ctx, client.ObjectKey{Namespace: hr.Namespace, Name: own}, secret); err != nil {
		return nil, fmt.Errorf("reading its verification Secret %s: %w", own, err)
	}
	// Written as cosign-<i>.pub or ca-<i>.crt, in the configuration's order.
	for i := 0; ; i++ {
		key, ok := secret.Data[fmt.Sprintf("cosign-%d.pub", i)]
		if !ok {
			key, ok = secret.Data[fmt.Sprintf("ca-%d.crt", i)]
		}
		if !ok {
			break
		}
		out.PublicKeys = append(out.PublicKeys, string(key))
	}
	if p := string(secret.Data[TrustPolicyKey]); p != "" && p != chartsource.DefaultTrustPolicy {
		out.TrustPolicy = p
	}
	out.TrustedRoot = string(secret.Data[TrustedRootKey])
	return out, nil
}
