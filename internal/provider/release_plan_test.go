package provider

import (
	"slices"
	"testing"

	chart "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// TestReleaseChanges: the reasons a plan gives for an upgrade, one per
// input that changed since the last attempt.
func TestReleaseChanges(t *testing.T) {
	local := &chartsource.Resolved{Version: "0.3.0+bbbbbbbbbbbb", Parts: []chartsource.RevisionPart{{Change: "chart content changed", Hex: "bbbbbbbbbbbb"}}}
	repo := &chartsource.Resolved{Version: "1.0.0", TrackedDigest: "sha256:new"}
	last := func(revision, digest string) *reconcile.Status {
		return &reconcile.Status{LastAttemptedRevision: revision, LastAttemptedRevisionDigest: digest, LastAttemptedConfigDigest: "cfg"}
	}
	renamed := &chartsource.Resolved{Version: "1.0.0", Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "web-v2", Version: "1.0.0"}}}
	made := func(chartName string) *reconcile.Status {
		st := last("1.0.0", "")
		st.History = []reconcile.Snapshot{{Name: "web", Namespace: "apps", Version: 3, ChartName: chartName, ChartVersion: "1.0.0"}}
		return st
	}
	for _, tc := range []struct {
		name       string
		st         *reconcile.Status
		chart      *chartsource.Resolved
		sameValues bool
		spec       reconcile.Spec
		want       []string
	}{
		{"nothing", last("0.3.0+bbbbbbbbbbbb", ""), local, true, reconcile.Spec{}, nil},
		{"local chart edited", last("0.3.0+aaaaaaaaaaaa", ""), local, true, reconcile.Spec{}, []string{"chart content changed"}},
		{"new version", last("0.2.0+aaaaaaaaaaaa", ""), local, true, reconcile.Spec{}, []string{`chart version "0.2.0+aaaaaaaaaaaa" → "0.3.0+bbbbbbbbbbbb"`}},
		{"published again", last("1.0.0", "sha256:old"), repo, true, reconcile.Spec{}, []string{"chart 1.0.0 published again with another digest (sha256:new, was sha256:old)"}},
		{"digest never recorded", last("1.0.0", ""), repo, true, reconcile.Spec{}, nil},
		{"chart renamed", made("web"), renamed, true, reconcile.Spec{}, []string{"chart name changed from web to web-v2"}},
		{"chart of the same name", made("web-v2"), renamed, true, reconcile.Spec{}, nil},
		{"values and force token", last("1.0.0", "sha256:new"), repo, false, reconcile.Spec{ForceAt: "now"}, []string{"values changed", "force_at changed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec
			if got := releaseChanges(tc.st, tc.chart, tc.sameValues, &spec, reconcile.Digests{}); !slices.Equal(got, tc.want) {
				t.Errorf("changes %q, want %q", got, tc.want)
			}
		})
	}
}
