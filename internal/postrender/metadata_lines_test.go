package postrender

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testenv"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// parsedOnly is Metadata setting everything through kyaml, as Run did
// before it inserted lines: what Run must be stored as.
type parsedOnly Metadata

func (p parsedOnly) Run(in *bytes.Buffer) (*bytes.Buffer, error) {
	m := Metadata(p)
	labels, annotations := sortedKeys(m.Labels), sortedKeys(m.Annotations)
	return m.setParsed(in.Bytes(), labels, annotations)
}

// asHelmStores is the stream as Helm stores a post-renderer's output: read
// and written again by kyaml.
func asHelmStores(t *testing.T, stream string) string {
	t.Helper()
	nodes, err := kio.ParseAll(stream)
	if err != nil {
		t.Fatalf("Helm would not read the post-rendered manifest: %v\n%s", err, stream)
	}
	out, err := kio.StringAll(nodes)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var testMetadata = []Metadata{
	{Labels: map[string]string{OriginNameLabel: "web", OriginNamespaceLabel: "apps"}},
	{Labels: map[string]string{"team": "a", "tier": "it's 1"}, Annotations: map[string]string{"owner": "ops@example.com", "note": "true"}},
	{Labels: map[string]string{"zone": "123"}},
}

// TestMetadataLinesAsKyaml: for documents of every shape, Run stores what
// kyaml's setters store, and inserts lines for the usual ones.
func TestMetadataLinesAsKyaml(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		// inserted: Run sets every Metadata by inserting lines.
		inserted bool
	}{
		{"no labels", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n", true},
		{"labels and annotations", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n    x: 'y'\n  labels:\n    app: a\n  name: a\n", true},
		{"metadata last", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    app: a\n", true},
		{"sequences in metadata", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  finalizers:\n  - a\n  - b\n  labels:\n    app: a\n  name: a\n  ownerReferences:\n  - kind: X\n    name: y\n", true},
		{"block scalar elsewhere", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  script: |\n    #!/bin/sh\n\n    echo --- # not a comment\n", true},
		{"comment in spec", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v # a comment\n", true},
		{"label set already", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels:\n    " + OriginNameLabel + ": \"other\"\n    team: b\n    zone: '9'\n  name: a\n", false},
		{"flow labels", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels: {app: a}\n  name: a\n", false},
		{"empty labels", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels: {}\n  name: a\n", false},
		{"null labels", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels:\n  name: a\n", false},
		{"flow metadata", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n", false},
		{"no metadata", "apiVersion: v1\nkind: ConfigMap\ndata:\n  k: v\n", false},
		{"comment in metadata", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a # the name\n", false},
		{"comment after metadata", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n# the data\ndata:\n  k: v\n", false},
		{"comment line in labels", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels:\n    # the app\n    app: a\n  name: a\n", false},
		{"multi-line annotation", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n    x: |\n      a\n\n      b\n  name: a\n", false},
		{"quoted label key", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels:\n    \"team\": b\n  name: a\n", false},
		{"quoted metadata key", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  \"labels\":\n    app: a\n  name: a\n", false},
		{"anchors", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels: &l\n    app: a\n  name: a\ndata: *l\n", false},
		{"four-space indentation", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n    name: a\n    labels:\n        app: a\n", false},
		{"list", "- a\n- b\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, m := range testMetadata {
				stream := tc.doc + "---\n" + "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n"
				if tc.name == "list" {
					stream = tc.doc
				}
				want, werr := parsedOnly(m).Run(bytes.NewBufferString(stream))
				got, gerr := m.Run(bytes.NewBufferString(stream))
				if (werr == nil) != (gerr == nil) {
					t.Fatalf("%v: error %v, kyaml's %v", m, gerr, werr)
				}
				if werr != nil {
					continue
				}
				if g, w := asHelmStores(t, got.String()), asHelmStores(t, want.String()); g != w {
					t.Errorf("%v: Helm stores\n%s\nwhere kyaml's setters give\n%s", m, g, w)
				}
				ins, ok := m.insertions(sortedKeys(m.Labels), sortedKeys(m.Annotations))
				_, inserted := insertLines([]byte(tc.doc), ins)
				if want := tc.inserted && ok; inserted != want {
					t.Errorf("%v: lines inserted %t, want %t", m, inserted, want)
				}
			}
		})
	}
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// TestChartsStoreAsBefore renders the public charts and this repository's
// charts with the chain every release has (common metadata, origin labels)
// and compares the manifest with the one kyaml's setters give, byte for
// byte: no release made before plans a change. It also says how many
// documents took the inserted lines.
func TestChartsStoreAsBefore(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, pattern := range []string{"internal/*/testdata/charts/*", "internal/*/testdata/*/chart", "internal/e2e/testdata/*/charts/*", "examples/*/chart", "examples/*/*/charts/*"} {
		found, _ := filepath.Glob(filepath.Join(root, pattern, "Chart.yaml"))
		for _, f := range found {
			dirs = append(dirs, filepath.Dir(f))
		}
	}
	if len(dirs) < 5 {
		t.Fatalf("found only %v of this repository's charts", dirs)
	}
	shared := os.Getenv("HELMRELEASE_TEST_CHARTS")
	if shared == "" {
		shared = filepath.Join(root, "..", "shared", "charts")
	}
	public, _ := filepath.Glob(filepath.Join(shared, "*", "Chart.yaml"))
	if len(public) == 0 {
		t.Run("public", func(t *testing.T) {
			testenv.SkipUnlessRequired(t, "no public charts at "+shared+" (set HELMRELEASE_TEST_CHARTS)")
		})
	}
	for _, f := range public {
		dirs = append(dirs, filepath.Dir(f))
	}
	ctx := context.Background()
	common := Metadata{Labels: map[string]string{"team": "platform"}, Annotations: map[string]string{"owner": "ops@example.com"}}
	origin := Origin{Name: "r", Namespace: "apps"}
	type chartCase struct {
		name  string
		chart *helm.Chart
	}
	cases := []chartCase{{"big", testrepo.BigChart(200, 2, 64<<10)}}
	for _, d := range dirs {
		c, err := helm.LoadChart(d)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(filepath.Dir(root), d)
		cases = append(cases, chartCase{rel, c})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, strategy := range []helm.PostRenderStrategy{helm.PostRenderNoHooks, helm.PostRenderCombined} {
				var seen []string
				render := func(pr helm.PostRenderer) string {
					out, err := helm.Render(ctx, helm.RenderOptions{ReleaseName: "r", Namespace: "apps", Chart: c.chart, PostRenderer: pr, PostRenderStrategy: strategy, Capabilities: &helm.Capabilities{KubeVersion: "v1.34.0"}})
					if err != nil {
						t.Fatalf("%s: %v", strategy, err)
					}
					return out.Manifest
				}
				got := render(Chain{recorder{&seen}, common, Metadata{Labels: origin.labels()}})
				// The same input again: charts that make random values
				// render other ones each time.
				want := render(&replay{seen, Chain{parsedOnly(common), parsedOnly{Labels: origin.labels()}}})
				if got != want {
					t.Fatalf("%s: the manifest is stored otherwise than before:\n%s", strategy, lineDiff(got, want))
				}
				ins, _ := common.insertions(sortedKeys(common.Labels), sortedKeys(common.Annotations))
				docs, inserted := 0, 0
				for _, s := range seen {
					split, ok := documents([]byte(s))
					if !ok {
						t.Fatalf("%s: Helm's stream is not split into documents:\n%s", strategy, s)
					}
					for _, d := range split {
						docs++
						if _, ok := insertLines(d, ins); ok {
							inserted++
						}
					}
				}
				t.Logf("%s: %d of %d documents by inserted lines", strategy, inserted, docs)
				if c.name == "big" && inserted != docs {
					t.Errorf("%s: %d of the generated chart's %d documents by inserted lines, want all", strategy, inserted, docs)
				}
			}
		})
	}
}

// recorder keeps each stream it is given.
type recorder struct{ streams *[]string }

func (r recorder) Run(in *bytes.Buffer) (*bytes.Buffer, error) {
	*r.streams = append(*r.streams, in.String())
	return in, nil
}

// replay runs chain on the streams given, in order, in place of its
// input.
type replay struct {
	streams []string
	chain   Chain
}

func (r *replay) Run(*bytes.Buffer) (*bytes.Buffer, error) {
	if len(r.streams) == 0 {
		return nil, errors.New("replay: no stream left")
	}
	in := r.streams[0]
	r.streams = r.streams[1:]
	return r.chain.Run(bytes.NewBufferString(in))
}

// lineDiff is the first line where got and want differ, with context.
func lineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			lo := max(i-5, 0)
			return "line " + strconv.Itoa(i+1) + ":\n" + strings.Join(g[lo:min(i+5, len(g))], "\n") + "\n\nbefore:\n" + strings.Join(w[lo:min(i+5, len(w))], "\n")
		}
	}
	return "lengths " + strconv.Itoa(len(g)) + " and " + strconv.Itoa(len(w)) + " lines"
}
