package chartsource_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	chart "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// TestVerifySignature signs charts in a real registry as cosign (with a
// key, and keyless against a private Sigstore) and notation do, and
// resolves them as a plan does.
func TestVerifySignature(t *testing.T) {
	t.Parallel()
	reg := testrepo.NewOCI(t)
	push := func(name, version, description string) string {
		reg.Push(t, &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: name, Version: version, Description: description}}, nil)
		return reg.Digest(t, name, version)
	}
	key, otherKey := testrepo.NewCosignKey(t), testrepo.NewCosignKey(t)
	sigstore, otherSigstore := testrepo.NewSigstore(t), testrepo.NewSigstore(t)
	notary, otherNotary := testrepo.NewNotationKey(t, "release-team"), testrepo.NewNotationKey(t, "someone-else")
	const (
		issuer  = "https://token.actions.githubusercontent.com"
		subject = "https://github.com/example/charts/.github/workflows/release.yaml@refs/heads/main"
	)

	push("cosigned", "1.0.0", "signed with a key")
	reg.CosignSign(t, "cosigned", "1.0.0", key)
	push("unsigned", "1.0.0", "never signed")
	// Signed, then pushed again with other content carrying the first
	// manifest's signature.
	signed := push("tampered", "1.0.0", "as signed")
	reg.CosignSign(t, "tampered", "1.0.0", key)
	changed := push("tampered", "1.0.0", "changed after signing")
	reg.CopyCosignSignatures(t, "tampered", signed, changed)
	push("bundled", "1.0.0", "signed with a key, cosign 3's bundle")
	reg.CosignSignBundle(t, "bundled", "1.0.0", key)
	push("keyless", "1.0.0", "signed keyless")
	reg.CosignSignKeyless(t, "keyless", "1.0.0", sigstore, subject, issuer)
	push("notarized", "1.0.0", "signed with notation")
	reg.NotationSign(t, "notarized", "1.0.0", notary)

	identity := []chartsource.Identity{{Issuer: `^https://token\.actions\.githubusercontent\.com$`, Subject: `^https://github\.com/example/charts/`}}
	cosignKeys := func(keys ...*testrepo.CosignKey) *chartsource.Verification {
		v := &chartsource.Verification{Provider: chartsource.ProviderCosign}
		for _, k := range keys {
			v.PublicKeys = append(v.PublicKeys, k.PublicPEM)
		}
		return v
	}
	for _, tc := range []struct {
		name, chart string
		verify      *chartsource.Verification
		signer      string // a substring of Verified.Signer; empty: refused
		refusal     string // a substring of the error
	}{
		{"cosign key", "cosigned", cosignKeys(key), "key sha256:", ""},
		{"cosign any key of several", "cosigned", cosignKeys(otherKey, key), "key sha256:", ""},
		{"cosign another key", "cosigned", cosignKeys(otherKey), "", "no signature by the 1 public key(s) given"},
		{"cosign key, Sigstore bundle", "bundled", cosignKeys(key), "key sha256:", ""},
		{"cosign another key, Sigstore bundle", "bundled", cosignKeys(otherKey), "", "no signature by the 1 public key(s) given"},
		{"cosign unsigned", "unsigned", cosignKeys(key), "", "no signatures found"},
		{"cosign changed after signing", "tampered", cosignKeys(key), "", "no signature by the 1 public key(s) given"},
		{"cosign keyless", "keyless", &chartsource.Verification{Provider: chartsource.ProviderCosign, Identities: identity, TrustedRoot: sigstore.TrustedRoot},
			subject + " (issuer " + issuer + ")", ""},
		{"cosign keyless, another identity", "keyless", &chartsource.Verification{Provider: chartsource.ProviderCosign,
			Identities: []chartsource.Identity{{Issuer: "^https://accounts\\.google\\.com$", Subject: ".*"}}, TrustedRoot: sigstore.TrustedRoot}, "", "no signature matching the OIDC identities given"},
		{"cosign keyless, another Sigstore", "keyless", &chartsource.Verification{Provider: chartsource.ProviderCosign, Identities: identity, TrustedRoot: otherSigstore.TrustedRoot},
			"", "no signature matching the OIDC identities given"},
		{"cosign keyless without identity", "keyless", &chartsource.Verification{Provider: chartsource.ProviderCosign, TrustedRoot: sigstore.TrustedRoot},
			"", "needs at least one OIDC identity"},
		{"notation", "notarized", &chartsource.Verification{Provider: chartsource.ProviderNotation, PublicKeys: [][]byte{notary.CAPEM}}, "CN=release-team", ""},
		{"notation, another CA", "notarized", &chartsource.Verification{Provider: chartsource.ProviderNotation, PublicKeys: [][]byte{otherNotary.CAPEM}}, "", "notation"},
		{"notation unsigned", "unsigned", &chartsource.Verification{Provider: chartsource.ProviderNotation, PublicKeys: [][]byte{notary.CAPEM}}, "", "no signature is associated"},
		{"notation, cosign-signed", "cosigned", &chartsource.Verification{Provider: chartsource.ProviderNotation, PublicKeys: [][]byte{notary.CAPEM}}, "", "no signature is associated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			repos := chartsource.NewRepositories(t.TempDir(), 0)
			src := chartsource.Source{Repository: reg.URL, Name: tc.chart, Version: "1.0.0", Verify: tc.verify,
				Auth: chartsource.Auth{Username: testrepo.Username, Password: testrepo.Password, CAFile: reg.CAFile}}
			got, err := repos.Resolve(context.Background(), src)
			if tc.signer == "" {
				if !errors.Is(err, chartsource.ErrSignature) || !strings.Contains(err.Error(), tc.refusal) {
					t.Fatalf("got %v, want ErrSignature saying %q", err, tc.refusal)
				}
				if !strings.Contains(err.Error(), reg.Ref(tc.chart)+"@sha256:") || !strings.Contains(err.Error(), tc.verify.Provider) {
					t.Errorf("error %q names no chart digest or provider", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Verified == nil || !strings.Contains(got.Verified.Signer, tc.signer) || got.Verified.Digest != got.Digest || got.Verified.Warning != "" {
				t.Fatalf("verified %+v (chart digest %s), want signer %q", got.Verified, got.Digest, tc.signer)
			}
		})
	}
}

// TestVerifySignatureOnce: releases of one chart resolved together verify
// its signature once.
func TestVerifySignatureOnce(t *testing.T) {
	t.Parallel()
	reg := testrepo.NewOCI(t)
	reg.Push(t, &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "web", Version: "1.0.0"}}, nil)
	key := testrepo.NewCosignKey(t)
	reg.CosignSign(t, "web", "1.0.0", key)
	repos := chartsource.NewRepositories(t.TempDir(), 0)
	src := chartsource.Source{Repository: reg.URL, Name: "web", Version: "1.0.0",
		Verify: &chartsource.Verification{Provider: chartsource.ProviderCosign, PublicKeys: [][]byte{key.PublicPEM}},
		Auth:   chartsource.Auth{Username: testrepo.Username, Password: testrepo.Password, CAFile: reg.CAFile}}
	var wg sync.WaitGroup
	results := make([]*chartsource.Verified, 8)
	for i := range results {
		wg.Go(func() {
			got, err := repos.Resolve(context.Background(), src)
			if err != nil {
				t.Error(err)
				return
			}
			results[i] = got.Verified
		})
	}
	wg.Wait()
	for _, v := range results[1:] {
		if v != results[0] {
			t.Fatalf("verified %p and %p: the signature was verified more than once", v, results[0])
		}
	}
}

// TestVerifyNeedsOCI: a verification asked of a chart that is not in an
// OCI registry fails instead of being skipped.
func TestVerifyNeedsOCI(t *testing.T) {
	t.Parallel()
	repos := chartsource.NewRepositories(t.TempDir(), 0)
	for _, src := range []chartsource.Source{
		{Repository: "https://charts.example.com", Name: "web"},
		{Name: t.TempDir()},
	} {
		src.Verify = &chartsource.Verification{Provider: chartsource.ProviderCosign, PublicKeys: [][]byte{testrepo.NewCosignKey(t).PublicPEM}}
		_, err := repos.Resolve(context.Background(), src)
		if !errors.Is(err, chartsource.ErrSignature) || !strings.Contains(err.Error(), "needs a chart of an OCI registry") {
			t.Errorf("%+v: got %v, want ErrSignature saying it needs OCI", src, err)
		}
	}
}

// BenchmarkVerifySignature is the cost a plan pays per signed chart: a
// verification against the loopback registry (cosign with a key,
// keyless, notation), and a chart already verified in the run.
func BenchmarkVerifySignature(b *testing.B) {
	reg := testrepo.NewOCI(b)
	for _, name := range []string{"cosigned", "keyless", "notarized"} {
		reg.Push(b, &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: name, Version: "1.0.0"}}, nil)
	}
	key, sigstore, notary := testrepo.NewCosignKey(b), testrepo.NewSigstore(b), testrepo.NewNotationKey(b, "release-team")
	reg.CosignSign(b, "cosigned", "1.0.0", key)
	reg.CosignSignKeyless(b, "keyless", "1.0.0", sigstore, "ci@example.com", "https://issuer.example.com")
	reg.NotationSign(b, "notarized", "1.0.0", notary)
	auth := chartsource.Auth{Username: testrepo.Username, Password: testrepo.Password, CAFile: reg.CAFile}
	for _, bc := range []struct {
		name, chart string
		verify      *chartsource.Verification
		cached      bool
	}{
		{"unverified", "cosigned", nil, false},
		{"cosign key", "cosigned", &chartsource.Verification{Provider: "cosign", PublicKeys: [][]byte{key.PublicPEM}}, false},
		{"cosign keyless", "keyless", &chartsource.Verification{Provider: "cosign", TrustedRoot: sigstore.TrustedRoot,
			Identities: []chartsource.Identity{{Issuer: "^https://issuer\\.example\\.com$", Subject: "^ci@example\\.com$"}}}, false},
		{"notation", "notarized", &chartsource.Verification{Provider: "notation", PublicKeys: [][]byte{notary.CAPEM}}, false},
		{"cosign key, verified before", "cosigned", &chartsource.Verification{Provider: "cosign", PublicKeys: [][]byte{key.PublicPEM}}, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cache := b.TempDir()
			repos := chartsource.NewRepositories(cache, 0)
			src := chartsource.Source{Repository: reg.URL, Name: bc.chart, Version: "1.0.0", Verify: bc.verify, Auth: auth}
			if _, err := repos.Resolve(context.Background(), src); err != nil { // the archive cached, as in a plan
				b.Fatal(err)
			}
			for b.Loop() {
				if !bc.cached {
					// A new run: the archive is on disk, the verification not.
					repos = chartsource.NewRepositories(cache, 0)
				}
				if _, err := repos.Resolve(context.Background(), src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestNotationLevels: a notation trust policy that only logs a failed
// authenticity check (audit) or skips verification lets the
// chart through as Ignored, never as verified, as source-controller
// leaves such a source unverified; a failure it enforces refuses it.
func TestNotationLevels(t *testing.T) {
	t.Parallel()
	reg := testrepo.NewOCI(t)
	reg.Push(t, &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "notarized", Version: "1.0.0"}}, nil)
	notary, other := testrepo.NewNotationKey(t, "release-team"), testrepo.NewNotationKey(t, "someone-else")
	reg.NotationSign(t, "notarized", "1.0.0", notary)
	policy := func(level string) []byte {
		if level == "skip" {
			return []byte(`{"version": "1.0", "trustPolicies": [{"name": "all", "registryScopes": ["*"], "signatureVerification": {"level": "skip"}}]}`)
		}
		return []byte(strings.Replace(chartsource.DefaultTrustPolicy, `"level": "strict"`, `"level": "`+level+`"`, 1))
	}
	for _, tc := range []struct {
		name, level string
		ca          *testrepo.NotationKey
		ignored     bool
		refused     bool
	}{
		{"strict, the signer's CA", "strict", notary, false, false},
		{"permissive, the signer's CA", "permissive", notary, false, false},
		{"strict, another CA", "strict", other, false, true},
		{"permissive, another CA", "permissive", other, false, true}, // authenticity is enforced
		{"audit, another CA", "audit", other, true, false},
		{"skip", "skip", other, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := chartsource.Source{Repository: reg.URL, Name: "notarized", Version: "1.0.0",
				Verify: &chartsource.Verification{Provider: chartsource.ProviderNotation, PublicKeys: [][]byte{tc.ca.CAPEM}, TrustPolicy: policy(tc.level)},
				Auth:   chartsource.Auth{Username: testrepo.Username, Password: testrepo.Password, CAFile: reg.CAFile}}
			got, err := chartsource.NewRepositories(t.TempDir(), 0).Resolve(context.Background(), src)
			if tc.refused {
				if !errors.Is(err, chartsource.ErrSignature) {
					t.Fatalf("got %v, want ErrSignature", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Verified == nil || got.Verified.Ignored != tc.ignored || tc.ignored && got.Verified.Warning == "" {
				t.Errorf("verified %+v, want ignored %t with what was let through", got.Verified, tc.ignored)
			}
		})
	}
}

// TestOCIPlainHTTP: a registry serving plain HTTP (kind's local registry)
// is refused with what to set, and with PlainHTTP its charts resolve, and
// verify with cosign, notation and provenance files.
func TestOCIPlainHTTP(t *testing.T) {
	t.Parallel()
	reg := testrepo.NewOCIPlainHTTP(t)
	signer := testrepo.NewSigner(t, "charts")
	reg.Push(t, &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "app", Version: "1.0.0"}}, signer)
	key, notary := testrepo.NewCosignKey(t), testrepo.NewNotationKey(t, "release-team")
	other := testrepo.NewSigner(t, "other")
	reg.CosignSign(t, "app", "1.0.0", key)
	reg.NotationSign(t, "app", "1.0.0", notary)
	digest := reg.Digest(t, "app", "1.0.0")

	t.Run("without plain HTTP", func(t *testing.T) {
		t.Parallel()
		_, err := chartsource.NewRepositories(t.TempDir(), 0).Resolve(context.Background(), chartsource.Source{Repository: reg.URL, Name: "app"})
		if err == nil || !strings.Contains(err.Error(), "server gave HTTP response to HTTPS client") || !strings.Contains(err.Error(), "set chart.plain_http = true") {
			t.Fatalf("got %v, want the HTTPS failure and what to set", err)
		}
	})
	for _, tc := range []struct {
		name    string
		verify  *chartsource.Verification
		keyring string
		signer  string // a substring of Verified.Signer
		refused error
	}{
		{"unverified", nil, "", "", nil},
		{"cosign", &chartsource.Verification{Provider: chartsource.ProviderCosign, PublicKeys: [][]byte{key.PublicPEM}}, "", "key sha256:", nil},
		{"cosign, another key", &chartsource.Verification{Provider: chartsource.ProviderCosign, PublicKeys: [][]byte{testrepo.NewCosignKey(t).PublicPEM}}, "", "", chartsource.ErrSignature},
		{"notation", &chartsource.Verification{Provider: chartsource.ProviderNotation, PublicKeys: [][]byte{notary.CAPEM}}, "", "CN=release-team", nil},
		{"provenance", nil, signer.Keyring, "", nil},
		{"provenance, another key", nil, other.Keyring, "", chartsource.ErrProvenance},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := chartsource.NewRepositories(t.TempDir(), 0).Resolve(context.Background(), chartsource.Source{
				Repository: reg.URL, Name: "app", Verify: tc.verify, Keyring: tc.keyring, Auth: chartsource.Auth{PlainHTTP: true}})
			if tc.refused != nil {
				if !errors.Is(err, tc.refused) {
					t.Fatalf("got %v, want %v", err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Digest != digest || got.Chart.Metadata.Version != "1.0.0+"+strings.TrimPrefix(digest, "sha256:")[:12] {
				t.Errorf("resolved %s@%s, want 1.0.0+<digest>@%s", got.Chart.Metadata.Version, got.Digest, digest)
			}
			if tc.signer == "" {
				return
			}
			if got.Verified == nil || !strings.Contains(got.Verified.Signer, tc.signer) {
				t.Errorf("verified %+v, want signer %q", got.Verified, tc.signer)
			}
		})
	}
}
