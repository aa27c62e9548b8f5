package reconcile

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
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
func (e *Reconciler) DryRun(ctx context.Context, req *Request) (*helm.Release, error) {
	rel, install, coming, clientSide, err := e.renderAsTheAction(ctx, req)
	if err != nil {
		return nil, err
	}
	if e.plannedKinds != nil {
		// For the releases planned after this one: what its CRDs define
		// (of crds/, those its CRD policy creates).
		crds := ""
		if policy := req.Spec.UpgradeCRDs(); install && req.Spec.InstallCRDs() != CRDSkip || !install && policy != CRDSkip {
			crds = crdsManifest(req.Chart)
		}
		e.plannedKinds.Record(releaseRef(req), rel.Manifest, crds)
	}
	var unserved []UnservedKind
	if clientSide {
		// A dry run that went to the API server mapped every object.
		if unserved, err = e.unservedKinds(rel.Manifest, coming); err != nil {
			return nil, err
		}
	}
	e.mu.Lock()
	e.unserved = unserved
	e.mu.Unlock()
	validate := !req.Spec.Upgrade.DisableOpenAPIValidation
	if install {
		validate = !req.Spec.Install.DisableOpenAPIValidation
	}
	if !validate {
		// As Helm then sends the objects as they are.
		return rel, nil
	}
	// The objects the action's post-renderers see and it validates (not
	// the hooks, which Helm does not post-render): the action trusts this
	// validation for the same objects only.
	validated, err := e.validate(ctx, req, rel.Manifest, coming, kube.DryRunOptions{})
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.validated = validated
	e.mu.Unlock()
	return rel, nil
}

// Validated is what the newest DryRun had the API server validate whole;
// nil when it skipped objects (kinds or a namespace to come) or did not
// validate. A plan hands it to its apply (TrustedRender).
func (e *Reconciler) Validated() *kube.ValidatedSet {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.validated
}

// rendersInstall tells whether the next action of req renders as an
// install (no release, or one uninstalled, or AsInstall) or an upgrade.
func (e *Reconciler) rendersInstall(req *Request) (bool, error) {
	latest, err := e.Helm.LastRelease(req.Spec.GetReleaseName())
	if err != nil {
		return false, err
	}
	return latest == nil || latest.Info.Status == helm.StatusUninstalled || req.AsInstall || req.reinstalls(), nil
}

// crdKindsToCome are the kinds the chart's CRDs define that the cluster
// does not serve and that the action's CRD policy creates before it
// installs or upgrades.
func (e *Reconciler) crdKindsToCome(req *Request, install bool) ([]schema.GroupVersionKind, error) {
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
	return kube.Unserved(mapper, kinds), nil
}

// renderBeforeCRDs renders the release client-side, as the install or
// upgrade will once the chart's CRDs exist: .Capabilities hold the
// cluster's API versions and the kinds coming. The template function
// lookup reads the cluster, as the action's own render will (Helm's
// client-side render would find nothing: a plan that showed that would
// not be what the install deploys).
func (e *Reconciler) renderBeforeCRDs(ctx context.Context, req *Request, install bool, coming []schema.GroupVersionKind) (*helm.Release, error) {
	dc, err := e.Kube.ToDiscoveryClient()
	if err != nil {
		return nil, err
	}
	caps, err := helm.DiscoverCapabilities(dc)
	if err != nil {
		return nil, err
	}
	caps.APIVersions = append(caps.APIVersions, apiVersionsOf(coming)...)
	config, err := e.Kube.ToRESTConfig()
	if err != nil {
		return nil, err
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
		PostRenderer:            postRenderer(ctx, s),
		PostRenderStrategy:      s.PostRenderStrategy.helm(),
		Capabilities:            caps,
		DisableSchemaValidation: skipSchema,
		IsUpgrade:               !install,
		LookupConfig:            config,
		Lookups:                 req.Lookups,
	})
	if err != nil {
		return nil, fmt.Errorf("rendering release %s with chart %s before its CRDs exist: %w", releaseRef(req), chartRef(req), err)
	}
	return &helm.Release{
		Name: s.GetReleaseName(), Namespace: s.GetTargetNamespace(), Chart: req.Chart, Config: req.Values,
		Manifest: r.Manifest, Hooks: r.Hooks, Info: &helm.Info{Notes: r.Notes},
	}, nil
}

// Render returns the release the next install or upgrade would make, post-
// renderers included, as DryRun does (client-side with the kinds of the
// chart's CRDs to come, its subcharts' included, when there are such)
// but without the API server's validation: to render a chart whose
// objects need not be valid (a chart whose non-reproducible results were
// perturbed, to compare).
func (e *Reconciler) Render(ctx context.Context, req *Request) (*helm.Release, error) {
	rel, _, _, _, err := e.renderAsTheAction(ctx, req)
	return rel, err
}

// renderAsTheAction renders the release as the next install or upgrade
// (install tells which) will: with a dry-run action, or client-side when
// kinds of the chart's CRDs are to come (coming), or when the chart's
// objects are of kinds the cluster does not serve (with the kinds of the
// CRDs planned before it to come too, see Options.PlannedKinds);
// clientSide says which.
func (e *Reconciler) renderAsTheAction(ctx context.Context, req *Request) (rel *helm.Release, install bool, coming []schema.GroupVersionKind, clientSide bool, err error) {
	if install, err = e.rendersInstall(req); err != nil {
		return nil, false, nil, false, err
	}
	if coming, err = e.crdKindsToCome(req, install); err != nil {
		return nil, false, nil, false, err
	}
	mapper, err := e.Kube.ToRESTMapper()
	if err != nil {
		return nil, false, nil, false, err
	}
	// The kinds of the CRDs planned before this release that the cluster
	// does not serve yet: the apply creates them first, so the install or
	// upgrade sees them in .Capabilities, and so must every render of the
	// plan (a chart that gates its custom resources on
	// .Capabilities.APIVersions.Has renders them only then). A render that
	// then has objects of those kinds cannot be mapped: it is made
	// client-side, below.
	planned := kube.Unserved(mapper, e.plannedKinds.All())
	if len(coming) == 0 {
		rel, err = e.render(ctx, req, apiVersionsOf(planned))
		if err == nil || !meta.IsNoMatchError(err) {
			return rel, install, coming, false, err
		}
		// The chart's own CRDs, which its CRD policy skips: the action
		// would fail as the render did.
		if own, kerr := helm.CRDKinds(req.Chart); kerr == nil && len(kube.Unserved(mapper, own)) > 0 {
			return nil, false, nil, false, err
		}
	}
	rel, err = e.renderBeforeCRDs(ctx, req, install, append(slices.Clone(coming), planned...))
	return rel, install, coming, true, err
}

// UnservedKind is a kind of objects a release renders that the cluster
// does not serve and its chart's CRDs do not define.
type UnservedKind struct {
	schema.GroupVersionKind
	// Planned, when the kind's CRD is in the plan of a release planned
	// before (Options.PlannedKinds), is that release; the objects' scope
	// is then known. Empty: no release planned so far brings it.
	Planned string
	// Objects names the release's objects of the kind.
	Objects []string
}

// UnservedKinds are the kinds of the newest DryRun's objects that the
// cluster does not serve and its chart's CRDs do not define: the objects
// were rendered but not validated, which the apply does once the kinds
// are served.
func (e *Reconciler) UnservedKinds() []UnservedKind {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.unserved)
}

// unservedKinds finds the kinds of manifestText's objects that the
// cluster does not serve, coming (the chart's CRDs') apart.
func (e *Reconciler) unservedKinds(manifestText string, coming []schema.GroupVersionKind) ([]UnservedKind, error) {
	mapper, err := e.Kube.ToRESTMapper()
	if err != nil {
		return nil, err
	}
	objs, err := manifest.Parse(manifestText, "", e.Scope())
	if err != nil {
		return nil, nil //nolint:nilerr // what does not parse is refused by the validation, when the action has it, not here
	}
	var out []UnservedKind
	index := map[schema.GroupVersionKind]int{}
	for _, o := range objs {
		gvk := o.Object.GroupVersionKind()
		if slices.Contains(coming, gvk) {
			continue
		}
		i, seen := index[gvk]
		if !seen {
			if len(kube.Unserved(mapper, []schema.GroupVersionKind{gvk})) == 0 {
				index[gvk] = -1
				continue
			}
			k := UnservedKind{GroupVersionKind: gvk}
			if p, ok := e.plannedKinds.Lookup(gvk); ok {
				k.Planned = p.By
			}
			out = append(out, k)
			i = len(out) - 1
			index[gvk] = i
		}
		if i >= 0 {
			out[i].Objects = append(out[i].Objects, o.Object.GetName())
		}
	}
	return out, nil
}

// Scope tells the scope of kinds as the cluster serves them, or as the
// CRDs planned before define them (Options.PlannedKinds).
func (e *Reconciler) Scope() manifest.Scope {
	mapper, err := e.Kube.ToRESTMapper()
	return func(gvk schema.GroupVersionKind) (bool, bool) {
		if err == nil {
			if m, merr := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); merr == nil {
				return m.Scope.Name() == meta.RESTScopeNameNamespace, true
			}
		}
		if p, ok := e.plannedKinds.Lookup(gvk); ok {
			return p.Namespaced, true
		}
		return false, false
	}
}

// crdsManifest is the chart's CRDs of its crds/ directories, its
// subcharts' included, as one YAML stream.
func crdsManifest(c *helm.Chart) string {
	var b strings.Builder
	for _, crd := range c.CRDObjects() {
		b.WriteString("---\n")
		b.Write(crd.File.Data)
		b.WriteString("\n")
	}
	return b.String()
}

// render returns the release a dry-run install or upgrade makes.
func (e *Reconciler) render(ctx context.Context, req *Request, apiVersions []string) (rel *helm.Release, err error) {
	s := req.Spec
	latest, err := e.Helm.LastRelease(s.GetReleaseName())
	if err != nil {
		return nil, err
	}
	if latest == nil || latest.Info.Status == helm.StatusUninstalled || req.AsInstall || req.reinstalls() {
		rel, err = e.Helm.Install(ctx, req.Chart, req.Values, helm.InstallOptions{
			ReleaseName:              s.GetReleaseName(),
			Namespace:                s.GetTargetNamespace(),
			DisableHooks:             s.Install.DisableHooks,
			DisableOpenAPIValidation: true, // the API server validates, below
			SkipSchemaValidation:     s.Install.DisableSchemaValidation,
			TakeOwnership:            !s.Install.DisableTakeOwnership,
			Replace:                  true,
			ServerSideApply:          s.Install.serverSideApply(),
			PostRenderer:             postRenderer(ctx, s),
			PostRenderStrategy:       s.PostRenderStrategy.helm(),
			DryRun:                   true,
			APIVersions:              apiVersions,
			Lookups:                  req.Lookups,
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
		ApplyMethod:              applyMethod(s.Upgrade.ServerSideApply),
		PostRenderer:             postRenderer(ctx, s),
		PostRenderStrategy:       s.PostRenderStrategy.helm(),
		DryRun:                   true,
		APIVersions:              apiVersions,
		Lookups:                  req.Lookups,
	})
	if err != nil {
		return nil, fmt.Errorf("dry-run upgrade of release %s with chart %s: %w", releaseRef(req), chartRef(req), err)
	}
	return rel, nil
}

// validate has the API server validate the objects of manifest (a
// server-side dry-run apply each, see kube.Getter.DryRunApply), except those
// of the kinds coming; it returns the set validated whole, if it was.
func (e *Reconciler) validate(ctx context.Context, req *Request, manifestText string, coming []schema.GroupVersionKind, opts kube.DryRunOptions) (*kube.ValidatedSet, error) {
	objs, err := manifest.Parse(manifestText, req.Spec.GetTargetNamespace(), nil)
	if err != nil {
		return nil, fmt.Errorf("reading the rendered manifest of release %s: %w", releaseRef(req), err)
	}
	list := make([]*unstructured.Unstructured, 0, len(objs))
	for i := range objs {
		if !slices.Contains(coming, objs[i].Object.GroupVersionKind()) && !isHook(objs[i].Object) {
			list = append(list, withoutRenderAnnotation(objs[i].Object))
		}
	}
	validated, err := e.Kube.DryRunApply(ctx, list, opts)
	if err != nil {
		return nil, fmt.Errorf("the cluster rejects objects of release %s: %w", releaseRef(req), err)
	}
	return validated, nil
}

// isHook reports whether obj is one of the chart's hooks, which go through
// the post-renderers with the objects under the combined and separate
// strategies: Helm creates them when their event comes, after deleting
// those of the last run, so that the cluster's answer now says nothing
// of them (a Job's template is immutable while the last run's exists).
func isHook(obj *unstructured.Unstructured) bool {
	_, ok := obj.GetAnnotations()[helm.HookAnnotation]
	return ok
}

// withoutRenderAnnotation is obj as Helm writes it: without the annotation
// that names its template file to the post-renderers, which Helm removes
// after them (the validating renderer sees it; the plan's manifest does not).
func withoutRenderAnnotation(obj *unstructured.Unstructured) *unstructured.Unstructured {
	a := obj.GetAnnotations()
	if _, ok := a[helm.PostRenderFileAnnotation]; !ok {
		return obj
	}
	delete(a, helm.PostRenderFileAnnotation)
	if len(a) == 0 {
		a = nil
	}
	obj.SetAnnotations(a)
	return obj
}

// validatingRenderer runs the release's post-renderers inside an install or
// upgrade, then has the API server validate what they made (validate), in
// place of Helm's client-side OpenAPI validation: the objects Helm is about
// to write, rendered once; when the server refuses them, the action stops
// before it writes anything, to storage or to the cluster, and refused
// holds why.
type validatingRenderer struct {
	next     helm.PostRenderer
	validate func(manifest string) error
	refused  error
}

var _ helm.PostRenderer = (*validatingRenderer)(nil)

// validatingPostRenderer returns the post-renderer of an install or upgrade
// of req: the spec's, validated on the server unless validation is off.
func (e *Reconciler) validatingPostRenderer(ctx context.Context, req *Request, validation bool) (helm.PostRenderer, *validatingRenderer) {
	pr := postRenderer(ctx, req.Spec)
	if !validation {
		return pr, nil
	}
	v := &validatingRenderer{next: pr, validate: func(m string) error {
		if onlyHooks(m) {
			return nil // the separate strategy's stream of hooks
		}
		e.mu.Lock()
		trusted := e.TrustedRender
		e.TrustedRender = nil // once: a retry after a remediation is validated anew
		e.mu.Unlock()
		_, err := e.validate(ctx, req, m, nil, kube.DryRunOptions{TrustPlan: true, Planned: trusted})
		return err
	}}
	return v, v
}

// onlyHooks reports whether every object of manifest is a hook; one that
// does not parse is left for validate to say so.
func onlyHooks(manifestText string) bool {
	objs, err := manifest.Parse(manifestText, "", nil)
	if err != nil {
		return false
	}
	for i := range objs {
		if !isHook(objs[i].Object) {
			return false
		}
	}
	return true
}

func (v *validatingRenderer) Run(in *bytes.Buffer) (*bytes.Buffer, error) {
	out, err := v.next.Run(in)
	if err != nil {
		return nil, err
	}
	if err := v.validate(out.String()); err != nil {
		v.refused = err
		return nil, err
	}
	return out, nil
}

// apiVersionsOf is what .Capabilities.APIVersions has for kinds: each
// kind's group/version and group/version/Kind.
func apiVersionsOf(kinds []schema.GroupVersionKind) []string {
	out := make([]string, 0, 2*len(kinds))
	for _, k := range kinds {
		gv := k.GroupVersion().String()
		out = append(out, gv, gv+"/"+k.Kind)
	}
	return out
}
