package provider

import (
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// loginURLPattern is the url of a provider registries login: an OCI
// registry host or a Helm repository URL (no userinfo, query or fragment).
var loginURLPattern = regexp.MustCompile(`^(oci://[A-Za-z0-9.-]+(:[0-9]+)?/?|https?://[A-Za-z0-9.-]+(:[0-9]+)?(/[^?#@]*)?)$`)

// enum is a closed set of string values; it feeds both the validator and the
// description, so they cannot disagree.
type enum []string

func (e enum) validator() validator.String { return stringvalidator.OneOf(e...) }

func (e enum) markdown() string {
	q := make([]string, len(e))
	for i, v := range e {
		q[i] = "`" + v + "`"
	}
	return strings.Join(q, ", ")
}

var valuesFromKinds = enum{"ConfigMap", "Secret"}

// Engines of a release (engine).
const (
	engineHelm = "helm"
	engineFlux = "flux"
)

var engines = enum{engineHelm, engineFlux}

// What the plan shows of each object (plan_detail).
const (
	planDetailFull    = "full"
	planDetailChanges = "changes"
	planDetailNames   = "names"
)

var planDetails = enum{planDetailFull, planDetailChanges, planDetailNames}

// HelmRelease spec.postRenderStrategy values: whether hooks go through the
// post-renderers (helm-controller v1.6, Helm 4.2).
const (
	postRenderNoHooks  = "nohooks"
	postRenderCombined = "combined"
	postRenderSeparate = "separate"
)

// HelmRelease spec.upgrade.chartNameChangeStrategy values.
const (
	chartNameReinstall     = "Reinstall"
	chartNameInPlaceUpdate = "InPlaceUpdate"
)

// HelmRelease spec.upgrade.serverSideApply and spec.rollback.serverSideApply
// values (Helm 4 controllers).
const (
	ssaEnabled  = "enabled"
	ssaDisabled = "disabled"
	ssaAuto     = "auto"
)

var (
	postRenderStrategies      = enum{postRenderNoHooks, postRenderCombined, postRenderSeparate}
	chartNameChangeStrategies = enum{chartNameReinstall, chartNameInPlaceUpdate}
	serverSideApplyModes      = enum{ssaEnabled, ssaDisabled, ssaAuto}
	crdPolicies               = enum{"Skip", "Create", "CreateReplace"}
	remediationStrategies     = enum{"rollback", "uninstall"}
	actionStrategies          = enumOf([]reconcile.ActionStrategyName{reconcile.StrategyRemediateOnFailure, reconcile.StrategyRetryOnFailure})
	waitStrategies            = enumOf([]helm.WaitStrategy{helm.WaitPoller, helm.WaitLegacy})
	deletionPropagations      = enum{"background", "foreground", "orphan"}
	driftModes                = enum{"enabled", "warn", "disabled"}
	reconcileStrategies       = enumOf(chartsource.ReconcileStrategies)
)

// enumOf is the enum of a typed string set of the reconciler.
func enumOf[T ~string](values []T) enum {
	e := make(enum, len(values))
	for i, v := range values {
		e[i] = string(v)
	}
	return e
}
