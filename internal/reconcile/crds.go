package reconcile

import (
	"context"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/postrender"
)

// applyCRDs applies the chart's CRDs per policy, with the origin labels;
// Helm's own CRD handling is off, and CRDs are never deleted.
func (e *Reconciler) applyCRDs(_ context.Context, req *Request, policy CRDPolicy) error {
	if policy == CRDSkip {
		return nil
	}
	return e.Helm.ApplyCRDs(req.Chart, crdOptions(req, policy))
}

// CRDsToWrite is the chart's CRDs the install (else the upgrade) of req
// applies under its CRD policy, as a YAML stream (Create: each unless it
// exists then; CreateReplace: each, replaced); empty under Skip.
func (e *Reconciler) CRDsToWrite(req *Request, install bool) (string, error) {
	policy := req.Spec.UpgradeCRDs()
	if install {
		policy = req.Spec.InstallCRDs()
	}
	if policy == CRDSkip {
		return "", nil
	}
	return e.Helm.CRDsToWrite(req.Chart, crdOptions(req, policy))
}

// crdOptions labels the CRDs with the origin labels of the spec's group.
func crdOptions(req *Request, policy CRDPolicy) helm.CRDOptions {
	group := req.Spec.OriginGroup
	if group == "" {
		group = postrender.OriginGroup
	}
	return helm.CRDOptions{
		Replace: policy == CRDCreateReplace,
		Labels:  map[string]string{group + "/name": req.Spec.Name, group + "/namespace": req.Spec.Namespace},
		Timeout: req.Spec.timeout(0),
	}
}
