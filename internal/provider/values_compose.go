package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/values"
)

// composeValues merges values_from (read in namespace of cluster c), values and
// sensitive_values, reporting errors on their attributes; nil on error.
// red receives the strings of the sensitive values and of the values read
// from Secrets.
func composeValues(ctx context.Context, c *cluster, namespace string, inlineValues types.Dynamic, sensitiveValues []sensitiveInput, valuesFrom []valuesFromModel, red *redactor, diags *diag.Diagnostics) map[string]any {
	inline, err := valuesMap(inlineValues)
	if err != nil {
		invalidValue(diags, path.Root("values"), "values", err, "Set values to an object, e.g. values = { replicaCount = 2 }.")
		return nil
	}
	sensitive := mergeSensitive(sensitiveValues, diags)
	if sensitive == nil {
		return nil
	}
	var client kubernetes.Interface
	if len(valuesFrom) > 0 {
		if c == nil {
			clusterUnavailable(diags, path.Root("values_from"), kube.ErrNotConfigured)
			return nil
		}
		client, err = c.clients.Clientset()
		if err != nil {
			clusterUnavailable(diags, path.Root("values_from"), err)
			return nil
		}
	}
	composed, err := values.Compose(ctx, client, values.Input{
		Namespace:       namespace,
		References:      valuesReferences(valuesFrom),
		Values:          inline,
		SensitiveValues: sensitive,
		Sensitive:       red.addValue,
	})
	var refErr *values.ReferenceError
	switch {
	case errors.As(err, &refErr):
		p := path.Root("values_from").AtListIndex(refErr.Index)
		remedy := ""
		switch refErr.Reason {
		case values.ReasonNotFound:
			remedy = fmt.Sprintf("Create the %s in namespace %q, or set optional = true if the release may do without it.", refErr.Ref.Kind, namespace)
		case values.ReasonKeyNotFound:
			p = p.AtName("values_key")
			remedy = "Set values_key to a key present in the object (default values.yaml), or set optional = true."
		case values.ReasonInvalidYAML:
			p = p.AtName("values_key")
			remedy = "Store a YAML mapping of values under that key, or set target_path to set the data as a single value."
		case values.ReasonTargetPath:
			p = p.AtName("target_path")
			remedy = "Use a target_path in helm --set syntax that fits the values, and a single value under values_key."
		default:
			remedy = "Check that the provider's credentials may get the object and that the cluster is reachable, then retry."
		}
		attrError(diags, p, "Values reference failed", refErr.Error()+".", remedy)
		return nil
	case err != nil:
		diags.AddError("Values composition failed", err.Error())
		return nil
	}
	return composed
}

const sensitiveValuesRemedy = "Set sensitive_values to a YAML or JSON mapping, e.g. sensitive_values = yamlencode({ password = var.password })."

// sensitiveInput is a sensitive values attribute: where, and its YAML.
type sensitiveInput struct {
	Path  path.Path
	Value types.String
}

// parseSensitiveValues reads sensitive_values. Its errors never quote the
// document: they say only what is wrong with its shape.
func parseSensitiveValues(s string) (map[string]any, error) {
	out := map[string]any{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	var v any
	if err := yaml.Unmarshal([]byte(s), &v); err != nil {
		return nil, errors.New("not valid YAML or JSON")
	}
	switch t := v.(type) {
	case nil:
		return out, nil
	case map[string]any:
		return t, nil
	default:
		return nil, fmt.Errorf("a mapping is needed, not %T", t)
	}
}

// sensitiveValuesMapping checks sensitive_values at plan, when known.
func sensitiveValuesMapping() validator.String {
	return stringCheck{
		what:   "sensitive values",
		remedy: sensitiveValuesRemedy,
		check: func(s string) error {
			_, err := parseSensitiveValues(s)
			return err
		},
	}
}

// mergeSensitive parses the sensitive inputs and merges them in order; nil
// with a diagnostic when one is not valid.
func mergeSensitive(inputs []sensitiveInput, diags *diag.Diagnostics) map[string]any {
	sensitive := map[string]any{}
	for _, in := range inputs {
		parsed, err := parseSensitiveValues(in.Value.ValueString())
		if err != nil {
			invalidValue(diags, in.Path, "sensitive values", err, sensitiveValuesRemedy)
			return nil
		}
		sensitive = values.Merge(sensitive, parsed)
	}
	return sensitive
}

// releaseValues composes the values of the release m, its write-only ones
// included, on the release's cluster (composeValues).
func (r *releaseResource) releaseValues(ctx context.Context, m *releaseModel, wo writeOnly, red *redactor, diags *diag.Diagnostics) map[string]any {
	var refs []valuesFromModel
	if !m.ValuesFrom.IsNull() {
		diags.Append(m.ValuesFrom.ElementsAs(ctx, &refs, false)...)
	}
	if diags.HasError() {
		return nil
	}
	c := r.clusterOf(m, diags)
	if c == nil {
		return nil
	}
	return composeValues(ctx, c, m.Namespace.ValueString(), m.Values, []sensitiveInput{{path.Root("sensitive_values"), m.SensitiveValues}, {path.Root("sensitive_values_wo"), wo.SensitiveValues}}, refs, red, diags)
}
