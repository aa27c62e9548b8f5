package chartsource

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
)

// TestSourceRecorded: a resolved chart records the source as configured
// (repository, name, constraint, strategy, values files) and the digest
// resolved, never the credentials, for Helm to keep with the release.
func TestSourceRecorded(t *testing.T) {
	ctx := context.Background()
	repo := newRepoServer(t, false, relative)
	withUser := strings.Replace(repo.URL, "http://", "http://bot:url-s3cret@", 1)
	reg := newOCIRegistry(t)
	reg.push(t, "1.0.0", "pushed")

	for _, tc := range []struct {
		name string
		src  Source
		want Recorded
	}{
		{"repository", Source{Name: "web", Version: "~1.2", Repository: repo.URL, ValuesFiles: []string{"values.yaml"}, IgnoreMissingValuesFiles: true},
			Recorded{Repository: repo.URL, Name: "web", Version: "~1.2", ValuesFiles: []string{"values.yaml"}, IgnoreMissingValuesFiles: true}},
		{"credentials in the URL", Source{Name: "web", Repository: withUser, ReconcileStrategy: StrategyRevision, Auth: Auth{Username: "bot", Password: "auth-s3cret"}},
			Recorded{Repository: repo.URL, Name: "web", ReconcileStrategy: StrategyRevision}},
		{"OCI", Source{Name: "web", Version: "1.0.0", Repository: reg.url, Auth: reg.auth},
			Recorded{Repository: reg.url, Name: "web", Version: "1.0.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resolved, err := NewRepositories(t.TempDir(), 0).Resolve(ctx, tc.src)
			if err != nil {
				t.Fatal(err)
			}
			// With the chart deployed: what a plan taking it over finds again.
			if resolved.Digest == "" {
				t.Fatal("resolved no digest: the record's would prove nothing")
			}
			want := tc.want
			want.Digest = resolved.Digest
			got, ok := RecordedSource(resolved.Chart)
			if !ok || !reflect.DeepEqual(got, want) {
				t.Errorf("recorded %+v (%v), want %+v", got, ok, want)
			}
			if raw := resolved.Chart.Metadata.Annotations[SourceAnnotation]; strings.Contains(raw, "s3cret") {
				t.Errorf("the recorded source holds a credential: %s", raw)
			}
		})
	}
	if _, ok := RecordedSource(nil); ok {
		t.Error("a missing chart records a source")
	}
}

// TestCRDsRecorded: the CRDs of a chart's crds/ and of its subcharts' are
// named in its metadata, which Helm stores with the release without the
// subcharts themselves.
func TestCRDsRecorded(t *testing.T) {
	crd := func(name string) []byte {
		return []byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: " + name + "\n")
	}
	sub := &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "crds", Version: "1.0.0"},
		Files: []*common.File{{Name: "crds/two.yaml", Data: append(append(crd("b.example.com"), "---\n"...), crd("c.example.com")...)}}}
	parent := &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "stack", Version: "1.0.0"},
		Files: []*common.File{{Name: "crds/one.yaml", Data: crd("a.example.com")}, {Name: "crds/notes.txt", Data: []byte("not a CRD")}}}
	parent.AddDependency(sub)
	record(&Resolved{Chart: parent}, Source{Name: "stack"})
	if got, want := RecordedCRDs(parent), []string{"a.example.com", "b.example.com", "c.example.com"}; !slices.Equal(got, want) {
		t.Errorf("recorded CRDs %v, want %v", got, want)
	}
	if got := RecordedCRDs(&chart.Chart{Metadata: &chart.Metadata{Name: "plain"}}); got != nil {
		t.Errorf("a chart without CRDs records %v", got)
	}
}

// TestRecordedURLs: a release records repository and Git URLs without
// their credentials, keeping an SSH user (git@), which is none.
func TestRecordedURLs(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://bot:s3cret@example.com/charts", "https://example.com/charts"},
		{"https://TOKEN@github.com/org/charts.git", "https://github.com/org/charts.git"},
		{"ssh://git@example.com/org/charts.git", "ssh://git@example.com/org/charts.git"},
		{"ssh://git:s3cret@example.com/org/charts.git", "ssh://git@example.com/org/charts.git"},
		{"oci://registry.example.com/charts", "oci://registry.example.com/charts"},
	} {
		if got := withoutUserinfo(tc.in); got != tc.want {
			t.Errorf("withoutUserinfo(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	c := &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "app", Version: "1.0.0"}}
	verify := &VerifyConfig{PublicKeys: []string{"-----BEGIN PUBLIC KEY-----"}, SecretRef: &SecretRef{Name: "signers"}}
	record(&Resolved{Chart: c}, Source{Name: "charts/app", Git: &Git{URL: "ssh://git@example.com/charts.git", Identity: "PRIVATE KEY", KnownHosts: "example.com ssh-ed25519 AAAA"},
		Auth: Auth{PlainHTTP: true}, VerifyConfig: verify})
	got, ok := RecordedSource(c)
	want := Recorded{Name: "charts/app", Git: &RecordedGit{URL: "ssh://git@example.com/charts.git", KnownHosts: "example.com ssh-ed25519 AAAA"}, PlainHTTP: true, Verify: verify}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("recorded %+v, want %+v", got, want)
	}
	if strings.Contains(c.Metadata.Annotations[SourceAnnotation], "PRIVATE KEY") {
		t.Error("the record holds the SSH private key")
	}
}
