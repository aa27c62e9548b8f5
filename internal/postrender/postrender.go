// Package postrender implements the post-renderers of a release
// (spec.postRenderers, spec.commonMetadata and the origin labels) as Helm
// post-renderers: Kustomize directives in-process on the Kustomize Go API,
// and commands (post_renderers[].exec) with Helm's contract for
// post-renderer binaries.
package postrender

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/kio"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
)

// Origin labels: every object a release renders carries the name and
// namespace of the helmrelease_release that owns it.
const (
	OriginNameLabel      = OriginGroup + "/name"
	OriginNamespaceLabel = OriginGroup + "/namespace"
)

// Groups of origin labels: this provider's, and helm-controller's (whose
// objects carry the name and namespace of their HelmRelease).
const (
	OriginGroup     = "helmrelease.terraform.io"
	FluxOriginGroup = "helm.toolkit.fluxcd.io"
)

// Origin is what the origin labels of a release's objects say.
type Origin struct {
	// Group of the label keys; empty is OriginGroup.
	Group           string
	Name, Namespace string
}

// labels are the origin labels.
func (o Origin) labels() map[string]string {
	group := o.Group
	if group == "" {
		group = OriginGroup
	}
	return map[string]string{group + "/name": o.Name, group + "/namespace": o.Namespace}
}

// Chain runs post-renderers in order.
type Chain []helm.PostRenderer

var _ helm.PostRenderer = Chain(nil)

// Run implements helm.PostRenderer.
func (c Chain) Run(in *bytes.Buffer) (*bytes.Buffer, error) {
	var err error
	for _, r := range c {
		if in, err = r.Run(in); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// Error is the failure of the post-renderer at Index of post_renderers.
type Error struct {
	Index int
	Err   error
}

func (e *Error) Error() string { return fmt.Sprintf("post-renderer %d: %v", e.Index, e.Err) }

func (e *Error) Unwrap() error { return e.Err }

// indexed reports the failures of a post-renderer as an *Error.
type indexed struct {
	index int
	r     helm.PostRenderer
}

func (i indexed) Run(in *bytes.Buffer) (*bytes.Buffer, error) {
	out, err := i.r.Run(in)
	if err != nil {
		return nil, &Error{Index: i.index, Err: err}
	}
	return out, nil
}

// Renderer is one element of post_renderers: Kustomize directives
// (HelmRelease spec.postRenderers[].kustomize), or a command (Exec). The
// Kustomize fields are embedded so that a list without commands encodes,
// and digests, as the list of its Kustomize directives.
type Renderer struct {
	Kustomize
	Exec *Exec `json:",omitempty"`
}

// Build returns the chain of a release: the post-renderers in order, then
// the common metadata, then the origin labels (always last, so no
// post-renderer can remove them). A post-renderer's failure is an *Error.
// A command stops when ctx ends.
func Build(ctx context.Context, renderers []Renderer, common Metadata, origin Origin) Chain {
	var chain Chain
	for i := range renderers {
		if renderers[i].Exec != nil {
			chain = append(chain, indexed{i, execRun{ctx: ctx, x: renderers[i].Exec}})
			continue
		}
		chain = append(chain, indexed{i, &renderers[i].Kustomize})
	}
	if len(common.Labels) > 0 || len(common.Annotations) > 0 {
		chain = append(chain, common)
	}
	chain = append(chain, Metadata{Labels: origin.labels()})
	return chain
}

// Metadata sets labels and annotations on every object (spec.commonMetadata).
type Metadata struct {
	Labels      map[string]string
	Annotations map[string]string
}

var _ helm.PostRenderer = Metadata{}

// Run implements helm.PostRenderer: each document of the usual shape by
// inserting lines (insertLines), any other through kyaml (setParsed).
func (m Metadata) Run(in *bytes.Buffer) (*bytes.Buffer, error) {
	// Sorted, so that the same input always renders the same manifest.
	labels, annotations := slices.Sorted(maps.Keys(m.Labels)), slices.Sorted(maps.Keys(m.Annotations))
	ins, ok := m.insertions(labels, annotations)
	docs, split := documents(in.Bytes())
	if !ok || !split || len(docs) == 0 {
		return m.setParsed(in.Bytes(), labels, annotations)
	}
	out := bytes.NewBuffer(make([]byte, 0, in.Len()+len(docs)*128))
	for i, doc := range docs {
		if i > 0 {
			out.WriteString("---\n")
		}
		if inserted, ok := insertLines(doc, ins); ok {
			out.Write(inserted)
			continue
		}
		parsed, err := m.setParsed(doc, labels, annotations)
		if err != nil {
			return nil, err
		}
		out.Write(parsed.Bytes())
	}
	return out, nil
}

// setParsed sets m's labels and annotations on every document of in with
// kyaml, in the order given.
func (m Metadata) setParsed(in []byte, labels, annotations []string) (*bytes.Buffer, error) {
	nodes, err := kio.FromBytes(in)
	if err != nil {
		return nil, fmt.Errorf("parsing rendered manifest: %w", err)
	}
	for _, n := range nodes {
		for _, k := range labels {
			if err := n.PipeE(kyaml.SetLabel(k, m.Labels[k])); err != nil {
				return nil, fmt.Errorf("setting label %s on %s: %w", k, documentName(n), err)
			}
		}
		for _, k := range annotations {
			if err := n.PipeE(kyaml.SetAnnotation(k, m.Annotations[k])); err != nil {
				return nil, fmt.Errorf("setting annotation %s on %s: %w", k, documentName(n), err)
			}
		}
	}
	out, err := kio.StringAll(nodes)
	if err != nil {
		return nil, fmt.Errorf("writing rendered manifest: %w", err)
	}
	return bytes.NewBufferString(out), nil
}

// documentName is kind/name of a document for errors; kyaml's getters
// panic on a document that is not a mapping.
func documentName(n *kyaml.RNode) string {
	if n.YNode().Kind != kyaml.MappingNode {
		return "a document that is not a mapping"
	}
	return n.GetKind() + "/" + n.GetName()
}

// errEmpty is returned for an empty patch.
var errEmpty = errors.New("the patch is empty")
