package provider

import (
	"context"
	"time"

	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/tfvalue"
)

// releaseModel is helmrelease_release. Nested attributes are objects and
// lists, which may be unknown at plan; they are read into the structs below
// once known.
type releaseModel struct {
	ID                 types.String  `tfsdk:"id"`
	Cluster            types.String  `tfsdk:"cluster"`
	Name               types.String  `tfsdk:"name"`
	Namespace          types.String  `tfsdk:"namespace"`
	ReleaseName        types.String  `tfsdk:"release_name"`
	TargetNamespace    types.String  `tfsdk:"target_namespace"`
	StorageNamespace   types.String  `tfsdk:"storage_namespace"`
	Chart              types.Object  `tfsdk:"chart"`
	ChartRef           types.Object  `tfsdk:"chart_ref"`
	Values             types.Dynamic `tfsdk:"values"`
	SensitiveValues    types.String  `tfsdk:"sensitive_values"`
	SensitiveValuesWO  types.String  `tfsdk:"sensitive_values_wo"`
	SensitiveWOVersion types.Int64   `tfsdk:"sensitive_values_wo_version"`
	ValuesFrom         types.List    `tfsdk:"values_from"`
	PostRenderers      types.List    `tfsdk:"post_renderers"`
	CommonMetadata     types.Object  `tfsdk:"common_metadata"`
	Suspend            types.Bool    `tfsdk:"suspend"`
	Timeout            types.String  `tfsdk:"timeout"`
	MaxHistory         types.Int64   `tfsdk:"max_history"`
	PersistentClient   types.Bool    `tfsdk:"persistent_client"`
	ServiceAccountName types.String  `tfsdk:"service_account_name"`
	KubeConfig         types.Object  `tfsdk:"kube_config"`
	Install            types.Object  `tfsdk:"install"`
	Upgrade            types.Object  `tfsdk:"upgrade"`
	Test               types.Object  `tfsdk:"test"`
	Rollback           types.Object  `tfsdk:"rollback"`
	Uninstall          types.Object  `tfsdk:"uninstall"`
	DriftDetection     types.Object  `tfsdk:"drift_detection"`
	WaitStrategy       types.Object  `tfsdk:"wait_strategy"`
	HealthCheckExprs   types.List    `tfsdk:"health_check_exprs"`
	PostRenderStrategy types.String  `tfsdk:"post_render_strategy"`
	ForceAt            types.String  `tfsdk:"force_at"`
	ResetAt            types.String  `tfsdk:"reset_at"`
	Engine             types.String  `tfsdk:"engine"`
	Flux               types.Object  `tfsdk:"flux"`
	PlanDetail         types.String  `tfsdk:"plan_detail"`

	ChartVersion types.String `tfsdk:"chart_version"`
	AppVersion   types.String `tfsdk:"app_version"`
	ChartDigest  types.String `tfsdk:"chart_digest"`
	// ChartSourceRevision is the source revision of the chart deployed
	// (Git: its commit); an apply deploys the planned one.
	ChartSourceRevision types.String `tfsdk:"chart_source_revision"`
	Notes               types.String `tfsdk:"notes"`
	Description         types.String `tfsdk:"description"`
	// PlannedAction is set by a plan that runs a Helm action, and null
	// once refreshed (plannedActionDescription).
	PlannedAction types.String `tfsdk:"planned_action"`
	// PlannedHooks and PlannedCRDs are set with PlannedAction: what its
	// action runs and writes besides resources.
	PlannedHooks types.Map `tfsdk:"planned_hooks"`
	PlannedCRDs  types.Map `tfsdk:"planned_crds"`
	// PlannedDependencies is set with PlannedAction: the chart's
	// subcharts, name → version, as its action deploys them.
	PlannedDependencies types.Map `tfsdk:"planned_dependencies"`
	// PlannedChanges lists what PlannedAction changes, field by field,
	// with plan_detail = "changes" (plannedChanges).
	PlannedChanges types.Map    `tfsdk:"planned_changes"`
	Resources      types.Map    `tfsdk:"resources"`
	Status         types.Object `tfsdk:"status"`
}

// releaseChartModel is the chart of helmrelease_release: the shared chart
// with its write-only password.
type releaseChartModel struct {
	chartModel
	PasswordWO        types.String `tfsdk:"password_wo"`
	PasswordWOVersion types.Int64  `tfsdk:"password_wo_version"`
}

// writeOnly are the write-only values of a configuration: never in the
// plan or the state, read from the configuration where they are used.
type writeOnly struct {
	SensitiveValues types.String
	ChartPassword   types.String
	// GitPrivateKey is chart.git.private_key_wo.
	GitPrivateKey types.String
}

// writeOnlyOf reads the write-only values of config (nil: none).
func writeOnlyOf(ctx context.Context, config *releaseModel, diags *diag.Diagnostics) writeOnly {
	wo := writeOnly{SensitiveValues: types.StringNull(), ChartPassword: types.StringNull(), GitPrivateKey: types.StringNull()}
	if config == nil {
		return wo
	}
	wo.SensitiveValues = config.SensitiveValuesWO
	if c := objectAs[releaseChartModel](ctx, config.Chart, path.Root("chart"), diags); c != nil {
		wo.ChartPassword = c.PasswordWO
		if !c.Git.IsNull() && !c.Git.IsUnknown() {
			if key, ok := c.Git.Attributes()["private_key_wo"].(types.String); ok {
				wo.GitPrivateKey = key
			}
		}
	}
	return wo
}

// credentials puts the write-only credentials into src, in place of the
// plain attributes they stand for.
func (wo writeOnly) credentials(src *chartsource.Source) {
	if p := wo.ChartPassword.ValueString(); p != "" {
		src.Auth.Password = p
	}
	if k := wo.GitPrivateKey.ValueString(); k != "" && src.Git != nil {
		src.Git.Identity = k
	}
}

// fluxModel is flux: what only Flux's controller uses.
type fluxModel struct {
	Interval           types.String `tfsdk:"interval"`
	DependsOn          types.List   `tfsdk:"depends_on"`
	UninstallOnDestroy types.Bool   `tfsdk:"uninstall_on_destroy"`
	Wait               types.Bool   `tfsdk:"wait"`
}

// dependencyType is the type of an element of flux.depends_on.
var dependencyType = types.ObjectType{AttrTypes: map[string]attr.Type{"name": types.StringType, "namespace": types.StringType, "ready_expr": types.StringType}}

// dependencyModel is an element of flux.depends_on.
type dependencyModel struct {
	Name      types.String `tfsdk:"name"`
	Namespace types.String `tfsdk:"namespace"`
	ReadyExpr types.String `tfsdk:"ready_expr"`
}

type kubeConfigModel struct {
	SecretRef struct {
		Name types.String `tfsdk:"name"`
		Key  types.String `tfsdk:"key"`
	} `tfsdk:"secret_ref"`
}

type remediationModel struct {
	Retries              types.Int64  `tfsdk:"retries"`
	Strategy             types.String `tfsdk:"strategy"`
	IgnoreTestFailures   types.Bool   `tfsdk:"ignore_test_failures"`
	RemediateLastFailure types.Bool   `tfsdk:"remediate_last_failure"`
}

// actionModel is what install and upgrade share.
type actionModel struct {
	Timeout                  types.String `tfsdk:"timeout"`
	CRDs                     types.String `tfsdk:"crds"`
	DisableHooks             types.Bool   `tfsdk:"disable_hooks"`
	DisableOpenAPIValidation types.Bool   `tfsdk:"disable_open_api_validation"`
	DisableSchemaValidation  types.Bool   `tfsdk:"disable_schema_validation"`
	DisableTakeOwnership     types.Bool   `tfsdk:"disable_take_ownership"`
	DisableWait              types.Bool   `tfsdk:"disable_wait"`
	DisableWaitForJobs       types.Bool   `tfsdk:"disable_wait_for_jobs"`
}

type installModel struct {
	actionModel
	Replace         types.Bool     `tfsdk:"replace"`
	CreateNamespace types.Bool     `tfsdk:"create_namespace"`
	SkipCRDs        types.Bool     `tfsdk:"skip_crds"`
	Strategy        *strategyModel `tfsdk:"strategy"`
	ServerSideApply types.Bool     `tfsdk:"server_side_apply"`
	Remediation     *struct {
		Retries              types.Int64 `tfsdk:"retries"`
		IgnoreTestFailures   types.Bool  `tfsdk:"ignore_test_failures"`
		RemediateLastFailure types.Bool  `tfsdk:"remediate_last_failure"`
	} `tfsdk:"remediation"`
}

type upgradeModel struct {
	actionModel
	CleanupOnFail  types.Bool        `tfsdk:"cleanup_on_fail"`
	Force          types.Bool        `tfsdk:"force"`
	PreserveValues types.Bool        `tfsdk:"preserve_values"`
	Strategy       *strategyModel    `tfsdk:"strategy"`
	Remediation    *remediationModel `tfsdk:"remediation"`
	// ServerSideApply and ChartNameChangeStrategy are null for the
	// engine's default.
	ServerSideApply         types.String `tfsdk:"server_side_apply"`
	ChartNameChangeStrategy types.String `tfsdk:"chart_name_change_strategy"`
}

type waitStrategyModel struct {
	Name types.String `tfsdk:"name"`
}

type healthCheckModel struct {
	APIVersion types.String `tfsdk:"api_version"`
	Kind       types.String `tfsdk:"kind"`
	Current    types.String `tfsdk:"current"`
	InProgress types.String `tfsdk:"in_progress"`
	Failed     types.String `tfsdk:"failed"`
}

// healthChecksOf is health_check_exprs as Flux's type; nil when null or
// not known.
func healthChecksOf(ctx context.Context, l types.List, diags *diag.Diagnostics) []kustomize.CustomHealthCheck {
	if l.IsNull() || l.IsUnknown() {
		return nil
	}
	var checks []healthCheckModel
	diags.Append(l.ElementsAs(ctx, &checks, false)...)
	out := make([]kustomize.CustomHealthCheck, 0, len(checks))
	for _, c := range checks {
		out = append(out, kustomize.CustomHealthCheck{APIVersion: c.APIVersion.ValueString(), Kind: c.Kind.ValueString(),
			HealthCheckExpressions: kustomize.HealthCheckExpressions{Current: c.Current.ValueString(), InProgress: c.InProgress.ValueString(), Failed: c.Failed.ValueString()}})
	}
	return out
}

type strategyModel struct {
	Name          types.String `tfsdk:"name"`
	RetryInterval types.String `tfsdk:"retry_interval"`
}

func (m *strategyModel) spec() reconcile.ActionStrategy {
	if m == nil {
		return reconcile.ActionStrategy{}
	}
	return reconcile.ActionStrategy{Name: reconcile.ActionStrategyName(m.Name.ValueString()), RetryInterval: parseDuration(m.RetryInterval)}
}

type testModel struct {
	Enable         types.Bool   `tfsdk:"enable"`
	Timeout        types.String `tfsdk:"timeout"`
	IgnoreFailures types.Bool   `tfsdk:"ignore_failures"`
	Filters        []struct {
		Name    types.String `tfsdk:"name"`
		Exclude types.Bool   `tfsdk:"exclude"`
	} `tfsdk:"filters"`
}

type rollbackModel struct {
	Timeout            types.String `tfsdk:"timeout"`
	CleanupOnFail      types.Bool   `tfsdk:"cleanup_on_fail"`
	DisableHooks       types.Bool   `tfsdk:"disable_hooks"`
	DisableWait        types.Bool   `tfsdk:"disable_wait"`
	DisableWaitForJobs types.Bool   `tfsdk:"disable_wait_for_jobs"`
	Force              types.Bool   `tfsdk:"force"`
	Recreate           types.Bool   `tfsdk:"recreate"`
	ServerSideApply    types.String `tfsdk:"server_side_apply"`
}

type uninstallModel struct {
	Timeout             types.String `tfsdk:"timeout"`
	DeletionPropagation types.String `tfsdk:"deletion_propagation"`
	DisableHooks        types.Bool   `tfsdk:"disable_hooks"`
	DisableWait         types.Bool   `tfsdk:"disable_wait"`
	KeepHistory         types.Bool   `tfsdk:"keep_history"`
	DeleteNamespace     types.Bool   `tfsdk:"delete_namespace"`
}

type driftDetectionModel struct {
	Mode   types.String `tfsdk:"mode"`
	Ignore []struct {
		Paths  []types.String `tfsdk:"paths"`
		Target *selectorModel `tfsdk:"target"`
	} `tfsdk:"ignore"`
}

// objectAs reads a known object into target; a null object leaves it nil.
func objectAs[T any](ctx context.Context, o types.Object, p path.Path, diags *diag.Diagnostics) *T {
	if o.IsNull() || o.IsUnknown() {
		return nil
	}
	var out T
	d := tfvalue.ObjectInto(ctx, o, &out)
	for _, e := range d {
		if e.Severity() == diag.SeverityError {
			diags.AddAttributeError(p, e.Summary(), e.Detail())
		}
	}
	return &out
}

func parseDuration(s types.String) time.Duration {
	d, _ := time.ParseDuration(s.ValueString()) // validated at plan
	return d
}

func optionalBool(b types.Bool) *bool {
	if b.IsNull() || b.IsUnknown() {
		return nil
	}
	v := b.ValueBool()
	return &v
}

// spec is the reconciler's view of the model (without the engine's rendering: see engine.spec); every attribute must be known.
func (m *releaseModel) spec(ctx context.Context, diags *diag.Diagnostics) *reconcile.Spec {
	s := &reconcile.Spec{
		Name:               m.Name.ValueString(),
		Namespace:          m.Namespace.ValueString(),
		ReleaseName:        m.ReleaseName.ValueString(),
		TargetNamespace:    m.TargetNamespace.ValueString(),
		StorageNamespace:   m.StorageNamespace.ValueString(),
		Timeout:            parseDuration(m.Timeout),
		PersistentClient:   m.PersistentClient.IsNull() || m.PersistentClient.ValueBool(),
		ServiceAccountName: m.ServiceAccountName.ValueString(),
		ForceAt:            m.ForceAt.ValueString(),
		ResetAt:            m.ResetAt.ValueString(),
		PostRenderStrategy: reconcile.PostRenderStrategy(m.PostRenderStrategy.ValueString()),
	}
	if !m.MaxHistory.IsNull() {
		n := int(m.MaxHistory.ValueInt64())
		s.MaxHistory = &n
	}
	if in := objectAs[installModel](ctx, m.Install, path.Root("install"), diags); in != nil {
		s.Install = reconcile.InstallSpec{
			Timeout: parseDuration(in.Timeout), CRDs: reconcile.CRDPolicy(in.CRDs.ValueString()),
			Replace: in.Replace.ValueBool(), CreateNamespace: in.CreateNamespace.ValueBool(),
			DisableHooks: in.DisableHooks.ValueBool(), DisableOpenAPIValidation: in.DisableOpenAPIValidation.ValueBool(),
			DisableSchemaValidation: in.DisableSchemaValidation.ValueBool(), DisableTakeOwnership: in.DisableTakeOwnership.ValueBool(),
			DisableWait: in.DisableWait.ValueBool(), DisableWaitForJobs: in.DisableWaitForJobs.ValueBool(),
			Strategy: in.Strategy.spec(), ServerSideApply: optionalBool(in.ServerSideApply),
		}
		if in.SkipCRDs.ValueBool() && in.CRDs.IsNull() {
			s.Install.CRDs = reconcile.CRDSkip
		}
		if r := in.Remediation; r != nil {
			s.Install.Remediation = reconcile.Remediation{
				Retries:              int(r.Retries.ValueInt64()),
				IgnoreTestFailures:   optionalBool(r.IgnoreTestFailures),
				RemediateLastFailure: optionalBool(r.RemediateLastFailure),
			}
		}
	}
	if up := objectAs[upgradeModel](ctx, m.Upgrade, path.Root("upgrade"), diags); up != nil {
		s.Upgrade = reconcile.UpgradeSpec{
			Timeout: parseDuration(up.Timeout), CRDs: reconcile.CRDPolicy(up.CRDs.ValueString()),
			CleanupOnFail: up.CleanupOnFail.ValueBool(), DisableHooks: up.DisableHooks.ValueBool(),
			DisableOpenAPIValidation: up.DisableOpenAPIValidation.ValueBool(), DisableSchemaValidation: up.DisableSchemaValidation.ValueBool(),
			DisableTakeOwnership: up.DisableTakeOwnership.ValueBool(), DisableWait: up.DisableWait.ValueBool(),
			DisableWaitForJobs: up.DisableWaitForJobs.ValueBool(), Force: up.Force.ValueBool(), PreserveValues: up.PreserveValues.ValueBool(),
			Strategy: up.Strategy.spec(), ServerSideApply: up.ServerSideApply.ValueString(),
			ChartNameChangeStrategy: reconcile.ChartNameChangeStrategy(up.ChartNameChangeStrategy.ValueString()),
		}
		if r := up.Remediation; r != nil {
			s.Upgrade.Remediation = reconcile.Remediation{
				Retries:              int(r.Retries.ValueInt64()),
				Strategy:             reconcile.RemediationStrategy(r.Strategy.ValueString()),
				IgnoreTestFailures:   optionalBool(r.IgnoreTestFailures),
				RemediateLastFailure: optionalBool(r.RemediateLastFailure),
			}
		}
	}
	if t := objectAs[testModel](ctx, m.Test, path.Root("test"), diags); t != nil {
		s.Test = reconcile.TestSpec{Enable: t.Enable.ValueBool(), Timeout: parseDuration(t.Timeout), IgnoreFailures: t.IgnoreFailures.ValueBool()}
		for _, f := range t.Filters {
			s.Test.Filters = append(s.Test.Filters, reconcile.TestFilter{Name: f.Name.ValueString(), Exclude: f.Exclude.ValueBool()})
		}
	}
	if r := objectAs[rollbackModel](ctx, m.Rollback, path.Root("rollback"), diags); r != nil {
		s.Rollback = reconcile.RollbackSpec{
			Timeout: parseDuration(r.Timeout), CleanupOnFail: r.CleanupOnFail.ValueBool(), DisableHooks: r.DisableHooks.ValueBool(),
			DisableWait: r.DisableWait.ValueBool(), DisableWaitForJobs: r.DisableWaitForJobs.ValueBool(),
			Force: r.Force.ValueBool(), Recreate: r.Recreate.ValueBool(), ServerSideApply: r.ServerSideApply.ValueString(),
		}
	}
	if u := objectAs[uninstallModel](ctx, m.Uninstall, path.Root("uninstall"), diags); u != nil {
		s.Uninstall = reconcile.UninstallSpec{
			Timeout: parseDuration(u.Timeout), DeletionPropagation: u.DeletionPropagation.ValueString(),
			DisableHooks: u.DisableHooks.ValueBool(), DisableWait: u.DisableWait.ValueBool(), KeepHistory: u.KeepHistory.ValueBool(),
		}
	}
	if d := objectAs[driftDetectionModel](ctx, m.DriftDetection, path.Root("drift_detection"), diags); d != nil {
		s.Drift.Mode = reconcile.DriftMode(d.Mode.ValueString())
		for _, rule := range d.Ignore {
			r := reconcile.IgnoreRule{Target: rule.Target.selector()}
			for _, p := range rule.Paths {
				r.Paths = append(r.Paths, p.ValueString())
			}
			s.Drift.Ignore = append(s.Drift.Ignore, r)
		}
	}
	if w := objectAs[waitStrategyModel](ctx, m.WaitStrategy, path.Root("wait_strategy"), diags); w != nil {
		s.WaitStrategy = helm.WaitStrategy(w.Name.ValueString())
	}
	s.HealthChecks = healthChecksOf(ctx, m.HealthCheckExprs, diags)
	var configured []postRendererModel
	if !m.PostRenderers.IsNull() {
		diags.Append(m.PostRenderers.ElementsAs(ctx, &configured, false)...)
	}
	s.PostRenderers = renderers(configured)
	if md := objectAs[commonMetadataModel](ctx, m.CommonMetadata, path.Root("common_metadata"), diags); md != nil {
		meta, d := md.metadata(ctx)
		diags.Append(d...)
		s.CommonMetadata = meta
	}
	return s
}

// kubeConfigRef is kube_config, or nil.
func (m *releaseModel) kubeConfigRef(ctx context.Context, diags *diag.Diagnostics) *reconcile.KubeConfigRef {
	k := objectAs[kubeConfigModel](ctx, m.KubeConfig, path.Root("kube_config"), diags)
	if k == nil {
		return nil
	}
	return &reconcile.KubeConfigRef{Name: k.SecretRef.Name.ValueString(), Key: k.SecretRef.Key.ValueString()}
}

// postRenderersOf is the post-renderers of the model (validation).
func postRenderersOf(ctx context.Context, l types.List, diags *diag.Diagnostics) []postRendererModel {
	var out []postRendererModel
	if l.IsNull() || l.IsUnknown() {
		return nil
	}
	diags.Append(l.ElementsAs(ctx, &out, false)...)
	return out
}

// fillIdentity sets the computed identity attributes from the configured
// ones: target and storage namespaces default to namespace, the release
// name to [target_namespace-]name (shortened), the ID to both.
func fillIdentity(m, config *releaseModel) {
	if config.TargetNamespace.IsNull() {
		m.TargetNamespace = m.Namespace
	}
	if config.StorageNamespace.IsNull() {
		m.StorageNamespace = m.Namespace
	}
	if config.ReleaseName.IsNull() {
		if m.Name.IsUnknown() || config.TargetNamespace.IsUnknown() {
			m.ReleaseName = types.StringUnknown()
		} else {
			m.ReleaseName = types.StringValue(reconcile.ReleaseName("", config.TargetNamespace.ValueString(), m.Name.ValueString()))
		}
	}
	if m.Cluster.IsUnknown() || m.StorageNamespace.IsUnknown() || m.ReleaseName.IsUnknown() {
		m.ID = types.StringUnknown()
	} else {
		m.ID = types.StringValue(releaseID(m.Cluster.ValueString(), m.StorageNamespace.ValueString(), m.ReleaseName.ValueString()))
	}
}

// specKnown reports whether every attribute the reconciler's spec is made of
// is known.
func specKnown(m *releaseModel) bool {
	for _, v := range []attr.Value{
		m.Name, m.Namespace, m.ReleaseName, m.TargetNamespace, m.StorageNamespace, m.PostRenderers, m.CommonMetadata,
		m.Timeout, m.MaxHistory, m.PersistentClient, m.ServiceAccountName, m.KubeConfig,
		m.Install, m.Upgrade, m.Test, m.Rollback, m.Uninstall, m.DriftDetection, m.ForceAt, m.ResetAt,
		m.WaitStrategy, m.HealthCheckExprs, m.PostRenderStrategy,
	} {
		if !tfvalue.FullyKnown(v) {
			return false
		}
	}
	return true
}

func isEmpty(l types.List) bool { return l.IsNull() || (!l.IsUnknown() && len(l.Elements()) == 0) }

// stringOrNull is s, or null when it is empty (an attribute left unset).
func stringOrNull(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}
