//go:build unix

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// signedRelease is a release of chart from the registry, verified as
// verify (an HCL object's body) says.
func signedRelease(name, ns, engine string, oci *testrepo.OCI, chart, verify string) string {
	return fmt.Sprintf(`
resource "helmrelease_release" %[1]q {
  name      = %[1]q
  namespace = %[2]q
  engine    = %[3]q
  chart = {
    name       = %[5]q
    repository = %[4]q
    version    = "1.0.0"
    username   = %[6]q
    password   = %[7]q
    ca_file    = %[8]q
    verify     = { %[9]s }
  }
}
`, name, ns, engine, oci.URL, chart, testrepo.Username, testrepo.Password, oci.CAFile, verify)
}

// testSignedCharts: OCI charts signed with cosign (a key, and keyless
// against a private Sigstore) and notation install on both engines
// through terraform; the Flux engine's OCIRepository carries spec.verify
// and source-controller verifies too; unsigned, another key and changed
// after signing fail at plan with nothing written.
func testSignedCharts(t *testing.T, run *fluxRun) {
	ns, dyn := run.ns, dynamic.NewForConfigOrDie(run.rest)
	chartDir := testdataPath("charts", "svc")
	oci := testrepo.NewOCI(t)
	key, otherKey := testrepo.NewCosignKey(t), testrepo.NewCosignKey(t)
	sigstore := testrepo.NewSigstore(t)
	notary, otherNotary := testrepo.NewNotationKey(t, "release-team"), testrepo.NewNotationKey(t, "someone-else")
	const (
		issuer  = "https://token.actions.githubusercontent.com"
		subject = "https://github.com/example/charts/.github/workflows/release.yaml@refs/heads/main"
	)
	push := func(name string) string {
		c := testrepo.LoadChart(t, chartDir, "1.0.0")
		c.Metadata.Name = name
		oci.Push(t, c, nil)
		return oci.Digest(t, name, "1.0.0")
	}
	push("cosigned")
	oci.CosignSign(t, "cosigned", "1.0.0", key)
	push("keyless")
	oci.CosignSignKeyless(t, "keyless", "1.0.0", sigstore, subject, issuer)
	push("notarized")
	oci.NotationSign(t, "notarized", "1.0.0", notary)
	push("unsigned")
	signed := push("tampered")
	oci.CosignSign(t, "tampered", "1.0.0", key)
	c := testrepo.LoadChart(t, chartDir, "1.0.0")
	c.Metadata.Name, c.Metadata.Description = "tampered", "changed after signing"
	oci.Push(t, c, nil)
	tampered := oci.Digest(t, "tampered", "1.0.0")
	oci.CopyCosignSignatures(t, "tampered", signed, tampered)

	cosignKey := fmt.Sprintf("provider = \"cosign\", public_keys = [%q]", key.PublicPEM)
	keyless := fmt.Sprintf("provider = \"cosign\", match_oidc_identity = [{ issuer = %q, subject = %q }], trusted_root = %q",
		`^https://token\.actions\.githubusercontent\.com$`, `^https://github\.com/example/charts/`, sigstore.TrustedRoot)
	notation := fmt.Sprintf("provider = \"notation\", public_keys = [%q]", notary.CAPEM)

	// The keys in a Secret of the cluster, and an OCIRepository managed
	// elsewhere that verifies with them, for chart_ref.
	createObjects(t, dyn, ns, append(registrySecrets(t, oci, "signed-login", "signed-ca"), []map[string]any{
		{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "signers"}, "stringData": map[string]any{"release.pub": string(key.PublicPEM)}},
		// Notation certificates without trustpolicy.json: the in-process
		// engine's default policy applies; source-controller has none.
		{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "notaries"}, "stringData": map[string]any{"ca.crt": string(notary.CAPEM)}},
		{"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "OCIRepository", "metadata": map[string]any{"name": "signed-oci"}, "spec": map[string]any{
			"url": oci.URL + "/cosigned", "interval": "10m", "ref": map[string]any{"semver": "*"},
			"secretRef": map[string]any{"name": "signed-login"}, "certSecretRef": map[string]any{"name": "signed-ca"},
			"layerSelector": map[string]any{"mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip", "operation": "copy"},
			"verify":        map[string]any{"provider": "cosign", "secretRef": map[string]any{"name": "signers"}},
		}},
	}...))
	artifactOf(t, dyn, ociRepositories, ns, "signed-oci", true, func(r string) bool { return strings.HasPrefix(r, "1.0.0@sha256:") })
	// A HelmChart of an OCI HelmRepository: its artifact revision is the
	// chart version. (Without spec.verify: source-controller's verifier
	// of HelmCharts does not use the HelmRepository's CA, so it cannot
	// reach this registry; the flux package tests the verification the
	// in-process engine reads from it.)
	createObjects(t, dyn, ns, []map[string]any{
		{"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmRepository", "metadata": map[string]any{"name": "signed-repo"}, "spec": map[string]any{
			"type": "oci", "url": oci.URL, "interval": "10m", "secretRef": map[string]any{"name": "signed-login"}, "certSecretRef": map[string]any{"name": "signed-ca"},
		}},
		{"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmChart", "metadata": map[string]any{"name": "signed-hc"}, "spec": map[string]any{
			"chart": "cosigned", "version": "1.0.0", "interval": "10m", "sourceRef": map[string]any{"kind": "HelmRepository", "name": "signed-repo"},
		}},
	})
	artifactOf(t, dyn, helmCharts, ns, "signed-hc", true, func(r string) bool { return r == "1.0.0" })

	w := newWorkspace(t, "signed")
	cacheDir := t.TempDir()
	config := chartRefProvider(run.kubeconfig, cacheDir)
	for _, engine := range []string{"helm", "flux"} {
		config += signedRelease("cosign-"+engine, ns, engine, oci, "cosigned", cosignKey) +
			signedRelease("keyless-"+engine, ns, engine, oci, "keyless", keyless) +
			signedRelease("notation-"+engine, ns, engine, oci, "notarized", notation) +
			signedRelease("secret-"+engine, ns, engine, oci, "cosigned", `secret_ref = { name = "signers" }`)
	}
	// The in-process engine verifies the OCIRepository's chart as its
	// spec.verify says.
	config += chartRefRelease("ref-helm", ns, "helm", "OCIRepository", "signed-oci") + chartRefRelease("hc-helm", ns, "helm", "HelmChart", "signed-hc")
	// A trust policy at level audit, and a CA that did not sign: deployed,
	// never verified.
	audit := strings.Replace(chartsource.DefaultTrustPolicy, `"level": "strict"`, `"level": "audit"`, 1)
	config += signedRelease("audit-helm", ns, "helm", oci, "notarized", fmt.Sprintf("provider = \"notation\", public_keys = [%q], trust_policy = %q", otherNotary.CAPEM, audit))

	// Refused at plan, nothing written: each release's error names it.
	refused := config
	for _, r := range []struct{ name, chart, verify string }{
		{"unsigned", "unsigned", cosignKey},
		{"other-key", "cosigned", fmt.Sprintf("provider = \"cosign\", public_keys = [%q]", otherKey.PublicPEM)},
		{"tampered", "tampered", cosignKey},
		{"other-identity", "keyless", strings.Replace(keyless, `^https://github\\.com/example/charts/`, `^https://github\\.com/someone-else/`, 1)},
		{"notation-unsigned", "unsigned", notation},
	} {
		refused += signedRelease("bad-"+r.name, ns, "helm", oci, r.chart, r.verify)
	}
	refused += signedRelease("bad-flux", ns, "flux", oci, "unsigned", cosignKey) +
		signedRelease("notation-policy-flux", ns, "flux", oci, "notarized", `provider = "notation", secret_ref = { name = "notaries" }`)
	w.write(refused)
	plan := w.must(1, "plan", "-input=false", "-no-color")
	for _, want := range []string{
		oci.Ref("unsigned") + "@sha256:", "no signatures found",
		"no signature by the 1 public key(s) given",
		oci.Ref("tampered") + "@" + tampered, "invalid or missing digest in claim",
		"none of the expected identities matched",
		"no signature is associated",
	} {
		if !strings.Contains(strings.Join(strings.Fields(plan.stderr), " "), want) {
			t.Errorf("the plan's errors do not say %q:\n%s", want, plan.stderr)
		}
	}
	if !has(plan.stderr, "Notation Secret without a trust policy with the Flux engine") || !has(plan.stderr, "The Secret "+ns+"/notaries holds no trustpolicy.json") {
		t.Errorf("the plan does not refuse notation-policy-flux, whose Secret has no trust policy:\n%s", plan.stderr)
	}
	if n := strings.Count(plan.stderr, "Chart signature not verified"); n != 6 {
		t.Errorf("%d releases refused for their signature, want 6:\n%s", n, plan.stderr)
	}
	if left := providerObjects(t, run.rest, ns); len(left) > 0 {
		t.Errorf("a refused plan wrote %v", left)
	}

	w.write(config)
	applied := w.apply()
	st := newStorageOn(t, run.rest, ns)
	statuses := w.statuses()
	if latest := st.latest("hc-helm"); latest == nil || string(latest.Info.Status) != "deployed" || latest.Chart.Metadata.Version != "1.0.0" {
		t.Errorf("release hc-helm of a HelmChart of an OCI HelmRepository: %s, want deployed at the artifact's version 1.0.0", st.describe("hc-helm"))
	}
	if latest := st.latest("audit-helm"); latest == nil || string(latest.Info.Status) != "deployed" {
		t.Errorf("release audit-helm: %s, want deployed (the trust policy only logs)", st.describe("audit-helm"))
	}
	if !has(applied.stdout+applied.stderr, "Chart signature not enforced") {
		t.Errorf("the apply does not warn that audit-helm's signature was not enforced:\n%s", applied.stdout+applied.stderr)
	}
	ignored := false
	for _, c := range statuses["audit-helm"].Conditions {
		ignored = ignored || c.Type == "SourceVerified" && !c.Status && c.Reason == "VerificationIgnored" && has(c.Message, "authenticity")
	}
	if !ignored {
		t.Errorf("release audit-helm: conditions %+v, want SourceVerified False (VerificationIgnored) naming the authenticity check let through", statuses["audit-helm"].Conditions)
	}
	for _, engine := range []string{"helm", "flux"} {
		for name, signer := range map[string]string{"cosign": "key sha256:", "keyless": subject + " (issuer " + issuer + ")", "notation": "CN=release-team", "secret": "key sha256:", "ref": "key sha256:"} {
			if name == "ref" && engine == "flux" {
				continue
			}
			name += "-" + engine
			if latest := st.latest(name); latest == nil || string(latest.Info.Status) != "deployed" {
				t.Errorf("release %s: %s, want deployed", name, st.describe(name))
			}
			found := false
			for _, c := range statuses[name].Conditions {
				if c.Type == "SourceVerified" && c.Status && strings.Contains(c.Message, "verified signature of revision sha256:") && strings.Contains(c.Message, signer) {
					found = true
				}
			}
			if !found {
				t.Errorf("release %s: no SourceVerified condition naming %q: %+v", name, signer, statuses[name].Conditions)
			}
			if engine == "flux" && !strings.Contains(fmt.Sprint(statuses[name].Conditions), "source-controller: verified signature of revision") {
				t.Errorf("release %s: the SourceVerified condition does not give source-controller's verification: %+v", name, statuses[name].Conditions)
			}
		}
	}
	for name, want := range map[string]string{"cosign-flux": "cosign", "keyless-flux": "cosign", "notation-flux": "notation", "secret-flux": "cosign"} {
		repo, err := dyn.Resource(ociRepositories).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if provider, _, _ := unstructured.NestedString(repo.Object, "spec", "verify", "provider"); provider != want {
			t.Errorf("OCIRepository %s: spec.verify.provider %q, want %s", name, provider, want)
		}
		conds, _, _ := unstructured.NestedSlice(repo.Object, "status", "conditions")
		verified := false
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "SourceVerified" && m["status"] == "True" {
				verified = true
			}
		}
		if !verified {
			t.Errorf("OCIRepository %s: source-controller did not verify it: %v", name, conds)
		}
	}
	repo, err := dyn.Resource(ociRepositories).Namespace(ns).Get(context.Background(), "secret-flux", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ref, _, _ := unstructured.NestedString(repo.Object, "spec", "verify", "secretRef", "name"); ref != "signers" {
		t.Errorf("OCIRepository secret-flux: spec.verify.secretRef %q, want the user's Secret signers", ref)
	}
	w.planIsEmpty()

	// chart.verify removed from releases already installed (both
	// engines), then given again (in-process: with Flux, source-controller
	// verifies the same digest again and helm-controller only sees it at
	// its next requeue of dependencies, 30 s later): no Helm action, the
	// condition follows, nothing planned after either apply.
	sourceVerified := func(name string) bool {
		for _, c := range w.statuses()[name].Conditions {
			if c.Type == "SourceVerified" {
				return true
			}
		}
		return false
	}
	without := func(config string, engines ...string) string {
		for _, engine := range engines {
			config = strings.Replace(config, signedRelease("cosign-"+engine, ns, engine, oci, "cosigned", cosignKey),
				strings.Replace(signedRelease("cosign-"+engine, ns, engine, oci, "cosigned", ""), "verify     = {  }", "", 1), 1)
		}
		return config
	}
	for _, step := range []struct {
		config   string
		verified map[string]bool
	}{
		{without(config, "helm", "flux"), map[string]bool{"cosign-helm": false, "cosign-flux": false}},
		{without(config, "flux"), map[string]bool{"cosign-helm": true, "cosign-flux": false}},
	} {
		w.write(step.config)
		w.apply()
		w.planIsEmpty()
		for name, verified := range step.verified {
			if got := sourceVerified(name); got != verified {
				t.Errorf("release %s with chart.verify %t: SourceVerified condition %t", name, verified, got)
			}
			if latest := st.latest(name); latest == nil || latest.Version != 1 {
				t.Errorf("release %s: %s, want revision 1 (no Helm action)", name, st.describe(name))
			}
		}
	}
	repo, err = dyn.Resource(ociRepositories).Namespace(ns).Get(context.Background(), "cosign-flux", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, found, _ := unstructured.NestedMap(repo.Object, "spec", "verify"); found {
		t.Errorf("OCIRepository cosign-flux without chart.verify: spec.verify %v", v)
	}
	if _, err := dyn.Resource(secrets).Namespace(ns).Get(context.Background(), "cosign-flux-chart-verification", metav1.GetOptions{}); err == nil {
		t.Error("the Secret cosign-flux-chart-verification is left after chart.verify was removed")
	}
	w.must(0, "destroy", "-auto-approve", "-input=false", "-no-color")
	if left := providerObjects(t, run.rest, ns); len(left) > 0 {
		t.Errorf("after destroy the provider's sources and Secrets are left: %v", left)
	}
	if _, err := dyn.Resource(secrets).Namespace(ns).Get(context.Background(), "signers", metav1.GetOptions{}); err != nil {
		t.Errorf("destroy deleted the user's Secret signers: %v", err)
	}
}
