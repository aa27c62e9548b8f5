package testrepo

import (
	"fmt"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
)

// BigChart is a chart of many objects, as large charts such as
// kube-prometheus-stack are: crds CustomResourceDefinitions of about
// crdBytes together (rendered from its templates, as charts that template
// their CRDs do), and ConfigMaps named big-<i> up to objects in all, each
// carrying .Values.message.
func BigChart(objects, crds, crdBytes int) *chart.Chart {
	var crdDocs strings.Builder
	for c := range crds {
		fmt.Fprintf(&crdDocs, `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widget%[1]ds.bench.helmrelease.io
spec:
  group: bench.helmrelease.io
  scope: Namespaced
  names: {kind: Widget%[1]d, listKind: Widget%[1]dList, plural: widget%[1]ds, singular: widget%[1]d}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
`, c)
		for p := 0; crdDocs.Len() < (c+1)*crdBytes/crds; p++ {
			fmt.Fprintf(&crdDocs, `              field%[1]d:
                type: string
                description: Field %[1]d of widget %[2]d, described at the length the descriptions generated from Go doc comments have in real operators' CRDs.
`, p, c)
		}
	}
	configMaps := fmt.Sprintf(`{{- range $i := until %d }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: big-{{ $i }}
data:
  index: "{{ $i }}"
  message: {{ $.Values.message | quote }}
{{- end }}
`, max(objects-crds, 0))
	return &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: "v2", Name: "big", Version: "1.0.0"},
		Values:   map[string]any{"message": "hello"},
		Templates: []*common.File{
			{Name: "templates/crds.yaml", Data: []byte(crdDocs.String())},
			{Name: "templates/configmaps.yaml", Data: []byte(configMaps)},
		},
	}
}
