package reconcile

import (
	"context"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/postrender"
)

// applyCRDs applies the chart's CRDs per policy, with the origin labels;
// Helm's own CRD handling is off, and CRDs are never deleted.
func (e *Engine) applyCRDs(_ context.Context, req *Request, policy CRDPolicy) error {
	if policy == CRDSkip {
		return nil
	}
	return e.Helm.ApplyCRDs(req.Chart, helm.CRDOptions{
		Replace: policy == CRDCreateReplace,
		Labels: map[string]string{
			postrender.OriginNameLabel:      req.Spec.Name,
			postrender.OriginNamespaceLabel: req.Spec.Namespace,
		},
		Timeout: req.Spec.timeout(0),
	})
}
