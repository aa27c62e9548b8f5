package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"sigs.k8s.io/yaml"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
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

// helmReleaseState is what helmrelease_release takes of a helm_release
// state (schema versions 1, helm provider v2.x, and 2, v3.x: they differ in
// blocks against attributes, which JSON does not show, and in metadata,
// unused here).
type helmReleaseState struct {
	Name                     string         `json:"name"`
	Namespace                string         `json:"namespace"`
	Chart                    string         `json:"chart"`
	Repository               *string        `json:"repository"`
	Version                  *string        `json:"version"`
	Devel                    *bool          `json:"devel"`
	RepositoryUsername       *string        `json:"repository_username"`
	RepositoryPassword       *string        `json:"repository_password"`
	RepositoryCAFile         *string        `json:"repository_ca_file"`
	RepositoryCertFile       *string        `json:"repository_cert_file"`
	RepositoryKeyFile        *string        `json:"repository_key_file"`
	PassCredentials          bool           `json:"pass_credentials"`
	Verify                   bool           `json:"verify"`
	Keyring                  *string        `json:"keyring"`
	Values                   []string       `json:"values"`
	Set                      []helmSetValue `json:"set"`
	SetList                  []helmSetList  `json:"set_list"`
	SetSensitive             []helmSetValue `json:"set_sensitive"`
	CreateNamespace          bool           `json:"create_namespace"`
	Atomic                   bool           `json:"atomic"`
	Wait                     *bool          `json:"wait"`
	Timeout                  int64          `json:"timeout"`
	MaxHistory               int64          `json:"max_history"`
	DisableWebhooks          bool           `json:"disable_webhooks"`
	DisableOpenAPIValidation bool           `json:"disable_openapi_validation"`
	SkipCRDs                 bool           `json:"skip_crds"`
	ForceUpdate              bool           `json:"force_update"`
	CleanupOnFail            bool           `json:"cleanup_on_fail"`
	ReuseValues              bool           `json:"reuse_values"`
	Replace                  bool           `json:"replace"`
	RecreatePods             bool           `json:"recreate_pods"`
	DependencyUpdate         bool           `json:"dependency_update"`
	Postrender               any            `json:"postrender"`
}

type helmSetValue struct {
	Name  string  `json:"name"`
	Value *string `json:"value"`
	Type  *string `json:"type"`
}

type helmSetList struct {
	Name  string   `json:"name"`
	Value []string `json:"value"`
}

// helmDefaultTimeout is the helm provider's timeout, in seconds.
const helmDefaultTimeout = 300

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
	var src helmReleaseState
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
func movedRelease(src *helmReleaseState) (*releaseModel, diag.Diagnostics) {
	var diags diag.Diagnostics
	if src.Name == "" {
		diags.AddError("Unable to move helm_release", "The helm_release state has no release name.")
		return nil, diags
	}
	namespace := src.Namespace
	if namespace == "" {
		namespace = "default"
	}
	values, sensitive, err := helmReleaseValues(src)
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
	if src.Timeout != 0 && src.Timeout != helmDefaultTimeout {
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
func movedChart(src *helmReleaseState, t attr.Type, diags *diag.Diagnostics) types.Object {
	ot := t.(types.ObjectType)
	attrs := map[string]attr.Value{"name": types.StringValue(src.Chart)}
	repository := deref(src.Repository)
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
		if v := deref(src.Version); v != "" {
			attrs["version"] = types.StringValue(v)
		}
	}
	if src.Devel != nil && *src.Devel && deref(src.Version) == "" {
		attrs["version"] = types.StringValue(">=0.0.0-0")
	}
	for name, v := range map[string]*string{
		"username": src.RepositoryUsername, "password": src.RepositoryPassword,
		"ca_file": src.RepositoryCAFile, "cert_file": src.RepositoryCertFile, "key_file": src.RepositoryKeyFile,
	} {
		if deref(v) != "" {
			attrs[name] = types.StringValue(*v)
		}
	}
	if src.PassCredentials {
		attrs["pass_credentials"] = types.BoolValue(true)
	}
	if src.Verify {
		attrs["verify"] = objectOf(ot.AttrTypes["verify"].(types.ObjectType), map[string]attr.Value{"keyring": types.StringValue(deref(src.Keyring))}, diags)
	}
	return objectOf(ot, attrs, diags)
}

// helmReleaseValues composes the values of a helm_release as the helm
// provider does: the values documents merged in order, then set, set_list
// and set_sensitive with Helm's --set syntax. The set_sensitive entries
// come back apart (sensitive), as they were applied over the rest.
func helmReleaseValues(src *helmReleaseState) (values, sensitive map[string]any, err error) {
	values = map[string]any{}
	for i, doc := range src.Values {
		current, err := helm.ReadValues([]byte(doc))
		if err != nil {
			return nil, nil, fmt.Errorf("values[%d] is not a YAML mapping: %w", i, err)
		}
		values = helm.MergeTables(current, values)
	}
	// As the helm provider composes them: auto and string in --set
	// syntax; a literal as the YAML value of a top-level key named by the
	// whole name, dots included ("a.b" stays one key, "1,2" a string).
	set := func(into map[string]any, s helmSetValue) error {
		value := deref(s.Value)
		switch deref(s.Type) {
		case "auto", "":
			return helm.ParseSet(s.Name+"="+value, into)
		case "string":
			return helm.ParseSetString(s.Name+"="+value, into)
		case "literal":
			var literal any
			if err := yaml.Unmarshal([]byte(s.Name+": "+value), &literal); err != nil {
				return errors.New("not a YAML value")
			}
			if m, ok := literal.(map[string]any); ok {
				into[s.Name] = m[s.Name]
			} else {
				into[s.Name] = literal
			}
			return nil
		default:
			return fmt.Errorf("type %q is none of auto, string and literal", deref(s.Type))
		}
	}
	for _, s := range src.Set {
		if err := set(values, s); err != nil {
			return nil, nil, fmt.Errorf("set %q: %w", s.Name, err)
		}
	}
	for _, s := range src.SetList {
		if err := helm.ParseSet(s.Name+"={"+strings.Join(s.Value, ",")+"}", values); err != nil {
			return nil, nil, fmt.Errorf("set_list %q: %w", s.Name, err)
		}
	}
	sensitive = map[string]any{}
	for _, s := range src.SetSensitive {
		if err := set(sensitive, s); err != nil {
			// The value is sensitive: the name and type alone.
			return nil, nil, fmt.Errorf("set_sensitive %q of type %q cannot be composed", s.Name, deref(s.Type))
		}
	}
	return values, sensitive, nil
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

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
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
