package postrender

import (
	"context"
	"testing"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// BenchmarkRenderBigChart: a client-side render of the chart of 1,000
// objects planbench -objects installs, without post-renderers and with the
// chain every release has (the origin labels), and with common metadata.
func BenchmarkRenderBigChart(b *testing.B) {
	chart := testrepo.BigChart(1000, 4, 1<<20)
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		pr   helm.PostRenderer
	}{
		{"none", nil},
		{"origin", Build(ctx, nil, Metadata{}, Origin{Name: "big", Namespace: "ns"})},
		{"common+origin", Build(ctx, nil, Metadata{Labels: map[string]string{"team": "a"}}, Origin{Name: "big", Namespace: "ns"})},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := helm.Render(ctx, helm.RenderOptions{ReleaseName: "big", Namespace: "ns", Chart: chart, PostRenderer: bc.pr}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
