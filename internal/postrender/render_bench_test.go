package postrender

import (
	"bytes"
	"context"
	"testing"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// BenchmarkRenderBigChart: a client-side render of the chart of 1,000
// objects planbench -objects installs, without post-renderers, with one
// that returns its input (what Helm's own YAML round trip around any
// post-renderer costs), with the chain every release has (the origin
// labels) under each PostRenderStrategy, and with common metadata.
func BenchmarkRenderBigChart(b *testing.B) {
	chart := testrepo.BigChart(1000, 4, 1<<20)
	ctx := context.Background()
	origin := Build(ctx, nil, Metadata{}, Origin{Name: "big", Namespace: "ns"})
	for _, bc := range []struct {
		name     string
		pr       helm.PostRenderer
		strategy helm.PostRenderStrategy
	}{
		{"none", nil, ""},
		{"identity", identity{}, ""},
		{"origin", origin, ""},
		{"origin-combined", origin, helm.PostRenderCombined},
		{"origin-separate", origin, helm.PostRenderSeparate},
		{"common+origin", Build(ctx, nil, Metadata{Labels: map[string]string{"team": "a"}}, Origin{Name: "big", Namespace: "ns"}), ""},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := helm.Render(ctx, helm.RenderOptions{ReleaseName: "big", Namespace: "ns", Chart: chart, PostRenderer: bc.pr, PostRenderStrategy: bc.strategy}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// identity is a post-renderer that returns its input.
type identity struct{}

func (identity) Run(in *bytes.Buffer) (*bytes.Buffer, error) { return in, nil }
