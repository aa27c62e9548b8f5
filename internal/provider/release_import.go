package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/flux"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/manifest"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/postrender"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// ImportState takes over an existing release by
// `[<cluster>:]<storage_namespace>/<release_name>` or by identity
// `{ cluster, namespace, name }`; the refresh that follows adopts it.
func (r *releaseResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	var cluster, storageNamespace, releaseName string
	if req.ID != "" {
		var ok bool
		cluster, storageNamespace, releaseName, ok = parseReleaseID(req.ID)
		if !ok {
			resp.Diagnostics.AddError("Invalid import ID",
				fmt.Sprintf("The import ID %q is not <storage_namespace>/<release_name>, nor <cluster>:<storage_namespace>/<release_name> for a release on one of the provider's clusters.\n\nUse the namespace of the release's Helm storage and the release name, e.g. `terraform import helmrelease_release.web apps/web` (or `prod:apps/web` on cluster prod), or an import block with identity = { namespace = \"apps\", name = \"web\" } (and cluster = \"prod\").", req.ID))
			return
		}
	} else {
		var id releaseIdentity
		resp.Diagnostics.Append(req.Identity.Get(ctx, &id)...)
		if resp.Diagnostics.HasError() {
			return
		}
		cluster, storageNamespace, releaseName = id.Cluster.ValueString(), id.Namespace.ValueString(), id.Name.ValueString()
		if storageNamespace == "" || releaseName == "" {
			resp.Diagnostics.AddError("Invalid import identity", "The import identity needs namespace (the namespace of the release's Helm storage) and name (the release name), and cluster for a release on one of the provider's clusters.")
			return
		}
		if cluster != "" && !clusterNamePattern.MatchString(cluster) {
			resp.Diagnostics.AddError("Invalid import identity", fmt.Sprintf("The import identity's cluster %q is not the name of one of the provider's clusters.", cluster))
			return
		}
	}
	clusterValue := types.StringNull()
	if cluster != "" {
		clusterValue = types.StringValue(cluster)
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), releaseID(cluster, storageNamespace, releaseName))...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("cluster"), clusterValue)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("storage_namespace"), storageNamespace)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("release_name"), releaseName)...)
	if resp.Identity != nil {
		resp.Diagnostics.Append(resp.Identity.Set(ctx, releaseIdentity{Cluster: clusterValue, Namespace: types.StringValue(storageNamespace), Name: types.StringValue(releaseName)})...)
	}
}

// readImported recovers a release being imported: identity from the
// origin labels (else the release's own), chart name and version, values,
// and a status adopting its latest revision. What the state says already
// (a state moved from helm_release) is kept.
func (r *releaseResource) readImported(ctx context.Context, m *releaseModel, e *reconcile.Reconciler, latest *helm.Release, resp *resource.ReadResponse) {
	if latest == nil || latest.Info.Status == helm.StatusUninstalled {
		resp.Diagnostics.AddError("Release not found",
			fmt.Sprintf("No release %s is installed in namespace %s.\n\nCheck the import ID: [<cluster>:]<storage_namespace>/<release_name>, as `helm list --namespace <storage_namespace>` shows them.", m.ReleaseName.ValueString(), m.StorageNamespace.ValueString()))
		return
	}
	if m.Name.IsNull() && r.importFlux(ctx, m, e, latest, resp) {
		return
	}
	resp.Diagnostics.Append(adoptRelease(ctx, m, latest, engineScope(e), e.Key)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(setRelease(ctx, &resp.State.Raw, m)...)
}

// adoptRelease fills m with latest, a release taken over as it is: the
// identity from the origin labels (else the release's own), chart name and
// version, values, objects and a status adopting the revision. What m says
// already (a state moved from helm_release) is kept; m.StorageNamespace
// must be set. Secret values show hashed with key, and the status digests
// are keyed with it (none without a key).
func adoptRelease(ctx context.Context, m *releaseModel, latest *helm.Release, scope manifest.Scope, key []byte) diag.Diagnostics {
	var diags diag.Diagnostics
	st, err := reconcile.AdoptedStatus(latest, m.StorageNamespace.ValueString(), reconcile.Digests{Key: key})
	if err != nil {
		diags.AddError("Release not importable", err.Error())
		return diags
	}
	if m.Name.IsNull() {
		name, namespace := latest.Name, m.StorageNamespace.ValueString()
		if owner, ok := singleOrigin(latest.Manifest, latest.Namespace); ok {
			namespace, name = owner[0], owner[1]
		}
		m.Name, m.Namespace = types.StringValue(name), types.StringValue(namespace)
	}
	m.TargetNamespace = types.StringValue(latest.Namespace)
	m.ReleaseName = types.StringValue(latest.Name)
	m.ID = types.StringValue(releaseID(m.Cluster.ValueString(), m.StorageNamespace.ValueString(), latest.Name))
	chartName, chartVersion, appVersion := "", "", ""
	if c := latest.Chart; c != nil && c.Metadata != nil {
		chartName, chartVersion, appVersion = c.Metadata.Name, c.Metadata.Version, c.Metadata.AppVersion
	}
	if m.Chart.IsNull() {
		chartAttrs := map[string]attr.Value{}
		for k, t := range releaseChartAttribute().GetType().(types.ObjectType).AttrTypes {
			chartAttrs[k] = nullOf(t)
		}
		if src, ok := chartsource.RecordedSource(latest.Chart); ok {
			// Installed by this provider: the chart as its configuration
			// named it.
			chartAttrs["name"], chartAttrs["version"] = types.StringValue(src.Name), stringOrNull(src.Version)
			chartAttrs["repository"] = stringOrNull(src.Repository)
			chartAttrs["reconcile_strategy"] = stringOrNull(string(src.ReconcileStrategy))
			if len(src.ValuesFiles) > 0 {
				files, d := types.ListValueFrom(ctx, types.StringType, src.ValuesFiles)
				diags.Append(d...)
				chartAttrs["values_files"] = files
			}
			if src.IgnoreMissingValuesFiles {
				chartAttrs["ignore_missing_values_files"] = types.BoolValue(true)
			}
		} else {
			chartAttrs["name"], chartAttrs["version"] = types.StringValue(chartName), types.StringValue(chartVersion)
		}
		chart, d := types.ObjectValue(releaseChartAttribute().GetType().(types.ObjectType).AttrTypes, chartAttrs)
		diags.Append(d...)
		m.Chart = chart
	}
	if m.Values.IsNull() && m.SensitiveValues.IsNull() && len(latest.Config) > 0 {
		diags.Append(adoptValues(m, latest)...)
	}
	m.ChartVersion, m.AppVersion, m.ChartDigest = types.StringValue(chartVersion), types.StringValue(appVersion), types.StringValue("")
	m.Notes, m.Description = releaseInfo(latest, nil, m.Notes, m.Description)
	shown, _, err := showManifest(latest.Manifest, latest.Namespace, scope, nil, display{Key: key})
	if err != nil {
		diags.AddError("Release objects not readable", err.Error())
		return diags
	}
	resources, d := types.MapValueFrom(ctx, types.StringType, shown)
	diags.Append(d...)
	m.Resources = resources
	status, d := statusObject(ctx, st)
	diags.Append(d...)
	m.Status = status
	return diags
}

// singleOrigin is the [namespace, name] of the origin labels when the
// manifest's objects carry exactly one.
func singleOrigin(releaseManifest, namespace string) ([2]string, bool) {
	return singleOriginOf(releaseManifest, namespace, postrender.OriginGroup)
}

// singleOriginOf is singleOrigin for the origin labels of group.
func singleOriginOf(releaseManifest, namespace, group string) ([2]string, bool) {
	objs, err := manifest.Parse(releaseManifest, namespace, nil)
	if err != nil {
		return [2]string{}, false
	}
	found := map[[2]string]bool{}
	for _, o := range objs {
		l := o.Object.GetLabels()
		if l[group+"/name"] != "" {
			found[[2]string{l[group+"/namespace"], l[group+"/name"]}] = true
		}
	}
	if len(found) != 1 {
		return [2]string{}, false
	}
	for k := range found {
		return k, true
	}
	return [2]string{}, false
}

// importFlux imports a release that Flux's helm-controller made for a
// HelmRelease that still exists, as a resource with engine = "flux": its
// name, chart (from the HelmRelease and its source), values, interval and
// the controller's status. False when the release is not such a one.
func (r *releaseResource) importFlux(ctx context.Context, m *releaseModel, e *reconcile.Reconciler, latest *helm.Release, resp *resource.ReadResponse) bool {
	owner, ok := singleOriginOf(latest.Manifest, latest.Namespace, postrender.FluxOriginGroup)
	if !ok {
		return false
	}
	on, err := r.data.cluster(m.Cluster)
	if err != nil {
		return false
	}
	fe, err := on.fluxEngine()
	if err != nil || fe.CheckCRDs() != nil {
		return false
	}
	hr, err := fe.Get(ctx, owner[0], owner[1])
	if err != nil || hr == nil {
		return false
	}
	diags := &resp.Diagnostics
	m.Namespace, m.Name = types.StringValue(hr.Namespace), types.StringValue(hr.Name)
	diags.Append(adoptRelease(ctx, m, latest, engineScope(e), e.Key)...)
	if diags.HasError() {
		return true
	}
	chart, err := fe.ChartOf(ctx, hr)
	if err != nil {
		diags.AddError("HelmRelease not importable", fmt.Sprintf("HelmRelease %s/%s: %s.\n\nImport a HelmRelease whose chart source (HelmRepository or OCIRepository) exists.", hr.Namespace, hr.Name, err))
		return true
	}
	attrs := m.Chart.Attributes()
	attrs["name"], attrs["repository"], attrs["version"] = types.StringValue(chart.Name), types.StringValue(chart.Repository), stringOrNull(chart.Version)
	attrs["reconcile_strategy"] = stringOrNull(string(chart.ReconcileStrategy))
	if len(chart.ValuesFiles) > 0 {
		files, d := types.ListValueFrom(ctx, types.StringType, chart.ValuesFiles)
		diags.Append(d...)
		attrs["values_files"] = files
	}
	c, d := types.ObjectValue(releaseChartAttribute().GetType().(types.ObjectType).AttrTypes, attrs)
	diags.Append(d...)
	m.Chart = c
	m.Engine = types.StringValue(engineFlux)
	settings := fluxModel{Interval: types.StringNull(), UninstallOnDestroy: types.BoolNull(), DependsOn: types.ListNull(dependencyType)}
	if iv := hr.Spec.Interval.Duration; iv != flux.DefaultInterval && iv > 0 {
		settings.Interval = types.StringValue(iv.String())
	}
	if len(hr.Spec.DependsOn) > 0 {
		deps := make([]dependencyModel, 0, len(hr.Spec.DependsOn))
		for _, dep := range hr.Spec.DependsOn {
			deps = append(deps, dependencyModel{Name: types.StringValue(dep.Name), Namespace: stringOrNull(dep.Namespace), ReadyExpr: stringOrNull(dep.ReadyExpr)})
		}
		l, d := types.ListValueFrom(ctx, dependencyType, deps)
		diags.Append(d...)
		settings.DependsOn = l
	}
	if !settings.Interval.IsNull() || !settings.DependsOn.IsNull() {
		f, d := objectFrom(ctx, m.Flux.AttributeTypes(ctx), settings)
		diags.Append(d...)
		m.Flux = f
	}
	adopted, d := statusOf(ctx, m.Status)
	diags.Append(d...)
	status, d := statusObject(ctx, fluxStatus(hr, adopted))
	diags.Append(d...)
	m.Status = status
	if !diags.HasError() {
		diags.Append(setRelease(ctx, &resp.State.Raw, m)...)
	}
	return true
}
