package provider

import (
	"context"
	"fmt"
	"iter"
	"strings"

	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// validateStrategies refuses a retry_interval without RetryOnFailure, as
// the HelmRelease CRD does.
func validateStrategies(ctx context.Context, m *releaseModel, diags *diag.Diagnostics) {
	for action, st := range strategiesOf(ctx, m, diags) {
		if name := st.Name.ValueString(); name != string(reconcile.StrategyRetryOnFailure) {
			attrError(diags, path.Root(action).AtName("strategy").AtName("retry_interval"), "Retry interval without RetryOnFailure",
				fmt.Sprintf("retry_interval is the wait between the retries of the strategy RetryOnFailure, and %s.strategy.name is %q.", action, name),
				"Remove retry_interval, or set name = \"RetryOnFailure\".")
		}
	}
}

// strategiesOf yields, by action (install, then upgrade), the strategies
// of m that set a retry_interval and whose name is known.
func strategiesOf(ctx context.Context, m *releaseModel, diags *diag.Diagnostics) iter.Seq2[string, *strategyModel] {
	var strategies [2]*strategyModel
	if in := objectAs[installModel](ctx, m.Install, path.Root("install"), diags); in != nil {
		strategies[0] = in.Strategy
	}
	if up := objectAs[upgradeModel](ctx, m.Upgrade, path.Root("upgrade"), diags); up != nil {
		strategies[1] = up.Strategy
	}
	return func(yield func(string, *strategyModel) bool) {
		for i, action := range []string{"install", "upgrade"} {
			st := strategies[i]
			if st == nil || st.RetryInterval.IsNull() || st.Name.IsUnknown() {
				continue
			}
			if !yield(action, st) {
				return
			}
		}
	}
}

// retryNextRunRemedy follows a failure under the strategy RetryOnFailure.
const retryNextRunRemedy = "The failed release is left as it is (strategy RetryOnFailure: no remediation); the next apply upgrades it again, and so does every apply after it until one succeeds."

// stallLifted says, for a release that st records as stalled, why spec lets
// the engine act again without a reset (the strategy or the remediation
// settings changed since it stalled), or "" when it stays stalled.
func stallLifted(spec *reconcile.Spec, st *reconcile.Status) string {
	if spec.Stalls(st) != nil {
		return ""
	}
	action := spec.ActiveRemediation(st).Action
	if spec.RetriesOnFailure(st) {
		return fmt.Sprintf("%s.strategy RetryOnFailure retries the failed release", action)
	}
	return fmt.Sprintf("%s.remediation allows another attempt", action)
}

// stallRemedies says exactly what gets a release that st records as
// stalled moving again under spec, each checked with the engine's own
// retry decision: the requests that always do, then each setting that
// would (a strategy, a retry budget) with the value it needs.
func stallRemedies(spec *reconcile.Spec, st *reconcile.Status) string {
	remediation := spec.ActiveRemediation(st)
	action := remediation.Action
	failures := remediation.Failures(st)
	lines := []string{
		fmt.Sprintf("set reset_at to a new value (or invoke the helmrelease_reset action, Terraform ≥ 1.14): the failure counters restart and the %s is tried again with the remediation settings;", action),
		"set force_at to a new value (or invoke the helmrelease_force action): one install or upgrade at the next apply, whatever the counters;",
	}
	try := func(change func(*reconcile.Spec)) bool {
		s := *spec
		change(&s)
		return s.Stalls(st) == nil
	}
	if try(func(s *reconcile.Spec) {
		s.Install.Strategy.Name, s.Upgrade.Strategy.Name = reconcile.StrategyRetryOnFailure, reconcile.StrategyRetryOnFailure
	}) {
		lines = append(lines, fmt.Sprintf(`set %s.strategy = { name = "RetryOnFailure" }: every apply upgrades the failed release again, without remediation, until one succeeds;`, action))
	}
	if r := remediation.Retries(); r >= 0 && try(func(s *reconcile.Spec) { setRetries(s, action, int(failures)) }) {
		lines = append(lines, fmt.Sprintf("raise %s.remediation.retries to %d or more (now %d): the next apply tries again, after remediating a failed release still there;", action, failures, r))
	}
	yes := true
	if !remediation.MustRemediateLastFailure() && try(func(s *reconcile.Spec) { setRemediateLast(s, action, &yes) }) {
		lines = append(lines, fmt.Sprintf("set %s.remediation.remediate_last_failure = true: the next apply remediates the last failure;", action))
	}
	lines = append(lines, "or change the chart version or the values: a new attempt with fresh counters.")
	return "To get it moving again, fix the cause, then:\n- " + strings.Join(lines, "\n- ")
}

func setRetries(s *reconcile.Spec, action reconcile.ReleaseAction, n int) {
	if action == reconcile.ActionUpgrade {
		s.Upgrade.Remediation.Retries = n
	} else {
		s.Install.Remediation.Retries = n
	}
}

func setRemediateLast(s *reconcile.Spec, action reconcile.ReleaseAction, v *bool) {
	if action == reconcile.ActionUpgrade {
		s.Upgrade.Remediation.RemediateLastFailure = v
	} else {
		s.Install.Remediation.RemediateLastFailure = v
	}
}

// validateHealthChecks refuses at plan health check expressions that do
// not parse, two checks of one kind, and health checks with the legacy
// wait strategy, which would never evaluate them.
func validateHealthChecks(ctx context.Context, m *releaseModel, diags *diag.Diagnostics) {
	if m.HealthCheckExprs.IsNull() || m.HealthCheckExprs.IsUnknown() {
		return
	}
	var checks []healthCheckModel
	if d := m.HealthCheckExprs.ElementsAs(ctx, &checks, false); d.HasError() {
		return // not known yet
	}
	list := path.Root("health_check_exprs")
	seen := map[string]int{}
	for i, c := range checks {
		if !c.APIVersion.IsUnknown() && !c.Kind.IsUnknown() {
			kind := schema.FromAPIVersionAndKind(c.APIVersion.ValueString(), c.Kind.ValueString()).GroupKind().String()
			if j, ok := seen[kind]; ok {
				attrError(diags, list.AtListIndex(i), "Two health checks of one kind",
					fmt.Sprintf("health_check_exprs[%d] and [%d] are both for %s.", j, i, kind), "Merge them into one, with the expressions joined by && or ||.")
			}
			seen[kind] = i
		}
		if c.Current.IsUnknown() || c.InProgress.IsUnknown() || c.Failed.IsUnknown() {
			continue
		}
		hc := kustomize.CustomHealthCheck{HealthCheckExpressions: kustomize.HealthCheckExpressions{Current: c.Current.ValueString(), InProgress: c.InProgress.ValueString(), Failed: c.Failed.ValueString()}}
		if field, err := helm.ParseHealthCheck(hc); err != nil {
			p := list.AtListIndex(i).AtName(map[string]string{"current": "current", "inProgress": "in_progress", "failed": "failed"}[field])
			attrError(diags, p, "Invalid health check expression",
				fmt.Sprintf("The CEL expression at %s does not parse: %s.", p, err), "Write a CEL expression over the object's fields, e.g. status.conditions.filter(e, e.type == 'Ready').all(e, e.status == 'True').")
		}
	}
	if w := objectAs[waitStrategyModel](ctx, m.WaitStrategy, path.Root("wait_strategy"), diags); w != nil && w.Name.ValueString() == string(helm.WaitLegacy) && len(checks) > 0 {
		attrError(diags, path.Root("wait_strategy").AtName("name"), "Health checks with the legacy wait",
			"health_check_exprs are evaluated by the poller wait strategy only, and wait_strategy.name is \"legacy\": they would never be checked.",
			"Remove wait_strategy (poller is then the default) or set its name to \"poller\", or remove health_check_exprs.")
	}
}
