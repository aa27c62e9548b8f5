package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/tfvalue"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/values"
)

var _ function.Function = (*mergeValuesFunction)(nil)

// NewMergeValuesFunction returns provider::helmrelease::merge_values
// (Terraform ≥ 1.8).
func NewMergeValuesFunction() function.Function { return &mergeValuesFunction{} }

// mergeValuesFunction merges values documents as `helm install -f a.yaml
// -f b.yaml` does.
type mergeValuesFunction struct{}

func (f *mergeValuesFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "merge_values"
}

func (f *mergeValuesFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "Merges Helm values as helm install -f a.yaml -f b.yaml does",
		MarkdownDescription: "Merges values documents in order, each over the ones before it, exactly as Helm merges the files of " +
			"`helm install -f a.yaml -f b.yaml` (and HashiCorp's `helm_release` its `values` list): maps merge key by key at every depth, " +
			"any other value replaces the one before it (lists are replaced whole, never appended), and a `null` is kept, so that, as with `-f`, " +
			"it deletes the chart's default of that key when the chart is rendered. Each argument is a YAML or JSON document (e.g. `file(\"values.yaml\")`; " +
			"an empty document or `null` adds nothing) or an object or map. The result is an object for `values`, or for `sensitive_values` through `yamlencode`. " +
			"Terraform's own `merge` is shallow: a nested map of a later argument replaces the earlier one whole.",
		VariadicParameter: function.DynamicParameter{
			Name:                "documents",
			AllowNullValue:      true,
			MarkdownDescription: "Values documents (YAML or JSON strings) or objects, merged in order: later ones win.",
		},
		Return: function.DynamicReturn{},
	}
}

func (f *mergeValuesFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var docs []types.Dynamic
	resp.Error = function.ConcatFuncErrors(resp.Error, req.Arguments.Get(ctx, &docs))
	if resp.Error != nil {
		return
	}
	merged := map[string]any{}
	for i, d := range docs {
		m, err := valuesDocument(d)
		if err != nil {
			// Never the document itself: it may hold secrets.
			resp.Error = function.NewArgumentFuncError(int64(i), fmt.Sprintf("document %d of merge_values is not usable: %s. Give a YAML or JSON mapping (e.g. file(\"values.yaml\")) or an object.", i+1, err))
			return
		}
		merged = values.Merge(merged, m)
	}
	resp.Error = function.ConcatFuncErrors(resp.Error, resp.Result.Set(ctx, types.DynamicValue(tfvalue.FromGo(merged))))
}

// valuesDocument is one argument of merge_values as Helm values.
func valuesDocument(d types.Dynamic) (map[string]any, error) {
	if d.IsNull() || d.IsUnderlyingValueNull() {
		return map[string]any{}, nil
	}
	if s, ok := d.UnderlyingValue().(types.String); ok {
		return parseSensitiveValues(s.ValueString())
	}
	return tfvalue.ValuesMap(d)
}
