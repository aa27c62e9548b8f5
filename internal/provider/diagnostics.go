package provider

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
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

// unreachable reports whether err says that the cluster could not be
// reached (refused, reset, unresolvable, timed out, unavailable), rather
// than that it refused what it was sent.
func unreachable(err error) bool {
	var opErr *net.OpError
	var dnsErr *net.DNSError
	var netErr net.Error
	return errors.As(err, &opErr) || errors.As(err, &dnsErr) || (errors.As(err, &netErr) && netErr.Timeout()) ||
		utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) ||
		apierrors.IsServiceUnavailable(err)
}

// clusterUnreachable reports a plan step that needed the cluster while it
// could not be reached; the error names its address.
func clusterUnreachable(diags *diag.Diagnostics, id string, err error) {
	diags.AddError("Kubernetes cluster unreachable",
		fmt.Sprintf("helmrelease_release %s could not be planned: the cluster did not answer: %s.\n\nNothing was changed. Check that the cluster is up and reachable from where Terraform runs with the provider's kubernetes settings, then plan again.", id, err))
}
