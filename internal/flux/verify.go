package flux

import (
	"context"
	"fmt"
	"slices"
	"strings"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
)

// Keys of the Secrets of a verification, as source-controller reads them.
const (
	// TrustPolicyKey holds a notation trust policy.
	TrustPolicyKey = "trustpolicy.json"
	// TrustedRootKey holds a Sigstore trusted root (trustedRootSecretRef).
	TrustedRootKey = "trusted_root.json"
)

// VerificationKeys reads into v the keys of the Secret namespace/name as
// source-controller reads spec.verify.secretRef: for cosign its *.pub
// keys, for notation its *.crt and *.pem keys and its trust policy. A
// Secret without any is an error; its values are never part of one.
func (e *Client) VerificationKeys(ctx context.Context, namespace, name string, v *chartsource.Verification) error {
	s := &corev1.Secret{}
	if err := e.Kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, s); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("the Secret %s/%s does not exist", namespace, name)
		}
		return fmt.Errorf("reading the Secret %s/%s: %w", namespace, name, err)
	}
	suffixes := []string{".pub"}
	if v.Provider == chartsource.ProviderNotation {
		suffixes = []string{".crt", ".pem"}
		if p, ok := s.Data[TrustPolicyKey]; ok {
			if v.TrustPolicy != nil {
				return fmt.Errorf("the Secret %s/%s holds %s, and chart.verify.trust_policy sets one too: keep one", namespace, name, TrustPolicyKey)
			}
			v.TrustPolicy = p
		}
	}
	keys := make([]string, 0, len(s.Data))
	for k := range s.Data {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the same order every plan: the verification's cache key
	found := 0
	for _, k := range keys {
		if slices.ContainsFunc(suffixes, func(sfx string) bool { return strings.HasSuffix(k, sfx) }) {
			v.PublicKeys = append(v.PublicKeys, s.Data[k])
			found++
		}
	}
	if found == 0 {
		return fmt.Errorf("the Secret %s/%s has no key ending in %s", namespace, name, strings.Join(suffixes, " or "))
	}
	return nil
}

// ociVerification is the verification an OCIRepository's spec.verify
// asks for, with the keys, trust policy and trusted root of its Secrets.
func (e *Client) ociVerification(ctx context.Context, ref chartsource.ChartRef, spec *sourcev1.OCIRepositoryVerification) (*chartsource.Verification, error) {
	if spec == nil {
		return nil, nil
	}
	v := &chartsource.Verification{Provider: spec.Provider}
	if v.Provider == "" {
		v.Provider = chartsource.ProviderCosign
	}
	if spec.SecretRef != nil {
		if err := e.VerificationKeys(ctx, ref.Namespace, spec.SecretRef.Name, v); err != nil {
			return nil, refError(ref, "spec.verify.secretRef: %s", err)
		}
	}
	for _, id := range spec.MatchOIDCIdentity {
		v.Identities = append(v.Identities, chartsource.Identity{Issuer: id.Issuer, Subject: id.Subject})
	}
	if spec.TrustedRootSecretRef != nil {
		data, err := e.secretData(ctx, ref, ref.Namespace, spec.TrustedRootSecretRef.Name)
		if err != nil {
			return nil, err
		}
		root, ok := data[TrustedRootKey]
		if !ok {
			return nil, refError(ref, "spec.verify.trustedRootSecretRef: the Secret %s/%s has no key %s", ref.Namespace, spec.TrustedRootSecretRef.Name, TrustedRootKey)
		}
		v.TrustedRoot = []byte(root)
	}
	if err := v.Check(); err != nil {
		return nil, refError(ref, "spec.verify: %s", err)
	}
	return v, nil
}

// helmChartVerification is the verification a HelmChart's spec.verify
// asks of the charts of its OCI HelmRepository (no trusted root: the
// public Sigstore's); nil without one.
func (e *Client) helmChartVerification(ctx context.Context, ref chartsource.ChartRef, spec *sourcev1.HelmChartVerification) (*chartsource.Verification, error) {
	if spec == nil {
		return nil, nil
	}
	return e.ociVerification(ctx, ref, &sourcev1.OCIRepositoryVerification{Provider: spec.Provider, SecretRef: spec.SecretRef, MatchOIDCIdentity: spec.MatchOIDCIdentity})
}

// Verified reports whether the objects verify the chart's signature (an
// OCIRepository with spec.verify).
func (o *Objects) Verified() bool {
	repo, ok := o.Source.(*sourcev1.OCIRepository)
	return ok && repo.Spec.Verify != nil
}

// SourceVerified is the message of the SourceVerified condition of the
// OCIRepository namespace/name when it is True, else empty.
func (e *Client) SourceVerified(ctx context.Context, namespace, name string) string {
	repo := &sourcev1.OCIRepository{}
	if err := e.Kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, repo); err != nil {
		return ""
	}
	for _, c := range repo.Status.Conditions {
		if c.Type == sourcev1.SourceVerifiedCondition && c.Status == "True" {
			return c.Message
		}
	}
	return ""
}
