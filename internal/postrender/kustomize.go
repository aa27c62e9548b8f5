package postrender

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/yaml"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
)

// Selector picks the objects a patch applies to; empty fields match all.
type Selector struct {
	Group, Version, Kind, Name, Namespace string
	LabelSelector, AnnotationSelector     string
}

// Patch is a strategic merge or JSON 6902 patch, with an optional target.
type Patch struct {
	Patch  string
	Target *Selector
}

// JSON6902Patch is a JSON 6902 patch of the target (deprecated field
// patchesJson6902 of Flux, kept for compatibility).
type JSON6902Patch struct {
	Target Selector
	Patch  string
}

// Image replaces the name, tag or digest of container images.
type Image struct {
	Name, NewName, NewTag, Digest string
}

// Kustomize is one entry of post_renderers (postRenderers[].kustomize).
type Kustomize struct {
	Patches               []Patch
	PatchesStrategicMerge []string
	PatchesJSON6902       []JSON6902Patch
	Images                []Image
}

var _ helm.PostRenderer = (*Kustomize)(nil)

// Run implements helm.PostRenderer: the rendered manifest is the only
// resource of a kustomization held in memory.
func (k *Kustomize) Run(in *bytes.Buffer) (*bytes.Buffer, error) {
	if strings.TrimSpace(in.String()) == "" {
		return in, nil
	}
	fs := filesys.MakeFsInMemory()
	if err := fs.WriteFile("/manifest.yaml", in.Bytes()); err != nil {
		return nil, fmt.Errorf("writing manifest to memory: %w", err)
	}
	kust := types.Kustomization{
		TypeMeta:  types.TypeMeta{APIVersion: types.KustomizationVersion, Kind: types.KustomizationKind},
		Resources: []string{"manifest.yaml"},
	}
	for _, p := range k.Patches {
		kust.Patches = append(kust.Patches, types.Patch{Patch: p.Patch, Target: p.Target.kustomize()})
	}
	// The deprecated fields are written as the patches they are equivalent
	// to, as `kustomize edit fix` does.
	for _, p := range k.PatchesStrategicMerge {
		kust.Patches = append(kust.Patches, types.Patch{Patch: p})
	}
	for _, p := range k.PatchesJSON6902 {
		kust.Patches = append(kust.Patches, types.Patch{Patch: p.Patch, Target: p.Target.kustomize()})
	}
	for _, i := range k.Images {
		kust.Images = append(kust.Images, types.Image{Name: i.Name, NewName: i.NewName, NewTag: i.NewTag, Digest: i.Digest})
	}
	b, err := yaml.Marshal(kust)
	if err != nil {
		return nil, fmt.Errorf("encoding kustomization: %w", err)
	}
	if err := fs.WriteFile("/kustomization.yaml", b); err != nil {
		return nil, fmt.Errorf("writing kustomization to memory: %w", err)
	}
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = types.LoadRestrictionsRootOnly
	opts.PluginConfig = types.DisabledPluginConfig()
	res, err := krusty.MakeKustomizer(opts).Run(fs, "/")
	if err != nil {
		return nil, fmt.Errorf("kustomize post-renderer: %w", err)
	}
	out, err := res.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("kustomize post-renderer: writing result: %w", err)
	}
	return bytes.NewBuffer(out), nil
}

func (s *Selector) kustomize() *types.Selector {
	if s == nil {
		return nil
	}
	return &types.Selector{
		ResId: resid.ResId{
			Gvk:       resid.Gvk{Group: s.Group, Version: s.Version, Kind: s.Kind},
			Name:      s.Name,
			Namespace: s.Namespace,
		},
		LabelSelector:      s.LabelSelector,
		AnnotationSelector: s.AnnotationSelector,
	}
}

// ValidatePatch checks that patch is a strategic merge patch (one YAML or
// JSON object with apiVersion, kind and metadata.name when it has no target)
// or a JSON 6902 patch (a list of operations), without a cluster.
func ValidatePatch(patch string, hasTarget bool) error {
	if strings.TrimSpace(patch) == "" {
		return errEmpty
	}
	var doc any
	if err := yaml.Unmarshal([]byte(patch), &doc); err != nil {
		return fmt.Errorf("not valid YAML or JSON: %w", err)
	}
	switch doc.(type) {
	case []any:
		return validateJSON6902(patch)
	case map[string]any:
		if !hasTarget {
			nodes, err := kio.FromBytes([]byte(patch))
			if err != nil {
				return fmt.Errorf("not a Kubernetes object: %w", err)
			}
			for _, n := range nodes {
				if n.GetKind() == "" || n.GetName() == "" {
					return fmt.Errorf("a strategic merge patch without a target must name its object with kind and metadata.name")
				}
			}
		}
		return nil
	default:
		return fmt.Errorf("a patch must be an object (strategic merge) or a list of operations (JSON 6902), not %T", doc)
	}
}

// ValidateJSON6902 checks that patch is a list of JSON 6902 operations.
func ValidateJSON6902(patch string) error {
	if strings.TrimSpace(patch) == "" {
		return errEmpty
	}
	return validateJSON6902(patch)
}

func validateJSON6902(patch string) error {
	j, err := yaml.YAMLToJSON([]byte(patch))
	if err != nil {
		return fmt.Errorf("not valid YAML or JSON: %w", err)
	}
	ops, err := jsonpatch.DecodePatch(j)
	if err != nil {
		return fmt.Errorf("not a JSON 6902 patch: %w", err)
	}
	for i, op := range ops {
		switch op.Kind() {
		case "add", "remove", "replace", "move", "copy", "test":
		default:
			return fmt.Errorf("operation %d: %q is not a JSON 6902 operation (add, remove, replace, move, copy, test)", i, op.Kind())
		}
		if _, err := op.Path(); err != nil {
			return fmt.Errorf("operation %d: %w", i, err)
		}
	}
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal(j, &raw); err != nil {
		return fmt.Errorf("not a list of operations: %w", err)
	}
	return nil
}
