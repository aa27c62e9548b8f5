package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/helmstate"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/tfvalue"
)

var _ resource.ResourceWithMoveState = (*releaseResource)(nil)

// helmProvider is the address suffix of HashiCorp's helm provider, whose
// helm_release moves into helmrelease_release.
const helmProvider = "hashicorp/helm"

// MoveState takes `moved { from = helm_release.x }` blocks.
func (r *releaseResource) MoveState(context.Context) []resource.StateMover {
	return []resource.StateMover{{StateMover: moveHelmRelease}}
}

// moveHelmRelease turns the state of a helm_release into the state of a
// helmrelease_release managing the same release, without touching the
// cluster. What the helm provider set by default maps to this provider's
// defaults; what it was told maps to its counterpart. The status is left
// empty: the refresh that follows adopts the release's latest revision, as
// an import does, so nothing is reinstalled.
func moveHelmRelease(ctx context.Context, req resource.MoveStateRequest, resp *resource.MoveStateResponse) {
	if req.SourceTypeName != "helm_release" || !strings.HasSuffix(req.SourceProviderAddress, helmProvider) {
		return // another mover's, or none: the framework says so
	}
	if req.SourceRawState == nil {
		resp.Diagnostics.AddError("Unable to move helm_release", "The source state is empty.")
		return
	}
	if req.SourceSchemaVersion != 1 && req.SourceSchemaVersion != 2 {
		resp.Diagnostics.AddError("Unable to move helm_release",
			fmt.Sprintf("The state of helm_release has schema version %d; this provider moves those of versions 1 (helm provider 2.x) and 2 (helm provider 3.x).\n\nRefresh the state with helm provider 3.x first (terraform apply -refresh-only), which upgrades it to version 2, then move it; or remove it from the state (terraform state rm) and import the release.", req.SourceSchemaVersion))
		return
	}
	var src helmstate.State
	if err := json.Unmarshal(req.SourceRawState.JSON, &src); err != nil {
		resp.Diagnostics.AddError("Unable to move helm_release",
			fmt.Sprintf("The state of helm_release (schema version %d) is not readable: %s.", req.SourceSchemaVersion, err))
		return
	}
	m, diags := movedRelease(&src)
	resp.Diagnostics.Append(diags...)
	if diags.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.TargetState.Set(ctx, m)...)
	resp.Diagnostics.Append(setIdentity(ctx, resp.TargetIdentity, m)...)
}

// movedRelease is the helmrelease_release of a helm_release.
func movedRelease(src *helmstate.State) (*releaseModel, diag.Diagnostics) {
	var diags diag.Diagnostics
	if src.Name == "" {
		diags.AddError("Unable to move helm_release", "The helm_release state has no release name.")
		return nil, diags
	}
	namespace := src.Namespace
	if namespace == "" {
		namespace = "default"
	}
	values, sensitive, err := src.Composed()
	if err != nil {
		diags.AddError("Unable to move helm_release",
			fmt.Sprintf("The values of helm_release %s/%s cannot be composed: %s.\n\nFix them with the helm provider first, or remove the helm_release from the state (terraform state rm) and import the release (terraform import helmrelease_release.<name> %s/%s).", namespace, src.Name, err, namespace, src.Name))
		return nil, diags
	}

	schemaAttrs := releaseSchema().Attributes
	m := nullReleaseModel()
	m.ID = types.StringValue(namespace + "/" + src.Name)
	m.Name, m.Namespace, m.ReleaseName = types.StringValue(src.Name), types.StringValue(namespace), types.StringValue(src.Name)
	m.TargetNamespace, m.StorageNamespace = types.StringValue(namespace), types.StringValue(namespace)
	m.Chart = movedChart(src, schemaAttrs["chart"].GetType(), &diags)
	if pr := movedPostrender(src.Postrender, schemaAttrs["post_renderers"].GetType().(types.ListType), &diags); !pr.IsNull() {
		m.PostRenderers = pr
	}
	if len(values) > 0 {
		m.Values = types.DynamicValue(tfvalue.FromGo(values))
	}
	if len(sensitive) > 0 {
		b, err := json.Marshal(sensitive)
		if err != nil {
			diags.AddError("Unable to move helm_release", "Its set_sensitive values cannot be encoded: "+err.Error())
			return nil, diags
		}
		// As jsonencode writes it, so that `sensitive_values =
		// jsonencode({ … })` plans no change.
		m.SensitiveValues = types.StringValue(string(b))
	}
	if src.Timeout != 0 && src.Timeout != helmstate.DefaultTimeout {
		m.Timeout = types.StringValue((time.Duration(src.Timeout) * time.Second).String())
	}
	if src.MaxHistory > 0 {
		m.MaxHistory = types.Int64Value(src.MaxHistory)
	}

	noWait := src.Wait != nil && !*src.Wait
	install := map[string]attr.Value{}
	upgrade := map[string]attr.Value{}
	rollback := map[string]attr.Value{}
	setTrue := func(m map[string]attr.Value, cond bool, names ...string) {
		if cond {
			for _, n := range names {
				m[n] = types.BoolValue(true)
			}
		}
	}
	setTrue(install, src.CreateNamespace, "create_namespace")
	setTrue(install, src.Replace, "replace")
	setTrue(install, noWait, "disable_wait")
	setTrue(upgrade, noWait, "disable_wait")
	setTrue(rollback, noWait, "disable_wait")
	setTrue(install, src.DisableWebhooks, "disable_hooks")
	setTrue(upgrade, src.DisableWebhooks, "disable_hooks")
	setTrue(rollback, src.DisableWebhooks, "disable_hooks")
	setTrue(install, src.DisableOpenAPIValidation, "disable_open_api_validation")
	setTrue(upgrade, src.DisableOpenAPIValidation, "disable_open_api_validation")
	setTrue(upgrade, src.ForceUpdate, "force")
	setTrue(rollback, src.ForceUpdate, "force")
	setTrue(upgrade, src.CleanupOnFail, "cleanup_on_fail")
	setTrue(rollback, src.CleanupOnFail, "cleanup_on_fail")
	setTrue(upgrade, src.ReuseValues, "preserve_values")
	setTrue(rollback, src.RecreatePods, "recreate")
	if src.SkipCRDs {
		install["crds"] = types.StringValue("Skip")
	}
	installType := schemaAttrs["install"].GetType().(types.ObjectType)
	upgradeType := schemaAttrs["upgrade"].GetType().(types.ObjectType)
	if src.Atomic {
		// atomic: a failed install is uninstalled, a failed upgrade rolled
		// back, with no retry.
		remediation := map[string]attr.Value{"remediate_last_failure": types.BoolValue(true)}
		install["remediation"] = objectOf(installType.AttrTypes["remediation"].(types.ObjectType), remediation, &diags)
		upgrade["remediation"] = objectOf(upgradeType.AttrTypes["remediation"].(types.ObjectType), remediation, &diags)
	}
	m.Install = objectOrNull(installType, install, &diags)
	m.Upgrade = objectOrNull(upgradeType, upgrade, &diags)
	m.Rollback = objectOrNull(schemaAttrs["rollback"].GetType().(types.ObjectType), rollback, &diags)
	return m, diags
}

// nullReleaseModel is a helmrelease_release with every attribute null.
func nullReleaseModel() *releaseModel {
	attrs := releaseSchema().Attributes
	object := func(name string) types.Object { return tfvalue.Null(attrs[name].GetType()).(types.Object) }
	list := func(name string) types.List { return tfvalue.Null(attrs[name].GetType()).(types.List) }
	return &releaseModel{
		ID: types.StringNull(), Name: types.StringNull(), Namespace: types.StringNull(), ReleaseName: types.StringNull(),
		TargetNamespace: types.StringNull(), StorageNamespace: types.StringNull(), Chart: object("chart"), ChartRef: object("chart_ref"),
		Values: types.DynamicNull(), SensitiveValues: types.StringNull(), SensitiveValuesWO: types.StringNull(), SensitiveWOVersion: types.Int64Null(),
		ValuesFrom: list("values_from"), PostRenderers: list("post_renderers"), CommonMetadata: object("common_metadata"),
		Suspend: types.BoolNull(), Timeout: types.StringNull(), MaxHistory: types.Int64Null(), PersistentClient: types.BoolNull(),
		ServiceAccountName: types.StringNull(), KubeConfig: object("kube_config"), Install: object("install"), Upgrade: object("upgrade"),
		Test: object("test"), Rollback: object("rollback"), Uninstall: object("uninstall"), DriftDetection: object("drift_detection"),
		WaitStrategy: object("wait_strategy"), HealthCheckExprs: list("health_check_exprs"),
		ForceAt: types.StringNull(), ResetAt: types.StringNull(), Engine: types.StringNull(), Flux: object("flux"),
		ChartVersion: types.StringNull(), AppVersion: types.StringNull(), ChartDigest: types.StringNull(), ChartSourceRevision: types.StringNull(),
		Notes: types.StringNull(), Description: types.StringNull(), PlannedAction: types.StringNull(),
		PlannedHooks: types.MapNull(types.StringType), PlannedCRDs: types.MapNull(types.StringType), PlannedChanges: types.MapNull(types.StringType),
		PlannedDependencies: types.MapNull(types.StringType),
		Resources:           types.MapNull(types.StringType), Status: types.ObjectNull(statusAttrTypes()),
	}
}

// movedChart is the chart attribute of a helm_release: a chart name in a
// repository, a full oci:// reference, or a local path.
func movedChart(src *helmstate.State, t attr.Type, diags *diag.Diagnostics) types.Object {
	ot := t.(types.ObjectType)
	attrs := map[string]attr.Value{"name": types.StringValue(src.Chart)}
	repository := helmstate.Deref(src.Repository)
	if repository == "" && strings.HasPrefix(src.Chart, "oci://") {
		// chart = "oci://host/path/name": the registry path and the name.
		repository, attrs["name"] = path.Dir(strings.TrimPrefix(src.Chart, "oci://")), types.StringValue(path.Base(src.Chart))
		repository = "oci://" + repository
	}
	if repository == "" {
		// The helm provider upgrades a local chart on a new version only.
		attrs["reconcile_strategy"] = types.StringValue(string(chartsource.StrategyChartVersion))
		if src.DependencyUpdate && !strings.HasSuffix(src.Chart, ".tgz") {
			// It ran helm dependency update on the chart's directory.
			attrs["dependency_update"] = types.BoolValue(true)
		}
	} else {
		attrs["repository"] = types.StringValue(repository)
		// A repository chart floats without a version: the one the state
		// pins is the one the configuration names (a local chart's is its
		// Chart.yaml's).
		if v := helmstate.Deref(src.Version); v != "" {
			attrs["version"] = types.StringValue(v)
		}
	}
	if src.Devel != nil && *src.Devel && helmstate.Deref(src.Version) == "" {
		attrs["version"] = types.StringValue(">=0.0.0-0")
	}
	for name, v := range map[string]*string{
		"username": src.RepositoryUsername, "password": src.RepositoryPassword,
		"ca_file": src.RepositoryCAFile, "cert_file": src.RepositoryCertFile, "key_file": src.RepositoryKeyFile,
	} {
		if helmstate.Deref(v) != "" {
			attrs[name] = types.StringValue(*v)
		}
	}
	if src.PassCredentials {
		attrs["pass_credentials"] = types.BoolValue(true)
	}
	if src.Verify {
		attrs["verify"] = objectOf(ot.AttrTypes["verify"].(types.ObjectType), map[string]attr.Value{"keyring": types.StringValue(helmstate.Deref(src.Keyring))}, diags)
	}
	return objectOf(ot, attrs, diags)
}

func objectOf(t types.ObjectType, set map[string]attr.Value, diags *diag.Diagnostics) types.Object {
	attrs := make(map[string]attr.Value, len(t.AttrTypes))
	for k, at := range t.AttrTypes {
		if v, ok := set[k]; ok {
			attrs[k] = v
		} else {
			attrs[k] = tfvalue.Null(at)
		}
	}
	o, d := types.ObjectValue(t.AttrTypes, attrs)
	diags.Append(d...)
	return o
}

func objectOrNull(t types.ObjectType, set map[string]attr.Value, diags *diag.Diagnostics) types.Object {
	if len(set) == 0 {
		return types.ObjectNull(t.AttrTypes)
	}
	return objectOf(t, set, diags)
}

// movedPostrender is the post_renderers of a helm_release's postrender
// (an object in the helm provider's state v2+, a list of one before): its
// binary as the command of an exec post-renderer, which runs it as Helm
// did. Null without one.
func movedPostrender(v any, t types.ListType, diags *diag.Diagnostics) types.List {
	if l, ok := v.([]any); ok && len(l) > 0 {
		v = l[0]
	}
	pr, _ := v.(map[string]any)
	binary, _ := pr["binary_path"].(string)
	if binary == "" {
		return types.ListNull(t.ElemType)
	}
	var args []attr.Value
	if raw, ok := pr["args"].([]any); ok {
		for _, a := range raw {
			if s, ok := a.(string); ok {
				args = append(args, types.StringValue(s))
			}
		}
	}
	elem := t.ElemType.(types.ObjectType)
	execType := elem.AttrTypes["exec"].(types.ObjectType)
	exec := map[string]attr.Value{"command": types.StringValue(binary)}
	if len(args) > 0 {
		exec["args"] = types.ListValueMust(types.StringType, args)
	}
	renderer := objectOf(elem, map[string]attr.Value{"exec": objectOf(execType, exec, diags)}, diags)
	l, d := types.ListValue(elem, []attr.Value{renderer})
	diags.Append(d...)
	return l
}
