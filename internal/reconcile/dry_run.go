package reconcile

import (
	"context"
	"fmt"

	"helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/manifest"
)

// DryRun renders the release the next install or upgrade would make, post-
// renderers included, and has the API server validate each object with a
// server-side dry-run apply (strict field validation, in place of Helm's
// client-side OpenAPI validation, which parses the cluster's OpenAPI
// documents on every render; none when the action disables validation),
// without writing anything: to the storage, nor to the cluster. Template functions that look objects up see the cluster.
// The returned release holds the manifest (without hooks and CRDs) and notes.
func (e *Engine) DryRun(ctx context.Context, req *Request) (*release.Release, error) {
	rel, install, err := e.render(ctx, req)
	if err != nil {
		return nil, err
	}
	validate := !req.Spec.Upgrade.DisableOpenAPIValidation
	if install {
		validate = !req.Spec.Install.DisableOpenAPIValidation
	}
	if !validate {
		// As Helm then sends the objects as they are.
		return rel, nil
	}
	objs, err := manifest.Parse(rel.Manifest, req.Spec.GetTargetNamespace(), nil)
	if err != nil {
		return nil, fmt.Errorf("reading the rendered manifest of release %s: %w", releaseRef(req), err)
	}
	list := make([]*unstructured.Unstructured, len(objs))
	for i := range objs {
		list[i] = objs[i].Object
	}
	if err := e.Kube.DryRunApply(ctx, list); err != nil {
		return nil, fmt.Errorf("the cluster rejects objects of release %s: %w", releaseRef(req), err)
	}
	return rel, nil
}

// Render returns the release the next install or upgrade would make, post-
// renderers included, as DryRun does but without the API server's
// validation: to render a chart whose objects need not be valid (a chart
// whose non-reproducible results were perturbed, to compare).
func (e *Engine) Render(ctx context.Context, req *Request) (*release.Release, error) {
	rel, _, err := e.render(ctx, req)
	return rel, err
}

// render returns the release a dry-run install (install is true) or
// upgrade makes.
func (e *Engine) render(ctx context.Context, req *Request) (rel *release.Release, install bool, err error) {
	s := req.Spec
	latest, err := e.Helm.LastRelease(s.GetReleaseName())
	if err != nil {
		return nil, false, err
	}
	if latest == nil || latest.Info.Status == release.StatusUninstalled || req.AsInstall {
		rel, err = e.Helm.Install(ctx, req.Chart, req.Values, helm.InstallOptions{
			ReleaseName:              s.GetReleaseName(),
			Namespace:                s.GetTargetNamespace(),
			DisableHooks:             s.Install.DisableHooks,
			DisableOpenAPIValidation: true, // the API server validates, below
			SkipSchemaValidation:     s.Install.DisableSchemaValidation,
			TakeOwnership:            !s.Install.DisableTakeOwnership,
			Replace:                  true,
			PostRenderer:             postRenderer(s),
			DryRun:                   true,
		})
		if err != nil {
			return nil, true, fmt.Errorf("dry-run install of release %s with chart %s: %w", releaseRef(req), chartRef(req), err)
		}
		return rel, true, nil
	}
	rel, err = e.Helm.Upgrade(ctx, s.GetReleaseName(), req.Chart, req.Values, helm.UpgradeOptions{
		Namespace:                s.GetTargetNamespace(),
		DisableHooks:             s.Upgrade.DisableHooks,
		DisableOpenAPIValidation: true, // the API server validates, below
		SkipSchemaValidation:     s.Upgrade.DisableSchemaValidation,
		TakeOwnership:            !s.Upgrade.DisableTakeOwnership,
		ReuseValues:              s.Upgrade.PreserveValues,
		PostRenderer:             postRenderer(s),
		DryRun:                   true,
	})
	if err != nil {
		return nil, false, fmt.Errorf("dry-run upgrade of release %s with chart %s: %w", releaseRef(req), chartRef(req), err)
	}
	return rel, false, nil
}

// validateOnServer has the API server validate the release an install or
// upgrade is about to make (DryRun), in place of Helm's client-side
// OpenAPI validation: as strict (unknown and duplicate fields are errors),
// without parsing the cluster's OpenAPI documents on every call. Nothing is
// written either way, so a rejection is a run error, as Helm's own
// validation failing is.
func (e *Engine) validateOnServer(ctx context.Context, req *Request) error {
	if _, err := e.DryRun(ctx, req); err != nil {
		return &StorageUntouchedError{Err: err}
	}
	return nil
}
