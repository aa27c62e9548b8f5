package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/client-go/kubernetes"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/values"
)

// composeValues merges values_from (read in namespace), values and
// sensitive_values, reporting errors on their attributes; nil on error.
func composeValues(ctx context.Context, data *providerData, namespace string, inlineValues, sensitiveValues types.Dynamic, valuesFrom []valuesFromModel, diags *diag.Diagnostics) map[string]any {
	inline, err := valuesMap(inlineValues)
	if err != nil {
		invalidValue(diags, path.Root("values"), "values", err, "Set values to an object, e.g. values = { replicaCount = 2 }.")
		return nil
	}
	sensitive, err := valuesMap(sensitiveValues)
	if err != nil {
		// The message of valuesMap names only the type, never the value.
		invalidValue(diags, path.Root("sensitive_values"), "sensitive values", err, "Set sensitive_values to an object, e.g. sensitive_values = { password = var.password }.")
		return nil
	}
	var client kubernetes.Interface
	if len(valuesFrom) > 0 {
		if data == nil {
			clusterUnavailable(diags, path.Root("values_from"), kube.ErrNotConfigured)
			return nil
		}
		client, err = data.clients.Clientset()
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
