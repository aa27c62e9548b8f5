package chartsource

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	_ "github.com/notaryproject/notation-core-go/signature/cose" // COSE envelopes
	_ "github.com/notaryproject/notation-core-go/signature/jws"  // JWS envelopes
	"github.com/notaryproject/notation-go"
	notationregistry "github.com/notaryproject/notation-go/registry"
	"github.com/notaryproject/notation-go/verifier"
	"github.com/notaryproject/notation-go/verifier/trustpolicy"
	"github.com/notaryproject/notation-go/verifier/truststore"
	orasremote "oras.land/oras-go/v2/registry/remote"
	orasauth "oras.land/oras-go/v2/registry/remote/auth"
)

// DefaultTrustPolicy is the notation trust policy used when none is
// given: signatures of every registry verified strictly against the
// certificates given, whatever the signing certificate's subject.
const DefaultTrustPolicy = `{
  "version": "1.0",
  "trustPolicies": [
    {
      "name": "helmrelease",
      "registryScopes": ["*"],
      "signatureVerification": {"level": "strict"},
      "trustStores": ["ca:helmrelease"],
      "trustedIdentities": ["*"]
    }
  ]
}
`

// TrustPolicyDocument parses a notation trustpolicy.json (nil:
// DefaultTrustPolicy) and checks it as notation does.
func TrustPolicyDocument(data []byte) (*trustpolicy.Document, error) {
	if data == nil {
		data = []byte(DefaultTrustPolicy)
	}
	var doc trustpolicy.Document
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("trust policy is not JSON: %w", err)
	}
	if err := doc.Validate(); err != nil {
		return nil, fmt.Errorf("trust policy: %w", err)
	}
	return &doc, nil
}

// verifyNotation verifies the notation signatures of ref@digest against
// the trust policy and certificates of v, as source-controller does: the
// certificates form every trust store the policy names, and a policy of
// level audit, permissive or skip lets a chart through unverified, with
// a warning.
func (r *Repositories) verifyNotation(ctx context.Context, auth Auth, ref, digest string, v *Verification) (*Verified, error) {
	doc, err := TrustPolicyDocument(v.TrustPolicy)
	if err != nil {
		return nil, err
	}
	store, err := newTrustStore(v.PublicKeys)
	if err != nil {
		return nil, err
	}
	verify, err := verifier.New(doc, store, nil)
	if err != nil {
		return nil, fmt.Errorf("trust policy: %w", err)
	}
	repo, err := orasremote.NewRepository(ref)
	if err != nil {
		return nil, fmt.Errorf("reference %s: %w", ref, err)
	}
	httpClient, err := r.httpClient(auth)
	if err != nil {
		return nil, err
	}
	credential, err := registryCredential(auth)
	if err != nil {
		return nil, err
	}
	client := &orasauth.Client{Client: httpClient, Credential: credential, Cache: orasauth.NewCache()}
	client.SetUserAgent(helmUserAgent)
	repo.Client = client
	repo.PlainHTTP = auth.PlainHTTP
	_, outcomes, err := notation.Verify(ctx, verify, notationregistry.NewRepository(repo), notation.VerifyOptions{
		ArtifactReference: ref + "@" + digest, MaxSignatureAttempts: 3,
	})
	if err != nil {
		return nil, err
	}
	if len(outcomes) == 0 {
		return nil, errors.New("no signature passed")
	}
	out := outcomes[0]
	if out.VerificationLevel != nil && out.VerificationLevel.Name == trustpolicy.LevelSkip.Name {
		return &Verified{Signer: "none", Warning: "the trust policy's level is skip: the signature was not checked", Ignored: true}, nil
	}
	var failed []string
	ignored := false
	for _, res := range out.VerificationResults {
		if res.Error != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", res.Type, res.Error))
			ignored = ignored || res.Type == trustpolicy.TypeAuthenticity
		}
	}
	signer := "unknown signer"
	if out.EnvelopeContent != nil && len(out.EnvelopeContent.SignerInfo.CertificateChain) > 0 {
		signer = out.EnvelopeContent.SignerInfo.CertificateChain[0].Subject.String()
	}
	verified := &Verified{Signer: signer, Ignored: ignored}
	if len(failed) > 0 {
		level := "unknown"
		if out.VerificationLevel != nil {
			level = out.VerificationLevel.Name
		}
		verified.Warning = fmt.Sprintf("the trust policy's level %s let these checks fail: %s", level, strings.Join(failed, "; "))
	}
	return verified, nil
}

// trustStore holds the certificates given, for every trust store a
// policy names (source-controller's choice: one Secret, one store).
type trustStore struct{ certs []*x509.Certificate }

var _ truststore.X509TrustStore = trustStore{}

func newTrustStore(data [][]byte) (trustStore, error) {
	var s trustStore
	for i, b := range data {
		rest := b
		found := false
		for {
			var block *pem.Block
			block, rest = pem.Decode(rest)
			if block == nil {
				break
			}
			found = true
			certs, err := x509.ParseCertificates(block.Bytes)
			if err != nil {
				return s, fmt.Errorf("certificate %d: %w", i, err)
			}
			s.certs = append(s.certs, certs...)
		}
		if !found {
			certs, err := x509.ParseCertificates(b)
			if err != nil {
				return s, fmt.Errorf("certificate %d is neither PEM nor DER: %w", i, err)
			}
			s.certs = append(s.certs, certs...)
		}
	}
	if len(s.certs) == 0 {
		return s, errors.New("no certificate given for the trust store")
	}
	return s, nil
}

func (s trustStore) GetCertificates(context.Context, truststore.Type, string) ([]*x509.Certificate, error) {
	return s.certs, nil
}
