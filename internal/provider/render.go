package provider

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/manifest"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/postrender"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// renderFunc renders a release of chart c with values into its manifest
// (hooks excluded) and notes. perturbed is true for the second render of
// a chart whose non-reproducible results were perturbed: its objects need
// not be validated.
type renderFunc func(ctx context.Context, c *helm.Chart, values map[string]any, perturbed bool) (manifestYAML, notes string, err error)

// rendering is a release as a render shows it: the one path of the plan
// of helmrelease_release and of helmrelease_template.
type rendering struct {
	// Shown are the objects by key, as the resources attribute shows them.
	Shown map[string]string
	// Unreproducible are the keys of the objects another render would
	// make differently (random values, generated keys, the time), sorted.
	Unreproducible []string
	// SetUnreproducible: which objects there are changes from one render
	// to the next (or could not be told apart).
	SetUnreproducible bool
	// Masked are the keys of objects other than Secrets in which
	// sensitive strings were hidden, sorted.
	Masked []string
	Notes  string
}

// renderRelease renders chart c with values and, when the chart calls
// template functions whose results change from one call to the next,
// renders it again with those results perturbed (helm.Perturb): the
// objects that differ are not reproducible, so a plan must not promise
// them.
func renderRelease(ctx context.Context, render renderFunc, c *helm.Chart, values map[string]any, namespace string, scope manifest.Scope, show display) (*rendering, error) {
	first, notes, err := render(ctx, c, values, false)
	if err != nil {
		return nil, err
	}
	shown, masked, err := showManifest(first, namespace, scope, nil, show)
	if err != nil {
		return nil, err
	}
	out := &rendering{Shown: shown, Masked: masked, Notes: notes}
	pc, pv, perturbs := helm.Perturb(c, values)
	if !perturbs {
		return out, nil
	}
	if show.Key == nil {
		// Secret values show no hash: compared under a key of this
		// render only, so that a random one still tells.
		show.Key = make([]byte, 32)
		_, _ = rand.Read(show.Key)
		if shown, _, err = showManifest(first, namespace, scope, nil, show); err != nil {
			return nil, err
		}
	}
	everything := func() (*rendering, error) {
		out.SetUnreproducible = true
		out.Unreproducible = slices.Sorted(maps.Keys(shown))
		return out, nil
	}
	second, _, err := render(ctx, pc, pv, true)
	if err != nil {
		// The chart does not take other results (e.g. a random number
		// parsed back): nothing is known to be reproducible.
		return everything()
	}
	again, _, err := showManifest(second, namespace, scope, nil, show)
	if err != nil || !slices.Equal(slices.Sorted(maps.Keys(shown)), slices.Sorted(maps.Keys(again))) {
		return everything()
	}
	for _, k := range slices.Sorted(maps.Keys(shown)) {
		if shown[k] != again[k] {
			out.Unreproducible = append(out.Unreproducible, k)
		}
	}
	return out, nil
}

// resources is the resources attribute of a rendering as a plan shows
// it: what a render cannot reproduce is unknown, and so are Secrets and
// the objects whose sensitive strings were hidden when secretsUnknown (a
// resource's first plan: the key their values are hashed with is made by
// the create).
func (r *rendering) resources(secretsUnknown bool) types.Map {
	if r.SetUnreproducible {
		return types.MapUnknown(types.StringType)
	}
	elems := make(map[string]attr.Value, len(r.Shown))
	for k, v := range r.Shown {
		elems[k] = types.StringValue(v)
		if secretsUnknown && (isSecretKey(k) || slices.Contains(r.Masked, k)) {
			elems[k] = types.StringUnknown()
		}
	}
	for _, k := range r.Unreproducible {
		elems[k] = types.StringUnknown()
	}
	return types.MapValueMust(types.StringType, elems)
}

// display is how the resources attribute shows objects.
type display struct {
	// Key hashes Secret values and sensitive strings (manifest.Hash);
	// nil shows only that they are hidden.
	Key []byte
	// Sensitive are the strings hidden wherever they occur
	// (resourceMask).
	Sensitive []string
}

// showManifest is the objects of a release manifest as the resources
// attribute shows them (Secret values as manifest.Hash under show.Key,
// show.Sensitive hidden in every object); drifted objects show their live
// fields and missing ones are left out. masked are the keys of the
// objects other than Secrets in which sensitive strings were hidden.
func showManifest(releaseManifest, namespace string, scope manifest.Scope, drift *reconcile.DriftReport, show display) (shown map[string]string, masked []string, err error) {
	objs, err := manifest.Parse(releaseManifest, namespace, scope)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the rendered manifest: %w", err)
	}
	mask := manifest.Mask(show.Key, show.Sensitive)
	drifted := map[string]reconcile.ObjectDrift{}
	if drift != nil {
		for _, o := range drift.Objects {
			drifted[o.Key] = o
		}
	}
	shown = make(map[string]string, len(objs))
	for _, o := range objs {
		obj := o.Object
		if d, ok := drifted[o.Key]; ok {
			if d.Missing {
				continue
			}
			obj = d.Observed
		}
		hid := false
		var redact func(string) string
		if mask != nil {
			redact = func(s string) string {
				out := mask(s)
				hid = hid || out != s
				return out
			}
		}
		y, err := manifest.Display(obj, show.Key, redact)
		if err != nil {
			return nil, nil, fmt.Errorf("showing %s: %w", o.Key, err)
		}
		shown[o.Key] = y
		if hid && !isSecretKey(o.Key) {
			masked = append(masked, o.Key)
		}
	}
	slices.Sort(masked)
	return shown, masked, nil
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

// isSecretKey reports whether a key of resources names a Secret.
func isSecretKey(key string) bool { return strings.HasPrefix(key, "v1/Secret/") }
