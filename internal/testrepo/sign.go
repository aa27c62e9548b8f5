package testrepo

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cyberphone/json-canonicalization/go/src/webpki.org/jsoncanonicalizer"
	ct "github.com/google/certificate-transparency-go"
	cttls "github.com/google/certificate-transparency-go/tls"
	ctx509 "github.com/google/certificate-transparency-go/x509"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/notaryproject/notation-go"
	notationregistry "github.com/notaryproject/notation-go/registry"
	notationsigner "github.com/notaryproject/notation-go/signer"
	"github.com/sigstore/cosign/v3/pkg/cosign/bundle"
	"github.com/sigstore/cosign/v3/pkg/oci/mutate"
	ociremote "github.com/sigstore/cosign/v3/pkg/oci/remote"
	"github.com/sigstore/cosign/v3/pkg/oci/static"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/payload"
	"google.golang.org/protobuf/encoding/protojson"
	orasremote "oras.land/oras-go/v2/registry/remote"
	orasauth "oras.land/oras-go/v2/registry/remote/auth"

	_ "github.com/notaryproject/notation-core-go/signature/jws" // JWS envelopes
)

// What the signing helpers below make is what cosign's and notation's
// command-line tools make, through the same libraries, with keys the
// tests make: no network, no binaries.

// Digest is the manifest digest of chart name at version in the registry.
func (o *OCI) Digest(t testing.TB, chartName, version string) string {
	t.Helper()
	desc, err := remote.Head(o.reference(t, chartName+":"+strings.ReplaceAll(version, "+", "_")), o.remoteOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	return desc.Digest.String()
}

// Ref is the registry reference of the chart's repository: host/charts/name.
func (o *OCI) Ref(chartName string) string {
	return strings.TrimPrefix(o.URL, "oci://") + "/" + chartName
}

func (o *OCI) reference(t testing.TB, suffix string) name.Reference {
	t.Helper()
	ref, err := name.ParseReference(strings.TrimPrefix(o.URL, "oci://") + "/" + suffix)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

func (o *OCI) remoteOptions() []remote.Option {
	return []remote.Option{remote.WithTransport(o.transport), remote.WithAuth(&authn.Basic{Username: Username, Password: o.password})}
}

// CosignKey is a key pair as `cosign generate-key-pair` makes it.
type CosignKey struct {
	// PublicPEM is the public key (cosign.pub).
	PublicPEM []byte
	private   *ecdsa.PrivateKey
}

// NewCosignKey makes an ECDSA P-256 key pair.
func NewCosignKey(t testing.TB) *CosignKey {
	t.Helper()
	key := newKey(t)
	pub, err := cryptoutils.MarshalPublicKeyToPEM(key.Public())
	if err != nil {
		t.Fatal(err)
	}
	return &CosignKey{PublicPEM: pub, private: key}
}

// CosignSignBundle signs the manifest of chart name at version as cosign
// 3 does by default: a Sigstore bundle holding a DSSE envelope of an
// in-toto statement that names the digest, attached to the manifest as
// an OCI referrer (no log entry, as --tlog-upload=false).
func (o *OCI) CosignSignBundle(t testing.TB, chartName, version string, key *CosignKey) {
	t.Helper()
	digest, err := name.NewDigest(o.Ref(chartName) + "@" + o.Digest(t, chartName, version))
	if err != nil {
		t.Fatal(err)
	}
	const predicateType = "https://sigstore.dev/cosign/sign/v1"
	statement, err := json.Marshal(map[string]any{
		"_type":         "https://in-toto.io/Statement/v1",
		"subject":       []any{map[string]any{"name": digest.Context().Name(), "digest": map[string]string{"sha256": digest.DigestStr()[len("sha256:"):]}}},
		"predicateType": predicateType,
		"predicate":     map[string]any{},
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := sign.Bundle(&sign.DSSEData{Data: statement, PayloadType: "application/vnd.in-toto+json"}, bundleKeypair{key.private}, sign.BundleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := protojson.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := ociremote.WriteAttestationNewBundleFormat(digest, raw, predicateType, ociremote.WithRemoteOptions(o.remoteOptions()...)); err != nil {
		t.Fatal(err)
	}
}

// bundleKeypair is a cosign key as sigstore-go's signer takes it.
type bundleKeypair struct{ key *ecdsa.PrivateKey }

func (bundleKeypair) GetHashAlgorithm() protocommon.HashAlgorithm {
	return protocommon.HashAlgorithm_SHA2_256
}
func (bundleKeypair) GetSigningAlgorithm() protocommon.PublicKeyDetails {
	return protocommon.PublicKeyDetails_PKIX_ECDSA_P256_SHA_256
}
func (bundleKeypair) GetHint() []byte                  { return nil }
func (bundleKeypair) GetKeyAlgorithm() string          { return "ECDSA" }
func (k bundleKeypair) GetPublicKey() crypto.PublicKey { return k.key.Public() }
func (k bundleKeypair) GetPublicKeyPem() (string, error) {
	pub, err := cryptoutils.MarshalPublicKeyToPEM(k.key.Public())
	return string(pub), err
}
func (k bundleKeypair) SignData(_ context.Context, data []byte) ([]byte, []byte, error) {
	digest := sha256.Sum256(data)
	sig, err := ecdsa.SignASN1(rand.Reader, k.key, digest[:])
	return sig, digest[:], err
}

// CosignSign signs the manifest of chart name at version as `cosign sign
// --key` does (cosign 2's signature tag, sha256-<hex>.sig, no log entry).
func (o *OCI) CosignSign(t testing.TB, chartName, version string, key *CosignKey) {
	t.Helper()
	signer, err := signature.LoadECDSASignerVerifier(key.private, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	o.attachCosign(t, chartName, version, func(payload []byte) (string, []static.Option) {
		sig, err := signer.SignMessage(bytes.NewReader(payload))
		if err != nil {
			t.Fatal(err)
		}
		return base64.StdEncoding.EncodeToString(sig), nil
	})
}

func (o *OCI) attachCosign(t testing.TB, chartName, version string, sign func(payload []byte) (string, []static.Option)) {
	t.Helper()
	digest, err := name.NewDigest(o.Ref(chartName) + "@" + o.Digest(t, chartName, version))
	if err != nil {
		t.Fatal(err)
	}
	body, err := payload.Cosign{Image: digest}.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	b64, opts := sign(body)
	sig, err := static.NewSignature(body, b64, opts...)
	if err != nil {
		t.Fatal(err)
	}
	registryOpts := ociremote.WithRemoteOptions(o.remoteOptions()...)
	entity, err := ociremote.SignedEntity(digest, registryOpts)
	if err != nil {
		t.Fatal(err)
	}
	signed, err := mutate.AttachSignatureToEntity(entity, sig)
	if err != nil {
		t.Fatal(err)
	}
	if err := ociremote.WriteSignatures(digest.Repository, signed, registryOpts); err != nil {
		t.Fatal(err)
	}
}

// CopyCosignSignatures tags the cosign signatures of chart name's
// manifest from as the signatures of manifest to: a chart changed after
// signing that carries the old signature.
func (o *OCI) CopyCosignSignatures(t testing.TB, chartName, from, to string) {
	t.Helper()
	sigTag := func(digest string) string { return strings.Replace(digest, ":", "-", 1) + ".sig" }
	desc, err := remote.Get(o.reference(t, chartName+":"+sigTag(from)), o.remoteOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag(o.Ref(chartName) + ":" + sigTag(to))
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Tag(tag, desc, o.remoteOptions()...); err != nil {
		t.Fatal(err)
	}
}

// Sigstore is a private Sigstore instance as keyless signing meets it: a
// Fulcio CA that issues short-lived certificates naming an OIDC identity,
// a certificate transparency log that timestamps them (embedded SCTs) and
// a Rekor log whose signed entry timestamps go with each signature.
type Sigstore struct {
	// TrustedRoot is its trusted_root.json.
	TrustedRoot []byte
	ca          *x509.Certificate
	caKey       *ecdsa.PrivateKey
	rekorKey    *ecdsa.PrivateKey
	ctKey       *ecdsa.PrivateKey
}

// NewSigstore makes the instance's keys and trusted root.
func NewSigstore(t testing.TB) *Sigstore {
	t.Helper()
	s := &Sigstore{caKey: newKey(t), rekorKey: newKey(t), ctKey: newKey(t)}
	now := time.Now()
	s.ca = newCert(t, &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sigstore", Organization: []string{"test"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign, BasicConstraintsValid: true, IsCA: true,
	}, nil, s.caKey, nil)
	log := func(key *ecdsa.PrivateKey, url string) map[string]*root.TransparencyLog {
		id := logID(t, key)
		return map[string]*root.TransparencyLog{hex.EncodeToString(id): {
			BaseURL: url, ID: id, ValidityPeriodStart: now.Add(-time.Hour), HashFunc: crypto.SHA256,
			PublicKey: key.Public(), SignatureHashFunc: crypto.SHA256,
		}}
	}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01,
		[]root.CertificateAuthority{&root.FulcioCertificateAuthority{Root: s.ca, ValidityPeriodStart: now.Add(-time.Hour), URI: "https://fulcio.localhost"}},
		log(s.ctKey, "https://ctlog.localhost"), nil, log(s.rekorKey, "https://rekor.localhost"))
	if err != nil {
		t.Fatal(err)
	}
	if s.TrustedRoot, err = tr.MarshalJSON(); err != nil {
		t.Fatal(err)
	}
	return s
}

// CosignSignKeyless signs the manifest of chart name at version as
// `cosign sign` does keyless: with a Fulcio certificate for subject
// (an e-mail address or URI) from the OIDC issuer, logged in Rekor.
func (o *OCI) CosignSignKeyless(t testing.TB, chartName, version string, s *Sigstore, subject, issuer string) {
	t.Helper()
	key := newKey(t)
	leaf := s.issue(t, key, subject, issuer)
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leaf.Raw})
	chainPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.ca.Raw})
	signer, err := signature.LoadECDSASignerVerifier(key, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	o.attachCosign(t, chartName, version, func(body []byte) (string, []static.Option) {
		sig, err := signer.SignMessage(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b64 := base64.StdEncoding.EncodeToString(sig)
		return b64, []static.Option{static.WithCertChain(certPEM, chainPEM), static.WithBundle(s.logEntry(t, body, b64, certPEM))}
	})
}

// issue makes a Fulcio-like certificate for key with the subject and
// OIDC issuer, carrying the CT log's SCT.
func (s *Sigstore) issue(t testing.TB, key *ecdsa.PrivateKey, subject, issuer string) *x509.Certificate {
	t.Helper()
	now := time.Now()
	template := &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano()), NotBefore: now.Add(-time.Minute), NotAfter: now.Add(10 * time.Minute),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
		ExtraExtensions: []pkix.Extension{{Id: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 1}, Value: []byte(issuer)}},
	}
	if strings.Contains(subject, "://") {
		u, err := url.Parse(subject)
		if err != nil {
			t.Fatal(err)
		}
		template.URIs = []*url.URL{u}
	} else {
		template.EmailAddresses = []string{subject}
	}
	sctOID := asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 11129, 2, 4, 2}
	// The SCT signs the certificate without its SCT list: made once with
	// a placeholder, whose removal leaves what the final one leaves.
	withSCT := func(value []byte) *x509.Certificate {
		tpl := *template
		tpl.ExtraExtensions = append(append([]pkix.Extension{}, template.ExtraExtensions...), pkix.Extension{Id: sctOID, Value: value})
		return newCert(t, &tpl, s.ca, s.caKey, key.Public())
	}
	sctList := func(sct []byte) []byte {
		list, err := cttls.Marshal(ctx509.SignedCertificateTimestampList{SCTList: []ctx509.SerializedSCT{{Val: sct}}})
		if err != nil {
			t.Fatal(err)
		}
		value, err := asn1.Marshal(list)
		if err != nil {
			t.Fatal(err)
		}
		return value
	}
	pre := withSCT(sctList([]byte{0}))
	chain := []*ctx509.Certificate{ctCert(t, pre), ctCert(t, s.ca)}
	sct := ct.SignedCertificateTimestamp{SCTVersion: ct.V1, LogID: ct.LogID{KeyID: [32]byte(logID(t, s.ctKey))}, Timestamp: uint64(now.UnixMilli())}
	leaf, err := ct.MerkleTreeLeafForEmbeddedSCT(chain, sct.Timestamp)
	if err != nil {
		t.Fatal(err)
	}
	input, err := ct.SerializeSCTSignatureInput(sct, ct.LogEntry{Leaf: *leaf})
	if err != nil {
		t.Fatal(err)
	}
	signed, err := cttls.CreateSignature(*s.ctKey, cttls.SHA256, input)
	if err != nil {
		t.Fatal(err)
	}
	sct.Signature = ct.DigitallySigned(signed)
	raw, err := cttls.Marshal(sct)
	if err != nil {
		t.Fatal(err)
	}
	return withSCT(sctList(raw))
}

// logEntry is Rekor's bundle for a hashedrekord entry of the signature:
// the entry and the log's signed entry timestamp.
func (s *Sigstore) logEntry(t testing.TB, body []byte, b64sig string, certPEM []byte) *bundle.RekorBundle {
	t.Helper()
	sum := sha256.Sum256(body)
	entry, err := json.Marshal(map[string]any{
		"apiVersion": "0.0.1", "kind": "hashedrekord",
		"spec": map[string]any{
			"data":      map[string]any{"hash": map[string]string{"algorithm": "sha256", "value": hex.EncodeToString(sum[:])}},
			"signature": map[string]any{"content": b64sig, "publicKey": map[string]string{"content": base64.StdEncoding.EncodeToString(certPEM)}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	p := bundle.RekorPayload{Body: base64.StdEncoding.EncodeToString(entry), IntegratedTime: time.Now().Unix(), LogIndex: 1, LogID: hex.EncodeToString(logID(t, s.rekorKey))}
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	canonical, err := jsoncanonicalizer.Transform(raw)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := signature.LoadECDSASignerVerifier(s.rekorKey, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	set, err := signer.SignMessage(bytes.NewReader(canonical))
	if err != nil {
		t.Fatal(err)
	}
	return &bundle.RekorBundle{SignedEntryTimestamp: set, Payload: p}
}

// NotationKey is a signing certificate and its CA, as `notation cert
// generate-test` makes them.
type NotationKey struct {
	// CAPEM is the CA certificate, for the verifier's trust store.
	CAPEM []byte
	key   *ecdsa.PrivateKey
	chain []*x509.Certificate
}

// NewNotationKey makes a CA and a code-signing certificate it issued for
// the common name.
func NewNotationKey(t testing.TB, commonName string) *NotationKey {
	t.Helper()
	caKey, key := newKey(t), newKey(t)
	now := time.Now()
	ca := newCert(t, &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: commonName + " CA", Organization: []string{"test"}, Country: []string{"US"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true, MaxPathLen: 1,
	}, nil, caKey, nil)
	leaf := newCert(t, &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: commonName, Organization: []string{"test"}, Country: []string{"US"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning}, BasicConstraintsValid: true,
	}, ca, caKey, key.Public())
	return &NotationKey{CAPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}), key: key, chain: []*x509.Certificate{leaf, ca}}
}

// NotationSign signs the manifest of chart name at version as `notation
// sign` does (a JWS envelope attached as an OCI referrer).
func (o *OCI) NotationSign(t testing.TB, chartName, version string, key *NotationKey) {
	t.Helper()
	signer, err := notationsigner.NewGenericSigner(key.key, key.chain)
	if err != nil {
		t.Fatal(err)
	}
	repo, err := orasremote.NewRepository(o.Ref(chartName))
	if err != nil {
		t.Fatal(err)
	}
	repo.Client = &orasauth.Client{
		Client:     &http.Client{Transport: o.transport},
		Credential: orasauth.StaticCredential(repo.Reference.Registry, orasauth.Credential{Username: Username, Password: o.password}),
	}
	repo.PlainHTTP = o.plainHTTP
	ref := o.Ref(chartName) + "@" + o.Digest(t, chartName, version)
	_, err = notation.Sign(context.Background(), signer, notationregistry.NewRepository(repo), notation.SignOptions{
		ArtifactReference: ref, SignerSignOptions: notation.SignerSignOptions{SignatureMediaType: "application/jose+json"},
	})
	if err != nil {
		t.Fatal(err)
	}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// newCert makes template's certificate for pub, issued by parent with
// parentKey; self-signed when parent and pub are nil.
func newCert(t testing.TB, template, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, pub crypto.PublicKey) *x509.Certificate {
	t.Helper()
	if parent == nil {
		parent = template
	}
	if pub == nil {
		pub = parentKey.Public()
	}
	der, err := x509.CreateCertificate(rand.Reader, template, parent, pub, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// logID is a transparency log's ID: the SHA-256 of its public key (DER).
func logID(t testing.TB, key *ecdsa.PrivateKey) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(der)
	return sum[:]
}

func ctCert(t testing.TB, c *x509.Certificate) *ctx509.Certificate {
	t.Helper()
	out, err := ctx509.ParseCertificate(c.Raw)
	if ctx509.IsFatal(err) {
		t.Fatal(err)
	}
	return out
}
