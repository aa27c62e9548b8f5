package show

import (
	"context"
	"crypto/rand"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/manifest"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// Func renders a release of chart c with values into its manifest
// (hooks excluded) and notes. perturbed is true for the second render of
// a chart whose non-reproducible results were perturbed: its objects need
// not be validated.
type Func func(ctx context.Context, c *helm.Chart, values map[string]any, perturbed bool) (manifestYAML, notes string, err error)

// Rendering is a release as a render shows it: the one path of the plan
// of a release and of a template.
type Rendering struct {
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

// Release renders chart c with values and, when the chart calls
// template functions whose results change from one call to the next,
// renders it again with those results perturbed (helm.Perturb): the
// objects that differ are not reproducible, so a plan must not promise
// them.
func Release(ctx context.Context, render Func, c *helm.Chart, values map[string]any, namespace string, scope manifest.Scope, show Options) (*Rendering, error) {
	first, notes, err := render(ctx, c, values, false)
	if err != nil {
		return nil, err
	}
	shown, masked, err := Manifest(first, namespace, scope, nil, show)
	if err != nil {
		return nil, err
	}
	out := &Rendering{Shown: shown, Masked: masked, Notes: notes}
	pc, pv, perturbs := helm.Perturb(c, values)
	if !perturbs {
		return out, nil
	}
	if show.Key == nil {
		// Secret values show no hash: compared under a key of this
		// render only, so that a random one still tells.
		show.Key = make([]byte, 32)
		_, _ = rand.Read(show.Key)
		if shown, _, err = Manifest(first, namespace, scope, nil, show); err != nil {
			return nil, err
		}
	}
	everything := func() (*Rendering, error) {
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
	again, _, err := Manifest(second, namespace, scope, nil, show)
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

// Options is how objects are shown.
type Options struct {
	// Key hashes Secret values and sensitive strings (manifest.Hash);
	// nil shows only that they are hidden.
	Key []byte
	// Sensitive are the strings hidden wherever they occur
	// (manifest.Mask).
	Sensitive []string
}

// Manifest is the objects of a release manifest as the resources
// attribute shows them (Secret values as manifest.Hash under show.Key,
// show.Sensitive hidden in every object); drifted objects show their live
// fields and missing ones are left out. masked are the keys of the
// objects other than Secrets in which sensitive strings were hidden.
func Manifest(releaseManifest, namespace string, scope manifest.Scope, drift *reconcile.DriftReport, show Options) (shown map[string]string, masked []string, err error) {
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
		if hid && !IsSecretKey(o.Key) {
			masked = append(masked, o.Key)
		}
	}
	slices.Sort(masked)
	return shown, masked, nil
}

// IsSecretKey reports whether a key of resources names a Secret.
func IsSecretKey(key string) bool { return strings.HasPrefix(key, "v1/Secret/") }
