package chartsource

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/cosign/v3/pkg/cosign"
	"github.com/sigstore/cosign/v3/pkg/oci"
	ociremote "github.com/sigstore/cosign/v3/pkg/oci/remote"
	rekorclient "github.com/sigstore/rekor/pkg/client"
	rekorgenclient "github.com/sigstore/rekor/pkg/generated/client"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/tuf"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
)

// verifyCosign verifies the cosign signatures of ref@digest as
// source-controller does: Sigstore bundles (cosign 3) attached as OCI
// referrers when there are any, else the signature tag (cosign 2,
// sha256-<hex>.sig). With public keys, any key's signature passes and
// the transparency log is not consulted (Flux's choice); keyless, the
// certificate must chain to the trusted root's Fulcio CA, carry a CT
// log's timestamp, be logged in its Rekor, and match an identity.
func (r *Repositories) verifyCosign(ctx context.Context, auth Auth, ref, digest string, v *Verification) (*Verified, error) {
	var nameOpts []name.Option
	if auth.PlainHTTP {
		nameOpts = append(nameOpts, name.Insecure)
	}
	signed, err := name.NewDigest(ref+"@"+digest, nameOpts...)
	if err != nil {
		return nil, fmt.Errorf("reference %s@%s: %w", ref, digest, err)
	}
	httpClient, err := r.httpClient(auth)
	if err != nil {
		return nil, err
	}
	registryOpts := []ociremote.Option{ociremote.WithRemoteOptions(
		remote.WithContext(ctx), remote.WithTransport(httpClient.Transport), remote.WithAuthFromKeychain(keychain{ctx, auth}),
		remote.WithUserAgent(helmUserAgent))}
	if len(v.PublicKeys) > 0 {
		var errs []error
		for _, key := range v.PublicKeys {
			pub, err := cryptoutils.UnmarshalPEMToPublicKey(key)
			if err != nil {
				return nil, fmt.Errorf("public key is not PEM: %w", err)
			}
			verifier, err := signature.LoadVerifier(pub, crypto.SHA256)
			if err != nil {
				return nil, fmt.Errorf("public key: %w", err)
			}
			co := &cosign.CheckOpts{RegistryClientOpts: registryOpts, SigVerifier: verifier, Offline: true, IgnoreTlog: true}
			if _, err := verifyCosignOnce(ctx, signed, co); err != nil {
				errs = append(errs, err)
				continue
			}
			return &Verified{Signer: keyFingerprint(key)}, nil
		}
		return nil, fmt.Errorf("no signature by the %d public key(s) given: %w", len(v.PublicKeys), errors.Join(errs...))
	}
	trusted, err := r.trustedRoot(ctx, v.TrustedRoot)
	if err != nil {
		return nil, err
	}
	rekor, err := rekorClient(trusted)
	if err != nil {
		return nil, err
	}
	var errs []error
	// One identity at a time: cosign's bundle verifier takes only one.
	for _, id := range v.Identities {
		co := &cosign.CheckOpts{RegistryClientOpts: registryOpts, TrustedMaterial: trusted, RekorClient: rekor,
			Identities: []cosign.Identity{{IssuerRegExp: id.Issuer, SubjectRegExp: id.Subject}}}
		sigs, err := verifyCosignOnce(ctx, signed, co)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		return &Verified{Signer: keylessSigner(sigs)}, nil
	}
	return nil, fmt.Errorf("no signature matching the OIDC identities given: %w", errors.Join(errs...))
}

// verifyCosignOnce looks for Sigstore bundles first and falls back to
// signature tags when there are none, as cosign's CLI does. Like the CLI
// (and unlike source-controller), it checks that what was signed names
// this manifest: a signature copied from another manifest is refused.
func verifyCosignOnce(ctx context.Context, signed name.Reference, co *cosign.CheckOpts) ([]oci.Signature, error) {
	var sigs []oci.Signature
	bundles, _, err := cosign.GetBundles(ctx, signed, co.RegistryClientOpts)
	if err == nil && len(bundles) > 0 {
		co.NewBundleFormat, co.ClaimVerifier = true, cosign.IntotoSubjectClaimVerifier
		sigs, _, err = cosign.VerifyImageAttestations(ctx, signed, co)
	} else {
		co.ClaimVerifier = cosign.SimpleClaimVerifier
		sigs, _, err = cosign.VerifyImageSignatures(ctx, signed, co)
	}
	if err == nil && len(sigs) == 0 {
		err = errors.New("no matching signatures")
	}
	return sigs, err
}

// keylessSigner is the identity of the first verified signature's
// certificate: its subject (SAN) and OIDC issuer.
func keylessSigner(sigs []oci.Signature) string {
	for _, sig := range sigs {
		cert, err := sig.Cert()
		if err != nil || cert == nil {
			continue
		}
		subject := "unknown subject"
		if sans := cryptoutils.GetSubjectAlternateNames(cert); len(sans) > 0 {
			subject = sans[0]
		}
		ext := cosign.CertExtensions{Cert: cert}
		return subject + " (issuer " + ext.GetIssuer() + ")"
	}
	return "keyless signer"
}

// publicGoodRoot is Sigstore's public-good trusted root, read once per
// process from its TUF repository (cached under the chart cache), and
// tried again at most every minute after a failure, as Flux does.
var publicGoodRoot struct {
	sync.Mutex
	root    root.TrustedMaterial
	err     error
	tried   time.Time
	running chan struct{}
}

// trustedRoot is the trusted material of a trusted_root.json, or of
// Sigstore's public-good instance when data is nil.
func (r *Repositories) trustedRoot(ctx context.Context, data []byte) (root.TrustedMaterial, error) {
	if data != nil {
		tr, err := root.NewTrustedRootFromJSON(data)
		if err != nil {
			return nil, fmt.Errorf("trusted root is not a Sigstore trusted_root.json: %w", err)
		}
		return tr, nil
	}
	p := &publicGoodRoot
	p.Lock()
	if p.root != nil {
		defer p.Unlock()
		return p.root, nil
	}
	if p.running == nil && (p.err == nil || time.Since(p.tried) >= time.Minute) {
		p.running, p.tried = make(chan struct{}), time.Now()
		opts := tuf.DefaultOptions().WithCachePath(filepath.Join(r.cacheDir, "sigstore-tuf"))
		// The TUF client takes no context: it runs aside, and a caller
		// stops waiting when its context ends.
		go func(done chan struct{}) {
			tr, err := root.NewLiveTrustedRoot(opts)
			p.Lock()
			if err != nil {
				p.err = fmt.Errorf("reading Sigstore's public-good trusted root from %s (set chart.verify.trusted_root where it cannot be reached): %w", opts.RepositoryBaseURL, err)
			} else {
				p.root, p.err = tr, nil
			}
			p.running = nil
			p.Unlock()
			close(done)
		}(p.running)
	}
	running, err := p.running, p.err
	p.Unlock()
	if running == nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-running:
	}
	return r.trustedRoot(ctx, nil)
}

// rekorClient is a client of the first Rekor log of the trusted root
// with a base URL: cosign asks it for a signature's log entry only when
// the signature carries none.
func rekorClient(trusted root.TrustedMaterial) (*rekorgenclient.Rekor, error) {
	for _, log := range trusted.RekorLogs() {
		if log.BaseURL == "" {
			continue
		}
		if _, err := url.Parse(log.BaseURL); err != nil {
			continue
		}
		return rekorclient.GetRekorClient(log.BaseURL, rekorclient.WithUserAgent(helmUserAgent))
	}
	return nil, errors.New("the trusted root names no Rekor log with a base URL")
}

// keychain gives go-containerregistry the registry login of auth, as the
// registry client sends it.
type keychain struct {
	ctx  context.Context
	auth Auth
}

func (k keychain) Resolve(target authn.Resource) (authn.Authenticator, error) {
	cred, err := registryCredential(k.auth)
	if err != nil {
		return nil, err
	}
	c, err := cred(k.ctx, target.RegistryStr())
	if err != nil {
		return nil, err
	}
	if c.Username == "" && c.Password == "" && c.RefreshToken == "" && c.AccessToken == "" {
		return authn.Anonymous, nil
	}
	return authn.FromConfig(authn.AuthConfig{Username: c.Username, Password: c.Password, IdentityToken: c.RefreshToken, RegistryToken: c.AccessToken}), nil
}
