package provider

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
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
		remedy = "The provider's settings of the cluster (its kubernetes block, or the clusters entry that cluster names) depend on values known only after apply (for example a cluster created in the same configuration). Read this data source after the cluster exists, or make its inputs depend on the cluster resource so that Terraform reads it during apply."
	default:
		remedy = "Configure the provider's kubernetes block (or the KUBE_* / KUBECONFIG environment variables), or the clusters entry that cluster names, so that it reaches the cluster."
	}
	attrError(diags, p, "Kubernetes cluster unavailable", fmt.Sprintf("This attribute needs the Kubernetes cluster, which cannot be used: %s.", err), remedy)
}

// clusterNotConfigured reports what (a release, a data source) naming a
// cluster the provider's clusters do not hold.
func clusterNotConfigured(diags *diag.Diagnostics, what string, err error) {
	attrError(diags, path.Root("cluster"), "Cluster not configured", fmt.Sprintf("%s cannot be used: %s.", what, err),
		"Name one of the provider's clusters, or add this one to them. A release whose cluster left the provider's clusters (destroyed with it) cannot be uninstalled: keep the cluster in clusters until its releases are destroyed, or forget them with `terraform state rm`; the state is kept as it is.")
}

// unreachable reports whether err comes from a cluster that could not be
// reached: err is of the kind a network failure gives (refused, reset,
// unresolvable, timed out, unavailable) and the API server, asked at once,
// does not answer. A wait that ran out of time is never one: its error
// carries context.DeadlineExceeded too, while the cluster answered all
// along.
func unreachable(ctx context.Context, e *reconcile.Reconciler, err error) bool {
	var waitErr *reconcile.WaitError
	if err == nil || errors.As(err, &waitErr) || !networkError(err) {
		return false
	}
	return e == nil || e.Reachable(ctx) != nil
}

// networkError reports whether err is of the kind a network failure gives;
// only asking the server tells whether it was one.
func networkError(err error) bool {
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

// waitRemedy says what to do about the objects a wait stopped on, cause by
// cause, most specific first.
func waitRemedy(we *reconcile.WaitError) string {
	var out []string
	for _, c := range we.Causes() {
		switch c {
		case kube.CauseUnschedulable:
			out = append(out, "Pods cannot be scheduled (the scheduler's message is above): lower their resource requests, or change their node selector, affinity or tolerations in values; or give the cluster nodes with what they ask for.")
		case kube.CauseVolume:
			out = append(out, "PersistentVolumeClaims do not bind: name a StorageClass the cluster has in values (charts call it persistence.storageClass or similar), give the cluster a default StorageClass whose provisioner runs, or turn persistence off in values.")
		case kube.CauseLoadBalancer:
			out = append(out, "A Service of type LoadBalancer has no address: the cluster needs a load balancer controller (the cloud's, or MetalLB on bare metal); or set the Service's type to ClusterIP or NodePort in values; or set install.disable_wait / upgrade.disable_wait = true to stop waiting for it.")
		case kube.CauseFailed:
			out = append(out, "A Job or pod failed: its last log lines are above; fix what it needs (values, credentials, endpoints).")
		case kube.CauseHealthCheck:
			out = append(out, "A health check of health_check_exprs does not hold (the expression is named above): the object's status says why (kubectl get <kind> <name> -o yaml); fix what the object or its operator needs, or the expression if it misreads the status.")
		case kube.CauseContainer:
			out = append(out, "Containers do not start: check the image, its tag and pull secrets in values, and the container's configuration (the reason is above).")
		case kube.CauseMissing:
			out = append(out, "Objects the wait needs do not exist: a hook's delete policy or something else in the cluster deleted them, or they were never created.")
		case kube.CauseProgressing:
			out = append(out, fmt.Sprintf("The objects were still starting after %s: raise the timeout (install.timeout, upgrade.timeout or rollback.timeout, or timeout), or set disable_wait = true to not wait for readiness.", we.Timeout))
		}
	}
	if len(out) == 0 {
		out = append(out, "Fix the cause (see the error above).")
	}
	return strings.Join(out, "\n\n")
}
