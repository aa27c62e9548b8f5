package provider

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/manifest"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/redact"
)

// privateSensitivePaths is the private state key under which apply and
// Read keep where the release's values hold sensitive strings (those of
// sensitive_values, sensitive_values_wo and values read from Secrets): the
// paths, never the strings. Read takes the strings from the release's
// values in Helm storage, so that resources hides them as the plan did,
// write-only values included.
const privateSensitivePaths = "sensitive_paths"

// sensitivePaths are the paths (keys, list indexes in decimal) of the
// strings of v equal to one of sensitive, in a stable order.
func sensitivePaths(v map[string]any, sensitive map[string]bool) [][]string {
	var out [][]string
	var walk func(v any, at []string)
	walk = func(v any, at []string) {
		switch t := v.(type) {
		case string:
			if sensitive[t] {
				out = append(out, slices.Clone(at))
			}
		case map[string]any:
			for k, e := range t {
				walk(e, append(at, k))
			}
		case []any:
			for i, e := range t {
				walk(e, append(at, strconv.Itoa(i)))
			}
		}
	}
	walk(v, nil)
	slices.SortFunc(out, func(a, b []string) int { return slices.Compare(a, b) })
	return out
}

// stringsAt are the strings at paths in v; paths that lead elsewhere are
// left out.
func stringsAt(v map[string]any, paths [][]string) []string {
	var out []string
	for _, p := range paths {
		var cur any = v
		for _, seg := range p {
			switch t := cur.(type) {
			case map[string]any:
				cur = t[seg]
			case []any:
				i, err := strconv.Atoi(seg)
				if err != nil || i < 0 || i >= len(t) {
					cur = nil
				} else {
					cur = t[i]
				}
			default:
				cur = nil
			}
		}
		if s, ok := cur.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// resourceMask hides secrets in the objects resources shows, as the helm
// provider hides its sensitive values in the manifest: every occurrence,
// in each form a template or an error writes it (escaped, base64, a line
// of several), becomes manifest.Hash of the secret under key, so that a
// change shows while no guess can be checked. nil when there is nothing
// to hide; secrets shorter than minRedacted are left, as in messages.
func resourceMask(key []byte, secrets []string) func(string) string {
	byForm := map[string]string{}
	for _, s := range secrets {
		shown := manifest.Hash(key, []byte(s))
		for _, form := range redact.Forms(s) { // none under minRedacted
			byForm[form] = shown
		}
	}
	if len(byForm) == 0 {
		return nil
	}
	forms := make([]string, 0, len(byForm))
	for f := range byForm {
		forms = append(forms, f)
	}
	// Longest first: a secret may hold another.
	slices.SortFunc(forms, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		pairs = append(pairs, f, byForm[f])
	}
	return strings.NewReplacer(pairs...).Replace
}

// readSensitivePaths are the paths Read hides in rel: those the last apply
// kept, else (a state written before they were kept) those of the strings
// red holds of the state's sensitive values.
func readSensitivePaths(ctx context.Context, private privateGetter, rel *helm.Release, red *redactor, diags *diag.Diagnostics) [][]string {
	if paths := loadSensitivePaths(ctx, private, diags); len(paths) > 0 || rel == nil {
		return paths
	}
	return sensitivePaths(rel.Config, red.values)
}

// saveSensitivePaths keeps paths in the private state.
func saveSensitivePaths(ctx context.Context, private privateSetter, paths [][]string, diags *diag.Diagnostics) {
	var raw []byte
	if len(paths) > 0 {
		raw, _ = json.Marshal(paths) // strings
	}
	diags.Append(private.SetKey(ctx, privateSensitivePaths, raw)...)
}

// loadSensitivePaths reads what saveSensitivePaths kept; none when there
// is no private state.
func loadSensitivePaths(ctx context.Context, private privateGetter, diags *diag.Diagnostics) [][]string {
	if private == nil {
		return nil
	}
	raw, d := private.GetKey(ctx, privateSensitivePaths)
	diags.Append(d...)
	var out [][]string
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &out) // written by saveSensitivePaths
	}
	return out
}
