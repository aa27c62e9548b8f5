package provider

import (
	"context"
	"encoding/json"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/values"
)

// privateSensitivePaths is the private state key under which apply and
// Read keep where the release's values hold sensitive strings (those of
// sensitive_values, sensitive_values_wo and values read from Secrets): the
// paths, never the strings. Read takes the strings from the release's
// values in Helm storage, so that resources hides them as the plan did,
// write-only values included.
const privateSensitivePaths = "sensitive_paths"

// readSensitivePaths are the paths Read hides in rel: those the last apply
// kept, else (a state written before they were kept) those of the strings
// red holds of the state's sensitive values.
func readSensitivePaths(ctx context.Context, private privateGetter, rel *helm.Release, red *redactor, diags *diag.Diagnostics) [][]string {
	if paths := loadSensitivePaths(ctx, private, diags); len(paths) > 0 || rel == nil {
		return paths
	}
	return values.SensitivePaths(rel.Config, red.values)
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
