package helm

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
)

func renderDocs(t *testing.T, c *chart.Chart, values map[string]any) map[string]string {
	t.Helper()
	out, err := Render(context.Background(), RenderOptions{ReleaseName: "r", Namespace: "ns", Chart: c, Values: values})
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{}
	for _, doc := range strings.Split(out.Manifest, "---\n") {
		source, body, _ := strings.Cut(doc, "\n")
		docs[strings.TrimPrefix(source, "# Source: ")] = body
	}
	return docs
}

func configMap(name, data string) *common.File {
	return &common.File{Name: "templates/" + name + ".yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n" + data)}
}

// TestPerturb: a second render of the perturbed chart differs in exactly
// the templates whose output depends on a non-reproducible function,
// however coarse its use (a date by the day, a random integer of two
// values), through named templates, arguments and tpl'd values alike.
func TestPerturb(t *testing.T) {
	helpers := &common.File{Name: "templates/_helpers.tpl", Data: []byte(`{{- define "app.stamp" -}}
{{ now | date "2006-01-02" }}
{{- end }}
{{- define "app.name" -}}
{{ .Release.Name }}-{{ .Chart.Name | trunc 10 }}
{{- end }}`)}
	c := &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: "v2", Name: "app", Version: "1.0.0"},
		Values:   map[string]any{"items": []any{"a", "b"}, "greeting": "hello {{ .Release.Name }}"},
		Templates: []*common.File{
			helpers,
			configMap("stable", `  name: {{ include "app.name" . | quote }}
  {{- range $i, $item := .Values.items }}
  item{{ $i }}: {{ $item | upper | quote }}
  {{- end }}
  {{- with .Values.missing }}
  missing: {{ . }}
  {{- else }}
  missing: "none"
  {{- end }}
  {{- if false }}
  never: {{ now }}
  {{- end }}
  greeting: {{ tpl .Values.greeting . | quote }}
`),
			configMap("day", `  stamp: {{ include "app.stamp" . | quote }}
`),
			configMap("coin", `  side: {{ randInt 0 2 | quote }}
`),
			configMap("arg", `  year: {{ date "2006" now | quote }}
`),
			configMap("password", `  password: {{ randAlphaNum 4 | b64enc | quote }}
`),
			configMap("ca", `  {{- $ca := genCA "ca" 365 }}
  cert: {{ $ca.Cert | b64enc | quote }}
`),
			configMap("tpl", `  value: {{ tpl .Values.stamp . | quote }}
`),
		},
	}
	values := map[string]any{"stamp": `{{ now | date "2006" }}`}
	first := renderDocs(t, c, values)
	pc, pv, ok := Perturb(c, values)
	if !ok {
		t.Fatal("Perturb found nothing to perturb")
	}
	second := renderDocs(t, pc, pv)
	for _, name := range []string{"stable", "day", "coin", "arg", "password", "ca", "tpl"} {
		key := "app/templates/" + name + ".yaml"
		differs := first[key] != second[key]
		if want := name != "stable"; differs != want {
			t.Errorf("%s: differs = %v, want %v\nfirst:\n%s\nsecond:\n%s", name, differs, want, first[key], second[key])
		}
	}
	if !strings.Contains(first["app/templates/stable.yaml"], `item1: "B"`) || !strings.Contains(first["app/templates/stable.yaml"], `greeting: "hello r"`) {
		t.Errorf("stable template rendered\n%s", first["app/templates/stable.yaml"])
	}
	// The chart itself is left as it was.
	if again := renderDocs(t, c, values); again["app/templates/coin.yaml"] == "" || strings.Contains(string(c.Templates[0].Data), "dateModify") {
		t.Error("Perturb changed the chart it was given")
	}
}

func TestPerturbNothing(t *testing.T) {
	c := &chart.Chart{
		Metadata:  &chart.Metadata{APIVersion: "v2", Name: "app", Version: "1.0.0"},
		Templates: []*common.File{configMap("a", "  now: {{ .Values.now | quote }}\n")},
	}
	if _, _, ok := Perturb(c, map[string]any{"now": "a field, not a call"}); ok {
		t.Error("a chart without non-reproducible calls was perturbed")
	}
}

// BenchmarkPerturb: the cost a plan adds before its second render, for a
// chart of 300 templates of which 10 call non-reproducible functions
// through a shared helper.
func BenchmarkPerturb(b *testing.B) {
	c := &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "app", Version: "1.0.0"}}
	c.Templates = append(c.Templates, &common.File{Name: "templates/_helpers.tpl", Data: []byte(`{{- define "app.secret" -}}{{ randAlphaNum 24 | b64enc }}{{- end }}`)})
	for i := range 300 {
		data := fmt.Sprintf("  n: %q\n  labels: {{ .Values.labels | toYaml | nindent 4 }}\n", strings.Repeat("x", 200))
		if i%30 == 0 {
			data += "  password: {{ include \"app.secret\" . }}\n  at: {{ now | date \"2006\" }}\n"
		}
		c.Templates = append(c.Templates, configMap(fmt.Sprintf("cm%d", i), data))
	}
	values := map[string]any{"labels": map[string]any{"a": "b"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, ok := Perturb(c, values); !ok {
			b.Fatal("nothing perturbed")
		}
	}
}
