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
	"github.com/helmrelease/terraform-provider-helmrelease/internal/tfvalue"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/values"
)

// decodeValues decodes what makes a release's values (values, the
// sensitive inputs in order, values_from read in namespace) as
// values.Compose takes it; nil with a diagnostic on the attribute that is
// not valid.
func decodeValues(namespace string, inlineValues types.Dynamic, sensitiveValues []sensitiveInput, valuesFrom []valuesFromModel, diags *diag.Diagnostics) *values.Input {
	inline, err := tfvalue.ValuesMap(inlineValues)
	if err != nil {
		invalidValue(diags, path.Root("values"), "values", err, "Set values to an object, e.g. values = { replicaCount = 2 }.")
		return nil
	}
	sensitive := mergeSensitive(sensitiveValues, diags)
	if sensitive == nil {
		return nil
	}
	return &values.Input{Namespace: namespace, References: valuesReferences(valuesFrom), Values: inline, SensitiveValues: sensitive}
}

// composeValues merges in's values_from (read on cluster c), values and
// sensitive values, reporting errors on their attributes; nil on error.
// red receives the strings of the sensitive values and of the values read
// from Secrets.
func composeValues(ctx context.Context, c *cluster, in *values.Input, red *redactor, diags *diag.Diagnostics) map[string]any {
	if in == nil {
		return nil
	}
	var client kubernetes.Interface
	if len(in.References) > 0 {
		if c == nil {
			clusterUnavailable(diags, path.Root("values_from"), kube.ErrNotConfigured)
			return nil
		}
		var err error
		client, err = c.clients.Clientset()
		if err != nil {
			clusterUnavailable(diags, path.Root("values_from"), err)
			return nil
		}
	}
	composeIn := *in
	composeIn.Sensitive = red.addValue
	composed, err := values.Compose(ctx, client, composeIn)
	var refErr *values.ReferenceError
	switch {
	case errors.As(err, &refErr):
		p := path.Root("values_from").AtListIndex(refErr.Index)
		remedy := ""
		switch refErr.Reason {
		case values.ReasonNotFound:
			remedy = fmt.Sprintf("Create the %s in namespace %q, or set optional = true if the release may do without it.", refErr.Ref.Kind, in.Namespace)
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

// releaseValuesInput decodes what makes the values of the release m, its
// write-only ones included (decodeValues).
func releaseValuesInput(ctx context.Context, m *releaseModel, wo writeOnly, diags *diag.Diagnostics) *values.Input {
	var refs []valuesFromModel
	if !m.ValuesFrom.IsNull() {
		diags.Append(m.ValuesFrom.ElementsAs(ctx, &refs, false)...)
	}
	if diags.HasError() {
		return nil
	}
	return decodeValues(m.Namespace.ValueString(), m.Values, []sensitiveInput{{path.Root("sensitive_values"), m.SensitiveValues}, {path.Root("sensitive_values_wo"), wo.SensitiveValues}}, refs, diags)
}

// releaseValues composes the values of the release m, its write-only ones
// included, on the release's cluster (composeValues).
func (r *releaseResource) releaseValues(ctx context.Context, m *releaseModel, wo writeOnly, red *redactor, diags *diag.Diagnostics) map[string]any {
	return r.composeReleaseValues(ctx, m, releaseValuesInput(ctx, m, wo, diags), red, diags)
}

// composeReleaseValues composes in, the values of the release m, on the
// release's cluster.
func (r *releaseResource) composeReleaseValues(ctx context.Context, m *releaseModel, in *values.Input, red *redactor, diags *diag.Diagnostics) map[string]any {
	if in == nil {
		return nil
	}
	c := r.clusterOf(m, diags)
	if c == nil {
		return nil
	}
	return composeValues(ctx, c, in, red, diags)
}
