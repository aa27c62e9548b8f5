package provider

import (
	"context"
	"errors"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/api/meta"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/manifest"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/show"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/tfvalue"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/values"
)

// deployedResources is the resources attribute of the latest release (an
// empty map when there is none).
func (r *releaseResource) deployedResources(ctx context.Context, e *reconcile.Reconciler, latest *helm.Release, sensitive [][]string, diags *diag.Diagnostics) types.Map {
	empty := types.MapValueMust(types.StringType, nil)
	if latest == nil {
		return empty
	}
	resources, err := displayResources(ctx, e, latest, nil, sensitive)
	if err != nil {
		diags.AddWarning("Release objects not readable", err.Error())
		return empty
	}
	return resources
}

// releaseInfo is the notes and description of the latest release; when it
// cannot be read, the known values of notes and description stay and
// unknown ones become empty.
func releaseInfo(latest *helm.Release, err error, notes, description types.String) (types.String, types.String) {
	switch {
	case err == nil && latest != nil && latest.Info != nil:
		return types.StringValue(latest.Info.Notes), types.StringValue(latest.Info.Description)
	case err == nil:
		return types.StringValue(""), types.StringValue("")
	}
	if notes.IsUnknown() {
		notes = types.StringValue("")
	}
	if description.IsUnknown() {
		description = types.StringValue("")
	}
	return notes, description
}

// withUnknownsFrom is planned with its unknown elements taken from
// deployed (dropped when deployed lacks them).
func withUnknownsFrom(planned, deployed types.Map) types.Map {
	elems := make(map[string]attr.Value, len(planned.Elements()))
	for k, v := range planned.Elements() {
		if !v.IsUnknown() {
			elems[k] = v
		} else if d, ok := deployed.Elements()[k]; ok {
			elems[k] = d
		}
	}
	return types.MapValueMust(types.StringType, elems)
}

// settlePlanned makes the planned hooks and CRDs an apply saves known
// where its plan could not tell them: the hooks of the release it left
// (none without one), no CRDs.
func settlePlanned(m *releaseModel, e *reconcile.Reconciler, latest *helm.Release, sensitive [][]string, diags *diag.Diagnostics) {
	if !tfvalue.FullyKnown(m.PlannedHooks) {
		deployed := deployedHooks(e, latest, sensitive, diags)
		if m.PlannedHooks.IsUnknown() {
			m.PlannedHooks = deployed
		} else {
			m.PlannedHooks = withUnknownsFrom(m.PlannedHooks, deployed)
		}
	}
	if m.PlannedAction.IsUnknown() {
		// Left to the apply's own plan, which found no Helm action to run
		// (releasePlan.unpinned): null, as a plan of none says.
		m.PlannedAction = types.StringNull()
	}
	if m.PlannedChanges.IsUnknown() {
		// Not known at plan (its inputs were not): describes no plan.
		m.PlannedChanges = types.MapNull(types.StringType)
	}
	if m.PlannedDependencies.IsUnknown() {
		m.PlannedDependencies = types.MapNull(types.StringType)
	}
	if m.PlannedCRDs.IsUnknown() {
		m.PlannedCRDs = types.MapNull(types.StringType)
	} else if !tfvalue.FullyKnown(m.PlannedCRDs) {
		m.PlannedCRDs = withUnknownsFrom(m.PlannedCRDs, types.MapValueMust(types.StringType, nil))
	}
}

// deployedHooks is the hooks of the latest release as planned_hooks shows
// them (none without a release).
func deployedHooks(e *reconcile.Reconciler, latest *helm.Release, sensitive [][]string, diags *diag.Diagnostics) types.Map {
	deployed := types.MapValueMust(types.StringType, nil)
	if e == nil || latest == nil {
		return deployed
	}
	shown, _, err := show.Manifest(hooksManifest(latest.Hooks), latest.Namespace, releaseScope(e), nil, show.Options{Key: e.Key, Sensitive: values.StringsAt(latest.Config, sensitive)})
	if err != nil {
		diags.AddWarning("Release hooks not readable", err.Error())
		return deployed
	}
	return types.MapValueMust(types.StringType, stringValues(shown))
}

func stringValues(m map[string]string) map[string]attr.Value {
	out := make(map[string]attr.Value, len(m))
	for k, v := range m {
		out[k] = types.StringValue(v)
	}
	return out
}

// displayResources is the resources attribute of a release: objects keyed
// as in helmrelease_template, Secret values hashed with the reconciler's
// SecretHashKey, and the strings at the sensitive paths of its values
// hidden wherever the chart put them.
func displayResources(ctx context.Context, e *reconcile.Reconciler, rel *helm.Release, drift *reconcile.DriftReport, sensitive [][]string) (types.Map, error) {
	shown, _, err := show.Manifest(rel.Manifest, rel.Namespace, releaseScope(e), drift, show.Options{Key: e.Key, Sensitive: values.StringsAt(rel.Config, sensitive)})
	if err != nil {
		return types.MapNull(types.StringType), err
	}
	v, d := types.MapValueFrom(ctx, types.StringType, shown)
	if d.HasError() {
		return v, errors.New("resources: " + d[0].Detail())
	}
	return v, nil
}

// releaseScope tells the scope of kinds from the release cluster's API.
func releaseScope(e *reconcile.Reconciler) manifest.Scope {
	return e.Scope()
}

// mapperScope tells the scope of kinds from a REST mapper; nil (no mapper)
// leaves it to manifest.Parse.
func mapperScope(mapper meta.RESTMapper) manifest.Scope {
	if mapper == nil {
		return nil
	}
	return func(gvk k8sschema.GroupVersionKind) (bool, bool) {
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return false, false
		}
		return m.Scope.Name() == "namespace", true
	}
}

// hooksManifest is the manifests of hooks as one YAML stream.
func hooksManifest(hooks []*helm.Hook) string {
	var b strings.Builder
	for _, h := range hooks {
		b.WriteString("---\n")
		b.WriteString(h.Manifest)
		b.WriteString("\n")
	}
	return b.String()
}
