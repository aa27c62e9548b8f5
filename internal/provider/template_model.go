package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/postrender"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/values"
)

type templateModel struct {
	ID              types.String         `tfsdk:"id"`
	Cluster         types.String         `tfsdk:"cluster"`
	Name            types.String         `tfsdk:"name"`
	Namespace       types.String         `tfsdk:"namespace"`
	TargetNamespace types.String         `tfsdk:"target_namespace"`
	ReleaseName     types.String         `tfsdk:"release_name"`
	Chart           *chartModel          `tfsdk:"chart"`
	Values          types.Dynamic        `tfsdk:"values"`
	SensitiveValues types.String         `tfsdk:"sensitive_values"`
	ValuesFrom      []valuesFromModel    `tfsdk:"values_from"`
	PostRenderers   []postRendererModel  `tfsdk:"post_renderers"`
	CommonMetadata  *commonMetadataModel `tfsdk:"common_metadata"`

	ChartVersion types.String `tfsdk:"chart_version"`
	AppVersion   types.String `tfsdk:"app_version"`
	Resources    types.Map    `tfsdk:"resources"`
	Notes        types.String `tfsdk:"notes"`
	// NonReproducible are keys of Resources another render would differ in.
	NonReproducible types.List `tfsdk:"non_reproducible"`
}

type valuesFromModel struct {
	Kind       types.String `tfsdk:"kind"`
	Name       types.String `tfsdk:"name"`
	ValuesKey  types.String `tfsdk:"values_key"`
	TargetPath types.String `tfsdk:"target_path"`
	Optional   types.Bool   `tfsdk:"optional"`
	Literal    types.Bool   `tfsdk:"literal"`
}

type postRendererModel struct {
	Kustomize *kustomizeModel      `tfsdk:"kustomize"`
	Exec      *postRenderExecModel `tfsdk:"exec"`
}

// postRenderExecModel is post_renderers[].exec; args and env may be
// unknown until apply (variables).
type postRenderExecModel struct {
	Command types.String `tfsdk:"command"`
	Args    types.List   `tfsdk:"args"`
	Env     types.Map    `tfsdk:"env"`
	Timeout types.String `tfsdk:"timeout"`
}

// exec is the post-renderer command of x, whose values are known.
func (x *postRenderExecModel) exec() *postrender.Exec {
	e := &postrender.Exec{Command: x.Command.ValueString(), Timeout: parseDuration(x.Timeout)}
	for _, a := range x.Args.Elements() {
		if s, ok := a.(types.String); ok {
			e.Args = append(e.Args, s.ValueString())
		}
	}
	if env := x.Env.Elements(); len(env) > 0 {
		e.Env = make(map[string]string, len(env))
		for k, v := range env {
			if s, ok := v.(types.String); ok {
				e.Env[k] = s.ValueString()
			}
		}
	}
	return e
}

type kustomizeModel struct {
	Patches               []patchModel         `tfsdk:"patches"`
	PatchesStrategicMerge []types.String       `tfsdk:"patches_strategic_merge"`
	PatchesJSON6902       []json6902PatchModel `tfsdk:"patches_json6902"`
	Images                []imageModel         `tfsdk:"images"`
}

type patchModel struct {
	Patch  types.String   `tfsdk:"patch"`
	Target *selectorModel `tfsdk:"target"`
}

type json6902PatchModel struct {
	Target *selectorModel `tfsdk:"target"`
	Patch  types.String   `tfsdk:"patch"`
}

type selectorModel struct {
	Group              types.String `tfsdk:"group"`
	Version            types.String `tfsdk:"version"`
	Kind               types.String `tfsdk:"kind"`
	Name               types.String `tfsdk:"name"`
	Namespace          types.String `tfsdk:"namespace"`
	LabelSelector      types.String `tfsdk:"label_selector"`
	AnnotationSelector types.String `tfsdk:"annotation_selector"`
}

type imageModel struct {
	Name    types.String `tfsdk:"name"`
	NewName types.String `tfsdk:"new_name"`
	NewTag  types.String `tfsdk:"new_tag"`
	Digest  types.String `tfsdk:"digest"`
}

type commonMetadataModel struct {
	Labels      types.Map `tfsdk:"labels"`
	Annotations types.Map `tfsdk:"annotations"`
}

func valuesReferences(in []valuesFromModel) []values.Reference {
	out := make([]values.Reference, len(in))
	for i, r := range in {
		out[i] = values.Reference{
			Kind:       r.Kind.ValueString(),
			Name:       r.Name.ValueString(),
			ValuesKey:  r.ValuesKey.ValueString(),
			TargetPath: r.TargetPath.ValueString(),
			Optional:   r.Optional.ValueBool(),
			Literal:    r.Literal.ValueBool(),
		}
	}
	return out
}

func (s *selectorModel) selector() *postrender.Selector {
	if s == nil {
		return nil
	}
	return &postrender.Selector{
		Group: s.Group.ValueString(), Version: s.Version.ValueString(), Kind: s.Kind.ValueString(),
		Name: s.Name.ValueString(), Namespace: s.Namespace.ValueString(),
		LabelSelector: s.LabelSelector.ValueString(), AnnotationSelector: s.AnnotationSelector.ValueString(),
	}
}

// renderers are the post-renderers of post_renderers, in order.
func renderers(in []postRendererModel) []postrender.Renderer {
	out := make([]postrender.Renderer, 0, len(in))
	for _, pr := range in {
		if pr.Exec != nil {
			out = append(out, postrender.Renderer{Exec: pr.Exec.exec()})
			continue
		}
		var k postrender.Kustomize
		if pr.Kustomize != nil {
			for _, p := range pr.Kustomize.Patches {
				k.Patches = append(k.Patches, postrender.Patch{Patch: p.Patch.ValueString(), Target: p.Target.selector()})
			}
			for _, p := range pr.Kustomize.PatchesStrategicMerge {
				k.PatchesStrategicMerge = append(k.PatchesStrategicMerge, p.ValueString())
			}
			for _, p := range pr.Kustomize.PatchesJSON6902 {
				k.PatchesJSON6902 = append(k.PatchesJSON6902, postrender.JSON6902Patch{Target: *p.Target.selector(), Patch: p.Patch.ValueString()})
			}
			for _, i := range pr.Kustomize.Images {
				k.Images = append(k.Images, postrender.Image{Name: i.Name.ValueString(), NewName: i.NewName.ValueString(), NewTag: i.NewTag.ValueString(), Digest: i.Digest.ValueString()})
			}
		}
		out = append(out, postrender.Renderer{Kustomize: k})
	}
	return out
}

func (m *commonMetadataModel) metadata(ctx context.Context) (postrender.Metadata, diag.Diagnostics) {
	var md postrender.Metadata
	var diags diag.Diagnostics
	if m == nil {
		return md, diags
	}
	if !m.Labels.IsNull() {
		diags.Append(m.Labels.ElementsAs(ctx, &md.Labels, false)...)
	}
	if !m.Annotations.IsNull() {
		diags.Append(m.Annotations.ElementsAs(ctx, &md.Annotations, false)...)
	}
	return md, diags
}
