package chartsource

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
)

// ErrSignature means an OCI chart's signature could not be verified
// (spec.chart.spec.verify with provider cosign or notation): unsigned,
// signed by another key or identity, or changed after signing.
var ErrSignature = errors.New("chart signature not verified")

// The signature providers of Verification, as Flux names them.
const (
	ProviderCosign   = "cosign"
	ProviderNotation = "notation"
)

// Verification is how the manifest of an OCI chart must be signed: Flux's
// HelmChart and OCIRepository spec.verify, with the contents of the
// Secrets it names.
type Verification struct {
	// Provider is ProviderCosign or ProviderNotation.
	Provider string
	// PublicKeys are, for cosign, PEM public keys, any of which may have
	// signed (a Secret's *.pub keys); none is keyless verification. For
	// notation, the PEM or DER certificates of the trust store (a
	// Secret's *.crt and *.pem keys), at least one.
	PublicKeys [][]byte
	// Identities are the issuer and subject regular expressions a keyless
	// cosign signature's certificate must match, any of them (spec.verify
	// .matchOIDCIdentity). Keyless verification needs at least one.
	Identities []Identity
	// TrustedRoot is a Sigstore trusted_root.json (Fulcio CAs, Rekor and
	// CT logs, timestamp authorities) for keyless cosign signatures; nil
	// is Sigstore's public-good instance, read through its TUF repository.
	TrustedRoot []byte
	// TrustPolicy is a notation trustpolicy.json; nil is DefaultTrustPolicy.
	TrustPolicy []byte
}

// Identity is a keyless signer: regular expressions of the OIDC issuer
// and of the subject (the certificate's SAN) that signed.
type Identity struct {
	Issuer  string `json:"issuer"`
	Subject string `json:"subject"`
}

// Verified is the outcome of a verification that passed.
type Verified struct {
	Provider string
	// Digest is the manifest digest verified, the one pulled.
	Digest string
	// Signer says who signed: "key sha256:<12 hex>" (a cosign public
	// key), "<subject> (issuer <issuer>)" (keyless), or the certificate's
	// subject (notation).
	Signer string
	// Warning, when set, says which checks of a notation trust policy
	// failed and were let through (level audit, permissive or skip), as
	// Flux lets them through.
	Warning string
	// Ignored says the trust policy let the chart through without its
	// signature's authenticity verified: level skip, or an authenticity
	// check that failed at a level that only logs it. As source-
	// controller, such a chart is deployed but not verified.
	Ignored bool
}

// Keyless reports whether v is keyless cosign verification.
func (v *Verification) Keyless() bool {
	return v.Provider == ProviderCosign && len(v.PublicKeys) == 0
}

// Check reports what makes v unusable before any registry is asked: a
// provider without its keys, fields of the other provider, keys,
// certificates, identities, trusted root or trust policy that do not
// parse.
func (v *Verification) Check() error {
	switch v.Provider {
	case ProviderCosign:
		if v.Keyless() && len(v.Identities) == 0 {
			return errors.New("keyless cosign verification needs at least one OIDC identity (issuer and subject regular expressions): without one, a signature by anyone with a Sigstore certificate would pass")
		}
	case ProviderNotation:
		if len(v.PublicKeys) == 0 {
			return errors.New("notation verification needs the certificates of its trust store")
		}
	}
	return v.CheckParts()
}

// CheckParts checks what v gives, without requiring keys: those of a
// Secret are added later.
func (v *Verification) CheckParts() error {
	switch v.Provider {
	case ProviderCosign:
		if len(v.PublicKeys) > 0 && (len(v.Identities) > 0 || v.TrustedRoot != nil) {
			return errors.New("OIDC identities and a trusted root are for keyless signatures: give them or public keys, not both")
		}
		if v.TrustPolicy != nil {
			return errors.New("a trust policy is notation's, not cosign's")
		}
		for i, k := range v.PublicKeys {
			if _, err := cryptoutils.UnmarshalPEMToPublicKey(k); err != nil {
				return fmt.Errorf("public key %d is not a PEM public key: %w", i, err)
			}
		}
		for i, id := range v.Identities {
			for _, re := range []struct{ field, expr string }{{"issuer", id.Issuer}, {"subject", id.Subject}} {
				if _, err := regexp.Compile(re.expr); err != nil {
					return fmt.Errorf("OIDC identity %d: %s %q is not a regular expression: %w", i, re.field, re.expr, err)
				}
			}
		}
		if v.TrustedRoot != nil {
			if _, err := root.NewTrustedRootFromJSON(v.TrustedRoot); err != nil {
				return fmt.Errorf("the trusted root is not a Sigstore trusted_root.json: %w", err)
			}
		}
	case ProviderNotation:
		if len(v.Identities) > 0 || v.TrustedRoot != nil {
			return errors.New("OIDC identities and a trusted root are for keyless cosign signatures, not notation")
		}
		if len(v.PublicKeys) > 0 {
			if _, err := newTrustStore(v.PublicKeys); err != nil {
				return err
			}
		}
		if _, err := TrustPolicyDocument(v.TrustPolicy); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown signature provider %q: use %s or %s", v.Provider, ProviderCosign, ProviderNotation)
	}
	return nil
}

// cacheKey names v's outcome for one digest: a verification is done once
// per chart digest and set of keys in the process.
func (v *Verification) cacheKey(digest string) string {
	h := sha256.New()
	write := func(b []byte) { fmt.Fprintf(h, "%d:%s;", len(b), b) }
	write([]byte(digest))
	write([]byte(v.Provider))
	for _, k := range v.PublicKeys {
		write(k)
	}
	for _, id := range v.Identities {
		write([]byte(id.Issuer))
		write([]byte(id.Subject))
	}
	write(v.TrustedRoot)
	write(v.TrustPolicy)
	return hex.EncodeToString(h.Sum(nil))
}

// verifySignature checks that the manifest ref@digest (ref is
// host/path/name) is signed as v says. A success is remembered for the
// process; a failure is not, as it may be the registry's.
func (r *Repositories) verifySignature(ctx context.Context, auth Auth, ref, digest string, v *Verification) (*Verified, error) {
	if err := v.Check(); err != nil {
		return nil, marked{fmt.Errorf("%s@%s: %s: %w", ref, digest, v.Provider, err), ErrSignature}
	}
	key := v.cacheKey(digest)
	r.mu.Lock()
	done, ok := r.verified[key]
	r.mu.Unlock()
	if ok {
		return done, nil
	}
	got, err, _ := r.group.Do("verify\x00"+key, func() (any, error) {
		var out *Verified
		var err error
		switch v.Provider {
		case ProviderCosign:
			out, err = r.verifyCosign(ctx, auth, ref, digest, v)
		default:
			out, err = r.verifyNotation(ctx, auth, ref, digest, v)
		}
		if err != nil {
			name := v.Provider
			if v.Keyless() {
				name += " keyless"
			}
			return nil, marked{fmt.Errorf("%s@%s: %s: %w", ref, digest, name, err), ErrSignature}
		}
		out.Provider, out.Digest = v.Provider, digest
		r.mu.Lock()
		r.verified[key] = out
		r.mu.Unlock()
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	return got.(*Verified), nil
}

// keyFingerprint names a public key in Verified.Signer: the SHA-256 of
// its DER encoding, whatever the PEM's line breaks.
func keyFingerprint(pemKey []byte) string {
	der := []byte(strings.TrimSpace(string(pemKey)))
	if pub, err := cryptoutils.UnmarshalPEMToPublicKey(pemKey); err == nil {
		if b, err := cryptoutils.MarshalPublicKeyToDER(pub); err == nil {
			der = b
		}
	}
	sum := sha256.Sum256(der)
	return "key sha256:" + hex.EncodeToString(sum[:])[:12]
}
