package chartsource

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	chart "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// TestArtifact: a source read from a Flux object resolves to the
// object's artifact. An OCIRepository's manifest is pulled by its digest,
// whatever the tags say now, with the TLS and login given as text (from
// the object's Secrets); its version carries the digest as
// helm-controller's does. A HelmChart's version is its artifact revision;
// a chart its source holds at another version, or published again with
// another digest, is refused.
func TestArtifact(t *testing.T) {
	ctx := context.Background()
	repos := NewRepositories(t.TempDir(), 0)
	reg := newOCIRegistry(t)
	reg.push(t, "1.0.0", "first push")
	ca, err := os.ReadFile(reg.auth.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	auth := Auth{Username: reg.auth.Username, Password: reg.auth.Password, CAPEM: string(ca)}
	first, err := repos.OCI(ctx, Source{Repository: reg.url, Name: "web", Version: "1.0.0", Auth: reg.auth})
	if err != nil {
		t.Fatal(err)
	}
	reg.push(t, "1.0.0", "second push") // the tag moved since source-controller fetched it
	ref := &ChartRef{Kind: KindOCIRepository, Name: "web", Namespace: "apps"}
	for _, revision := range []string{"1.0.0@" + first.Digest, first.Digest} {
		got, err := repos.Resolve(ctx, Source{Repository: reg.url, Name: "web", Auth: auth, ChartRef: ref, Artifact: &Artifact{Revision: revision}})
		if err != nil {
			t.Fatalf("artifact %s: %v", revision, err)
		}
		if got.Version != first.Version || got.Digest != first.Digest || got.Chart.Metadata.Description != "first push" || got.SourceRevision != revision {
			t.Errorf("artifact %s: resolved %s %s (%s) from %s, want %s %s (first push)", revision, got.Version, got.Digest, got.Chart.Metadata.Description, got.SourceRevision, first.Version, first.Digest)
		}
		if rec, ok := RecordedSource(got.Chart); !ok || rec.ChartRef == nil || *rec.ChartRef != *ref || rec.Repository != "" {
			t.Errorf("artifact %s: recorded %+v, want the reference alone", revision, rec)
		}
	}
	for _, tc := range []struct{ revision, want string }{
		{"2.0.0@" + first.Digest, "artifact revision 2.0.0 does not match chart version 1.0.0"},
		{"1.0.0@sha1:abc", "names no sha256 manifest digest"},
	} {
		_, err := repos.Resolve(ctx, Source{Repository: reg.url, Name: "web", Auth: auth, ChartRef: ref, Artifact: &Artifact{Revision: tc.revision}})
		if !errors.Is(err, ErrChartRef) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("artifact %s: %v, want %q", tc.revision, err, tc.want)
		}
	}

	s := newRepoServer(t, false, relative)
	helmChart := &ChartRef{Kind: KindHelmChart, Name: "web", Namespace: "apps"}
	at := func(revision, digest string) Source {
		return Source{Name: "web", Repository: s.URL, Version: "=1.2.3", ChartRef: helmChart, Artifact: &Artifact{Revision: revision, Digest: digest, SourceRevision: "sha256:index"}}
	}
	got, err := repos.Resolve(ctx, at("1.2.3", "sha256:"+digestOf(s.archive)))
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != "1.2.3" || got.Chart.Metadata.Version != "1.2.3" || got.SourceRevision != "sha256:index" {
		t.Errorf("HelmChart artifact: resolved %s (chart %s) from %q", got.Version, got.Chart.Metadata.Version, got.SourceRevision)
	}
	// Values files make source-controller append the generation.
	got, err = repos.Version(ctx, at("1.2.3+4", ""))
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != "1.2.3+4" || got.Chart == nil || got.Chart.Metadata.Version != "1.2.3+4" {
		t.Errorf("HelmChart artifact 1.2.3+4: resolved %s", got.Version)
	}
	for _, tc := range []struct {
		src  Source
		want string
	}{
		{at("1.2.4", ""), "the source holds chart version 1.2.3, but the HelmChart's artifact is 1.2.4"},
		{at("1.2.3", "sha256:"+strings.Repeat("0", 64)), "was published again since source-controller fetched it"},
	} {
		if _, err := repos.Resolve(ctx, tc.src); !errors.Is(err, ErrChartRef) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("artifact %s: %v, want %q", tc.src.Artifact.Revision, err, tc.want)
		}
	}

	// Pinned by a plan's refresh: the artifact pinned resolves; one the
	// object has moved past since (its version fetched from the source
	// is no longer the object's) fails as changed since the plan.
	pinned := at("1.2.3", "")
	pinned.Pin = &Pin{Version: "1.2.3", SourceRevision: "sha256:index"}
	if got, err := repos.Resolve(ctx, pinned); err != nil || got.Version != "1.2.3" {
		t.Errorf("pinned at the object's artifact: %v (%+v)", err, got)
	}
	moved := at("1.2.4", "")
	moved.Version, moved.Pin = "=1.2.4", pinned.Pin
	if _, err := repos.Resolve(ctx, moved); !errors.Is(err, ErrChangedSincePlan) || !strings.Contains(err.Error(), "resolved to 1.2.3") || !strings.Contains(err.Error(), "now resolves to 1.2.4") {
		t.Errorf("pinned, the artifact moved since: %v, want ErrChangedSincePlan naming both", err)
	}
}

// TestHelmChartOfOCIRepository: a HelmChart of an OCI HelmRepository has
// the chart version as its artifact revision (no manifest digest): the
// chart is pulled by that version's tag, verified as the HelmChart's
// spec.verify says, and deployed at the artifact's version, as
// helm-controller deploys it.
func TestHelmChartOfOCIRepository(t *testing.T) {
	ctx := context.Background()
	reg := testrepo.NewOCI(t)
	reg.Push(t, &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "web", Version: "1.0.0"}}, nil)
	key, other := testrepo.NewCosignKey(t), testrepo.NewCosignKey(t)
	reg.CosignSign(t, "web", "1.0.0", key)
	src := func(k *testrepo.CosignKey) Source {
		s := Source{Repository: reg.URL, Name: "web", Version: "=1.0.0", Auth: Auth{Username: testrepo.Username, Password: testrepo.Password, CAFile: reg.CAFile},
			ChartRef: &ChartRef{Kind: KindHelmChart, Name: "web", Namespace: "apps"}, Artifact: &Artifact{Revision: "1.0.0"}}
		if k != nil {
			s.Verify = &Verification{Provider: ProviderCosign, PublicKeys: [][]byte{k.PublicPEM}}
		}
		return s
	}
	repos := NewRepositories(t.TempDir(), 0)
	for _, k := range []*testrepo.CosignKey{nil, key} {
		got, err := repos.Resolve(ctx, src(k))
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != "1.0.0" || got.Chart.Metadata.Version != "1.0.0" || got.Digest != reg.Digest(t, "web", "1.0.0") {
			t.Errorf("resolved %s (chart %s, digest %s), want 1.0.0 of %s", got.Version, got.Chart.Metadata.Version, got.Digest, reg.Digest(t, "web", "1.0.0"))
		}
		if (k != nil) != (got.Verified != nil) {
			t.Errorf("verified %+v with key %v", got.Verified, k)
		}
	}
	if _, err := repos.Resolve(ctx, src(other)); !errors.Is(err, ErrSignature) {
		t.Errorf("signed by another key: %v, want ErrSignature", err)
	}

	// source-controller stores the chart layer as its artifact: the tag
	// pushed again since names another, which is refused, not deployed.
	built, err := repos.Resolve(ctx, src(nil))
	if err != nil {
		t.Fatal(err)
	}
	withDigest := src(nil)
	withDigest.Artifact.Digest = built.LayerDigest
	if _, err := repos.Resolve(ctx, withDigest); err != nil {
		t.Errorf("the artifact's digest is the chart layer's: %v", err)
	}
	reg.Push(t, &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "web", Version: "1.0.0", Description: "pushed again"}}, nil)
	if got, err := repos.Resolve(ctx, withDigest); !errors.Is(err, ErrChartRef) || !strings.Contains(err.Error(), "published again") {
		t.Errorf("the tag pushed again since source-controller built the HelmChart: %v (%+v), want ErrChartRef", err, got)
	}
}
