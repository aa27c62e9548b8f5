package provider

import (
	"errors"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/postrender"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/show"
)

// renderedResources is the resources attribute of a rendering as a plan
// shows it: what a render cannot reproduce is unknown, and so are Secrets and
// the objects whose sensitive strings were hidden when secretsUnknown (a
// resource's first plan: the key their values are hashed with is made by
// the create).
func renderedResources(r *show.Rendering, secretsUnknown bool) types.Map {
	if r.SetUnreproducible {
		return types.MapUnknown(types.StringType)
	}
	elems := make(map[string]attr.Value, len(r.Shown))
	for k, v := range r.Shown {
		elems[k] = types.StringValue(v)
		if secretsUnknown && (show.IsSecretKey(k) || slices.Contains(r.Masked, k)) {
			elems[k] = types.StringUnknown()
		}
	}
	for _, k := range r.Unreproducible {
		elems[k] = types.StringUnknown()
	}
	return types.MapValueMust(types.StringType, elems)
}

// renderError reports a failed render: a post-renderer's on its element of
// post_renderers, anything else on chart with remedy.
func renderError(diags *diag.Diagnostics, err error, summary, remedy string) {
	var prErr *postrender.Error
	var execErr *postrender.ExecError
	if errors.As(err, &prErr) && errors.As(err, &execErr) {
		at := path.Root("post_renderers").AtListIndex(prErr.Index).AtName("exec")
		attrError(diags, at, "Post-renderer command failed", at.String()+": "+prErr.Err.Error()+".",
			"Fix the command, or its arguments and environment: it reads the rendered manifest on standard input and writes the whole post-rendered manifest on standard output, exiting with 0 (run it by hand on the manifest helmrelease_template renders to see why it fails).")
		return
	}
	if errors.As(err, &prErr) {
		attrError(diags, path.Root("post_renderers").AtListIndex(prErr.Index), "Post-renderer failed", prErr.Err.Error()+".",
			"Fix the post-renderer: a patch without a target must name an object the chart renders, and a JSON 6902 patch must apply to the objects its target selects.")
		return
	}
	attrError(diags, path.Root("chart"), summary, err.Error()+".", remedy)
}
