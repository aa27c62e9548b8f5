package testrepo

import (
	"fmt"
	"strings"
)

// SyntheticIndex is an index of charts × versions laid out as Helm writes
// it, with the descriptions, keywords and maintainers real indexes carry.
func SyntheticIndex(charts, versions int) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nentries:\n")
	for c := range charts {
		fmt.Fprintf(&b, "  chart-%03d:\n", c)
		for v := range versions {
			fmt.Fprintf(&b, `  - annotations:
      category: Infrastructure
      licenses: Apache-2.0
    apiVersion: v2
    appVersion: %d.%d.0
    created: "2026-10-%02dT10:00:00.000000000Z"
    dependencies:
    - name: common
      repository: oci://registry.example.com/charts
      tags:
      - common
      version: 2.x.x
    description: Chart number %d of a synthetic repository, with a description as long as the ones real charts carry in their Chart.yaml files.
    digest: %064x
    home: https://example.com/charts/chart-%03d
    icon: https://example.com/icons/chart-%03d.svg
    keywords:
    - synthetic
    - benchmark
    - chart
    maintainers:
    - name: Example Maintainers
      url: https://example.com
    name: chart-%03d
    sources:
    - https://example.com/src/chart-%03d
    urls:
    - https://charts.example.com/chart-%03d-%d.%d.%d.tgz
    version: %d.%d.%d
`, v/10, v%10, 1+v%28, c, c*1000+v, c, c, c, c, c, v/100, (v/10)%10, v%10, v/100, (v/10)%10, v%10)
		}
	}
	b.WriteString("generated: \"2026-11-01T00:00:00Z\"\n")
	return []byte(b.String())
}
