package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"sigs.k8s.io/yaml"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/manifest"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/postrender"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/show"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/tfvalue"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/values"
)

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
	if !m.PostRenderers.IsNull() {
		// Moved from helm_release: its postrender made the release.
		st.ObservedPostRenderersDigest = reconcile.Digests{Key: key}.PostRenderers(&reconcile.Spec{PostRenderers: renderers(postRenderersOf(ctx, m.PostRenderers, &diags))})
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
	if src, ok := chartsource.RecordedSource(latest.Chart); ok && src.ChartRef != nil && m.Chart.IsNull() && m.ChartRef.IsNull() {
		// Installed from a chart_ref: the object names the chart.
		m.ChartRef = chartRefObject(src.ChartRef, m.Namespace.ValueString(), &diags)
	}
	if m.Chart.IsNull() && m.ChartRef.IsNull() {
		chartAttrs := map[string]attr.Value{}
		for k, t := range releaseChartAttribute().GetType().(types.ObjectType).AttrTypes {
			chartAttrs[k] = tfvalue.Null(t)
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
			if src.DependencyUpdate {
				chartAttrs["dependency_update"] = types.BoolValue(true)
			}
			if src.PlainHTTP {
				chartAttrs["plain_http"] = types.BoolValue(true)
			}
			chartAttrs["verify"] = verifyObject(ctx, src.Verify, &diags)
			if src.Git != nil {
				chartAttrs["git"] = recordedGitObject(src.Git, &diags)
			}
			if src.Bucket != nil {
				chartAttrs["bucket"] = recordedBucketObject(src.Bucket, &diags)
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
	shown, _, err := show.Manifest(latest.Manifest, latest.Namespace, scope, nil, show.Options{Key: key})
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
	// Imported by ID or identity, as its engine runs it; a state moved
	// from helm_release (which names the resource already) is the
	// provider's process's.
	var on *cluster
	if m.Name.IsNull() {
		on, _ = r.data.cluster(m.Cluster) // configured: the refresh checked
	}
	engineFound(ctx, on, latest).adopt(ctx, m, e, latest, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	m.Chart = r.data.chartAsConfigured(m.Chart, &resp.Diagnostics)
	keepDeployedChart(ctx, resp.Private, latest, &resp.Diagnostics)
	resp.Diagnostics.Append(setRelease(ctx, &resp.State.Raw, m)...)
}

// adoptValues sets the values of m to those of a release taken over:
// those under a key that names a secret (or a list that mentions one) in
// sensitive_values, the others in values.
func adoptValues(m *releaseModel, rel *helm.Release) diag.Diagnostics {
	var diags diag.Diagnostics
	plain, sensitive := values.SplitSensitive(rel.Config)
	if len(plain) > 0 {
		m.Values = types.DynamicValue(tfvalue.FromGo(plain))
	}
	if len(sensitive) > 0 {
		b, err := yaml.Marshal(sensitive)
		if err != nil {
			diags.AddError("Release values not encodable", "The values of release "+rel.Name+" that look secret cannot be encoded.")
			return diags
		}
		m.SensitiveValues = types.StringValue(string(b))
	}
	return diags
}
