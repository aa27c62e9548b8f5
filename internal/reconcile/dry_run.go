package reconcile

import (
	"context"
	"fmt"
	"slices"

	"helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

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
//
// Objects of kinds that the chart's own CRDs define, which the action
// creates before installing (its CRD policy) but the cluster does not serve
// yet, can be neither mapped nor validated before the apply: the chart is
// then rendered client-side, with the capabilities the install will see
// (the cluster's and the new kinds), and only the other objects are
// validated; the apply validates everything once the CRDs exist.
func (e *Engine) DryRun(ctx context.Context, req *Request) (*release.Release, error) {
	install, err := e.rendersInstall(req)
	if err != nil {
		return nil, err
	}
	coming, err := e.crdKindsToCome(req, install)
	if err != nil {
		return nil, err
	}
	var rel *release.Release
	if len(coming) > 0 {
		rel, err = e.renderBeforeCRDs(ctx, req, install, coming)
	} else {
		rel, err = e.render(ctx, req)
	}
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
	list := make([]*unstructured.Unstructured, 0, len(objs))
	for i := range objs {
		if !slices.Contains(coming, objs[i].Object.GroupVersionKind()) {
			list = append(list, objs[i].Object)
		}
	}
	if err := e.Kube.DryRunApply(ctx, list); err != nil {
		return nil, fmt.Errorf("the cluster rejects objects of release %s: %w", releaseRef(req), err)
	}
	return rel, nil
}

// rendersInstall tells whether the next action of req renders as an
// install (no release, or one uninstalled, or AsInstall) or an upgrade.
func (e *Engine) rendersInstall(req *Request) (bool, error) {
	latest, err := e.Helm.LastRelease(req.Spec.GetReleaseName())
	if err != nil {
		return false, err
	}
	return latest == nil || latest.Info.Status == release.StatusUninstalled || req.AsInstall, nil
}

// crdKindsToCome are the kinds the chart's CRDs define that the cluster
// does not serve and that the action's CRD policy creates before it
// installs or upgrades.
func (e *Engine) crdKindsToCome(req *Request, install bool) ([]schema.GroupVersionKind, error) {
	policy := req.Spec.UpgradeCRDs()
	if install {
		policy = req.Spec.InstallCRDs()
	}
	if policy == CRDSkip || len(req.Chart.CRDObjects()) == 0 {
		return nil, nil
	}
	kinds, err := helm.CRDKinds(req.Chart)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", chartRef(req), err)
	}
	mapper, err := e.Kube.ToRESTMapper()
	if err != nil {
		return nil, err
	}
	var out []schema.GroupVersionKind
	for _, k := range kinds {
		if _, err := mapper.RESTMapping(k.GroupKind(), k.Version); meta.IsNoMatchError(err) {
			out = append(out, k)
		}
	}
	return out, nil
}

// renderBeforeCRDs renders the release client-side, as the install or
// upgrade will once the chart's CRDs exist: .Capabilities hold the
// cluster's API versions and the kinds coming. Template functions that
// look objects up see nothing, as in a client-side render.
func (e *Engine) renderBeforeCRDs(ctx context.Context, req *Request, install bool, coming []schema.GroupVersionKind) (*release.Release, error) {
	dc, err := e.Kube.ToDiscoveryClient()
	if err != nil {
		return nil, err
	}
	caps, err := helm.DiscoverCapabilities(dc)
	if err != nil {
		return nil, err
	}
	for _, k := range coming {
		caps.APIVersions = append(caps.APIVersions, k.GroupVersion().String(), k.GroupVersion().String()+"/"+k.Kind)
	}
	s := req.Spec
	skipSchema := s.Upgrade.DisableSchemaValidation
	if install {
		skipSchema = s.Install.DisableSchemaValidation
	}
	r, err := helm.Render(ctx, helm.RenderOptions{
		ReleaseName:             s.GetReleaseName(),
		Namespace:               s.GetTargetNamespace(),
		Chart:                   req.Chart,
		Values:                  req.Values,
		PostRenderer:            postRenderer(s),
		Capabilities:            caps,
		DisableSchemaValidation: skipSchema,
		IsUpgrade:               !install,
	})
	if err != nil {
		return nil, fmt.Errorf("rendering release %s with chart %s before its CRDs exist: %w", releaseRef(req), chartRef(req), err)
	}
	return &release.Release{
		Name: s.GetReleaseName(), Namespace: s.GetTargetNamespace(), Chart: req.Chart, Config: req.Values,
		Manifest: r.Manifest, Info: &release.Info{Notes: r.Notes},
	}, nil
}

// Render returns the release the next install or upgrade would make, post-
// renderers included, as DryRun does but without the API server's
// validation: to render a chart whose objects need not be valid (a chart
// whose non-reproducible results were perturbed, to compare).
func (e *Engine) Render(ctx context.Context, req *Request) (*release.Release, error) {
	return e.render(ctx, req)
}

// render returns the release a dry-run install or upgrade makes.
func (e *Engine) render(ctx context.Context, req *Request) (rel *release.Release, err error) {
	s := req.Spec
	latest, err := e.Helm.LastRelease(s.GetReleaseName())
	if err != nil {
		return nil, err
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
			return nil, fmt.Errorf("dry-run install of release %s with chart %s: %w", releaseRef(req), chartRef(req), err)
		}
		return rel, nil
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
		return nil, fmt.Errorf("dry-run upgrade of release %s with chart %s: %w", releaseRef(req), chartRef(req), err)
	}
	return rel, nil
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
