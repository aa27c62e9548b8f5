package provider

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
)

// Every diagnostic says what is wrong in its summary and, in its detail, why
// and what to do.

func attrError(diags *diag.Diagnostics, p path.Path, summary, sentence, remedy string) {
	diags.AddAttributeError(p, summary, sentence+"\n\n"+remedy)
}

func invalidValue(diags *diag.Diagnostics, p path.Path, what string, err error, remedy string) {
	verb := "is"
	if strings.HasSuffix(what, "values") {
		verb = "are"
	}
	// The path is in the text too: Terraform cannot point at an attribute
	// nested in an object literal and shows the whole block instead.
	attrError(diags, p, "Invalid "+what, fmt.Sprintf("The %s at %s %s not valid: %s.", what, p, verb, err), remedy)
}

func clusterUnavailable(diags *diag.Diagnostics, p path.Path, err error) {
	var remedy string
	switch {
	case errors.Is(err, errConfigUnknown):
		remedy = "The provider's kubernetes settings depend on values known only after apply (for example a cluster created in the same configuration). Read this data source after the cluster exists, or make its inputs depend on the cluster resource so that Terraform reads it during apply."
	default:
		remedy = "Configure the provider's kubernetes block (or the KUBE_* / KUBECONFIG environment variables) so that it reaches the cluster."
	}
	attrError(diags, p, "Kubernetes cluster unavailable", fmt.Sprintf("This attribute needs the Kubernetes cluster, which cannot be used: %s.", err), remedy)
}
