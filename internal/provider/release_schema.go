package provider

import (
	"maps"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// releaseSchema is helmrelease_release: the HelmRelease v2 spec as nested
// attributes, its status as computed ones. Null means the v2 default, which
// each description names.
func releaseSchema() schema.Schema {
	return schema.Schema{
		MarkdownDescription: "A Helm release managed as Flux's helm-controller manages a `HelmRelease`: `terraform apply` installs, upgrades, tests and remediates it; `terraform plan` shows the Kubernetes objects that will change (`resources`); refresh detects drift and releases changed outside Terraform.",
		Attributes: releaseAttributes(map[string]schema.Attribute{
			"chart":              releaseChartAttribute(),
			"chart_ref":          chartRefAttribute(),
			"post_renderers":     resourceAttribute(postRenderersAttribute()),
			"common_metadata":    resourceAttribute(commonMetadataAttribute()),
			"wait_strategy":      waitStrategyAttribute(),
			"health_check_exprs": healthCheckExprsAttribute(),
			"post_render_strategy": schema.StringAttribute{
				MarkdownDescription: "Whether the chart's hooks go through the post-renderers (`post_renderers`, `common_metadata` and the origin labels) as the release's objects do (HelmRelease `spec.postRenderStrategy`), one of " + postRenderStrategies.markdown() + ": `" + postRenderNoHooks + "` post-renders the objects only, as Helm 3 does; `" + postRenderCombined + "` post-renders hooks with them, in one stream, as Helm 4 does by default; `" + postRenderSeparate + "` post-renders hooks apart from them. `planned_hooks` shows the hooks as the strategy renders them. " +
					"With `engine = \"flux\"`, `" + postRenderCombined + "` and `" + postRenderSeparate + "` need helm-controller v1.6 or later. Default: `" + postRenderNoHooks + "`, written explicitly with `engine = \"flux\"` where the CRD has the field (helm-controller v1.6's own default is `" + postRenderCombined + "`): hooks are what they were with Helm 3, before any post-renderer saw them, so a release's hooks change neither with this provider's move to Helm 4, nor with a hand-over, nor with a controller's version, behind the plan.",
				Optional:   true,
				Validators: []validator.String{postRenderStrategies.validator()},
			},
			"suspend": schema.BoolAttribute{
				MarkdownDescription: "Suspend the release (HelmRelease `spec.suspend`): no Helm action and no drift report while true; configuration changes are recorded in state with a warning and rolled out once it is false again. Default: `false`.",
				Optional:            true,
			},
			"timeout": schema.StringAttribute{
				MarkdownDescription: "Time each Helm action (install, upgrade, test, rollback, uninstall) may take, unless the action sets its own (HelmRelease `spec.timeout`). Default: `5m0s`.",
				Optional:            true,
				Validators:          []validator.String{duration()},
			},
			"max_history": schema.Int64Attribute{
				MarkdownDescription: "Number of release revisions Helm keeps; `0` keeps all (HelmRelease `spec.maxHistory`). Default: `5`.",
				Optional:            true,
				Validators:          []validator.Int64{int64validator.AtLeast(0)},
			},
			"persistent_client": schema.BoolAttribute{
				MarkdownDescription: "Keep one Kubernetes client, and its cache of the cluster's APIs, for all the actions of a run (HelmRelease `spec.persistentClient`); `false` rediscovers the APIs before each action, for charts whose hooks create CRDs. Default: `true`.",
				Optional:            true,
			},
			"service_account_name": schema.StringAttribute{
				MarkdownDescription: "Service account of `namespace` to impersonate for every Helm action (HelmRelease `spec.serviceAccountName`): the provider's credentials need the `impersonate` verb on it. Default: none, the provider's credentials.",
				Optional:            true,
				Validators:          []validator.String{dnsSubdomain()},
			},
			"install":         installAttribute(),
			"upgrade":         upgradeAttribute(),
			"test":            testAttribute(),
			"rollback":        rollbackAttribute(),
			"uninstall":       uninstallAttribute(),
			"drift_detection": driftDetectionAttribute(),
			"force_at": schema.StringAttribute{
				MarkdownDescription: "A token; setting it to a new value forces one install or upgrade even when nothing changed, once (Flux's `reconcile.fluxcd.io/forceAt` annotation), e.g. `timestamp()` captured in a variable. Default: none.",
				Optional:            true,
			},
			"reset_at": schema.StringAttribute{
				MarkdownDescription: "A token; setting it to a new value resets the failure counters, so that a release whose retries are exhausted is tried again (Flux's `reconcile.fluxcd.io/resetAt` annotation). Default: none.",
				Optional:            true,
			},
		}),
	}
}

// releaseAttributes is attrs with the attributes of each group of the
// schema (one function per group, each a part of the HelmRelease).
func releaseAttributes(attrs map[string]schema.Attribute) map[string]schema.Attribute {
	for _, group := range []map[string]schema.Attribute{releaseIdentityAttributes(), releaseValuesAttributes(), releaseEngineAttributes(), releaseComputedAttributes()} {
		maps.Copy(attrs, group)
	}
	return attrs
}

// releaseIdentityAttributes are the release's identity: which release of
// which cluster the resource manages.
func releaseIdentityAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"id": schema.StringAttribute{
			MarkdownDescription: "`<storage_namespace>/<release_name>`, or `<cluster>:<storage_namespace>/<release_name>` on a named cluster; also the import ID.",
			Computed:            true,
		},
		"cluster": schema.StringAttribute{
			MarkdownDescription: clusterDescription("the release is installed in", "Changing it replaces the release: it is uninstalled from the old cluster and installed in the new one."),
			Optional:            true,
			Validators:          []validator.String{clusterNameValidator()},
		},
		"name": schema.StringAttribute{
			MarkdownDescription: "Name of the release object (HelmRelease `metadata.name`): the base of the default release name and the value of the `helmrelease.terraform.io/name` label on every object. Changing it replaces the release.",
			Required:            true,
			Validators:          []validator.String{dnsSubdomain()},
		},
		"namespace": schema.StringAttribute{
			MarkdownDescription: "Namespace of the release object (HelmRelease `metadata.namespace`): where `values_from` and `kube_config` Secrets are read, and the default target and storage namespace. Changing it replaces the release. Default: `default`.",
			Optional:            true,
			Computed:            true,
			Default:             stringdefault.StaticString("default"),
			Validators:          []validator.String{dnsLabel(63)},
		},
		"release_name": schema.StringAttribute{
			MarkdownDescription: "Helm release name (HelmRelease `spec.releaseName`). Changing it replaces the release. Default: `[target_namespace-]name`, shortened when longer than 53 characters to its first 40 characters, `-` and 12 hex digits of its SHA-256.",
			Optional:            true,
			Computed:            true,
			Validators:          []validator.String{dnsLabel(reconcile.MaxReleaseNameLength)},
		},
		"target_namespace": schema.StringAttribute{
			MarkdownDescription: "Namespace of the release's objects (HelmRelease `spec.targetNamespace`). Changing it replaces the release (uninstall, then install). Default: `namespace`.",
			Optional:            true,
			Computed:            true,
			Validators:          []validator.String{dnsLabel(63)},
		},
		"storage_namespace": schema.StringAttribute{
			MarkdownDescription: "Namespace of the release's Helm storage (HelmRelease `spec.storageNamespace`). Changing it replaces the release. Default: `namespace`.",
			Optional:            true,
			Computed:            true,
			Validators:          []validator.String{dnsLabel(63)},
		},
	}
}

// releaseValuesAttributes are the values: inline, sensitive (write-only
// too) and from ConfigMaps and Secrets.
func releaseValuesAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"values": schema.DynamicAttribute{
			MarkdownDescription: "Inline values, any HCL object (HelmRelease `spec.values`), merged over `values_from`. Default: none.",
			Optional:            true,
		},
		"sensitive_values": schema.StringAttribute{
			MarkdownDescription: "Values merged right after `values`, as a YAML or JSON mapping, e.g. `yamlencode({ auth = { password = var.password } })` (beyond Flux). Never shown in plans or logs: a string rather than an object because Terraform itself logs object values of dynamic attributes at debug level. Default: none.",
			Optional:            true,
			Sensitive:           true,
			Validators:          []validator.String{sensitiveValuesMapping()},
		},
		"sensitive_values_wo": schema.StringAttribute{
			MarkdownDescription: "Values merged right after `sensitive_values`, as a YAML or JSON mapping, write-only: never stored in the plan or the state (Terraform ≥ 1.11), e.g. from an ephemeral variable or resource. Every plan reads them from the configuration, so a change of their content is planned as the upgrade of the objects it changes. Default: none.",
			Optional:            true,
			Sensitive:           true,
			WriteOnly:           true,
			Validators:          []validator.String{sensitiveValuesMapping()},
		},
		"sensitive_values_wo_version": schema.Int64Attribute{
			MarkdownDescription: "A version of `sensitive_values_wo` kept in the state, Terraform's convention for write-only arguments: bump it when the write-only values change, so that the state records the change. The values themselves are compared at every plan: a new version with the same values changes no object, new values are applied whatever the version. Default: none.",
			Optional:            true,
		},
		"values_from": resourceAttribute(valuesFromAttribute()),
	}
}

// releaseEngineAttributes are what runs the release, and how it reaches
// the cluster: the engine and its Flux settings, the kubeconfig Secret, the
// plan's detail.
func releaseEngineAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"kube_config": schema.SingleNestedAttribute{
			MarkdownDescription: "Install into another cluster, whose kubeconfig is in a Secret of `namespace` on the release's cluster (`cluster`), as Cluster API writes them (HelmRelease `spec.kubeConfig`). `values_from` still reads the release's cluster. Default: the release's cluster.",
			Optional:            true,
			Attributes: map[string]schema.Attribute{
				"secret_ref": schema.SingleNestedAttribute{
					MarkdownDescription: "The Secret (`secretRef`).",
					Required:            true,
					Attributes: map[string]schema.Attribute{
						"name": schema.StringAttribute{MarkdownDescription: "Name of the Secret (`name`).", Required: true, Validators: []validator.String{dnsSubdomain()}},
						"key": schema.StringAttribute{
							MarkdownDescription: "Data key holding the kubeconfig (`key`). Default: `value`, else `value.yaml`.",
							Optional:            true,
							Validators:          []validator.String{stringvalidator.RegexMatches(dataKeyPattern, "must be a Secret data key: letters, digits, '-', '_' and '.'")},
						},
					},
				},
			},
		},
		"plan_detail": schema.StringAttribute{
			MarkdownDescription: "What `resources`, `planned_hooks` and `planned_crds` show of each object, one of " + planDetails.markdown() + ". `" + planDetailFull + "`: the object as YAML; Terraform shows every line of an object that changes, the changed ones marked. `" + planDetailNames + "`: the object's key with a digest of its YAML (`sha256:<hex>`), so a plan lists the objects created, changed and deleted and stays short for large charts. `" + planDetailChanges + "`: digests as with `" + planDetailNames + "`, and `planned_changes` lists each changed field with its value before and after. Switching to `" + planDetailNames + "` changes no release; switching back to `" + planDetailFull + "` shows the objects after the apply. This provider's setting, not a HelmRelease field. Default: `" + planDetailFull + "`.",
			Optional:            true,
			Validators:          []validator.String{planDetails.validator()},
		},
		"engine": schema.StringAttribute{
			MarkdownDescription: "What runs the release: `" + engineHelm + "` runs the HelmRelease reconciliation inside `terraform apply`; `" + engineFlux + "` writes the release as a Flux `HelmRelease` (with its chart source: a `HelmRepository` and `HelmChart`, an `OCIRepository`, a `GitRepository` or a `Bucket`; and Secrets for credentials and sensitive values) for Flux's helm-controller in the cluster, which installs, upgrades, tests, remediates and corrects drift between Terraform runs, while the plan still shows the rendered objects and the apply waits for the controller's result. One of " + engines.markdown() + ". See the guide \"Handing releases to Flux\". Default: `" + engineHelm + "`.",
			Optional:            true,
			Validators:          []validator.String{engines.validator()},
		},
		"flux": schema.SingleNestedAttribute{
			MarkdownDescription: "Settings only Flux's controller uses, with `engine = \"" + engineFlux + "\"` (refused otherwise). Default: every setting's default.",
			Optional:            true,
			Attributes: map[string]schema.Attribute{
				"interval": schema.StringAttribute{
					MarkdownDescription: "How often the controller checks the release and its chart source between Terraform runs (HelmRelease and source `spec.interval`). Default: `10m`.",
					Optional:            true,
					Validators:          []validator.String{duration()},
				},
				"depends_on": schema.ListNestedAttribute{
					MarkdownDescription: "HelmReleases that must be ready before the controller installs or upgrades this one (HelmRelease `spec.dependsOn`), so that it keeps the order between Terraform runs too: after a cluster restore, a controller restart, an interval upgrade. Terraform's own `depends_on` orders the applies only. A dependency not ready holds this release back (its `Ready` condition says `DependencyNotReady`) and the apply waits for it within the timeout. Default: none.",
					Optional:            true,
					NestedObject: schema.NestedAttributeObject{
						Attributes: map[string]schema.Attribute{
							"name": schema.StringAttribute{
								MarkdownDescription: "Name of the HelmRelease (`name`): a `helmrelease_release`'s `name` with `engine = \"flux\"`, or any HelmRelease.",
								Required:            true,
								Validators:          []validator.String{dnsSubdomain()},
							},
							"namespace": schema.StringAttribute{
								MarkdownDescription: "Namespace of the HelmRelease (`namespace`). Default: this release's `namespace`.",
								Optional:            true,
								Validators:          []validator.String{dnsSubdomain()},
							},
							"ready_expr": schema.StringAttribute{
								MarkdownDescription: "When the dependency counts as ready, as a CEL expression over `self` (this HelmRelease) and `dep` (the dependency), e.g. `dep.status.history[0].chartVersion == '1.2.3'` (`readyExpr`); it replaces the controller's own check (its `Ready` condition and observed generation) unless the controller's `AdditiveCELDependencyCheck` feature gate is on. Default: the controller's check.",
								Optional:            true,
							},
						},
					},
				},
				"wait": schema.BoolAttribute{
					MarkdownDescription: "Whether the apply waits for helm-controller's outcome (not a HelmRelease field). `true` waits, as `flux reconcile` does, until the controller reports the planned revision ready, and fails naming what it reported otherwise. `false` returns once the controller has taken up the HelmRelease written (marked it `Reconciling`, or already reconciled it): the state records the plan's objects and the controller's status at that moment, and the next refresh reads the outcome, so a failure is reported by the next plan (the release not ready, planned again, or stalled) and its objects as deployed. For fleets whose outcome the controller's own alerts report; the controller's render differences are then not named at apply. Helm's own wait for the release's objects is `install.disable_wait` / `upgrade.disable_wait`. Default: `true`.",
					Optional:            true,
				},
				"uninstall_on_destroy": schema.BoolAttribute{
					MarkdownDescription: "Whether destroying the resource uninstalls the release: `true` deletes the HelmRelease and waits until the controller has uninstalled it; `false` suspends the HelmRelease, deletes it once the controller has seen the suspension, and leaves the release installed and unmanaged. Default: `true`.",
					Optional:            true,
				},
			},
		},
	}
}

// releaseComputedAttributes are what plans and applies compute: the chart
// deployed, the planned action and objects, the release's objects and
// status.
func releaseComputedAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"chart_version": schema.StringAttribute{
			MarkdownDescription: "Chart revision resolved from `chart`: the chart version, with digests as build metadata where the version alone would not show a change (`+<12 hex>` of the OCI manifest, of a local chart's content, of the values files in use). A new revision here is an upgrade.",
			Computed:            true,
		},
		"notes": schema.StringAttribute{
			MarkdownDescription: "The chart's rendered `NOTES.txt` of the latest revision, as `helm install` prints it. Sensitive: charts may print credentials there (use `nonsensitive()` to show it). Known after apply when the plan runs a Helm action.",
			Computed:            true,
			Sensitive:           true,
		},
		"description": schema.StringAttribute{
			MarkdownDescription: "The description Helm stores with the latest revision, e.g. `Install complete`, `Upgrade complete`, or why it failed (`helm history` shows it). Known after apply when the plan runs a Helm action.",
			Computed:            true,
		},
		"planned_action": schema.StringAttribute{
			MarkdownDescription: plannedActionDescription,
			Computed:            true,
		},
		"planned_hooks": schema.MapAttribute{
			MarkdownDescription: "Set by a plan that runs a Helm action: the chart's hooks that action runs (Jobs, Pods and any other object annotated `helm.sh/hook`, e.g. a database migration), keyed and shown as `resources` shows objects, Secret values and sensitive strings hidden the same way; their `helm.sh/hook` annotations say when each runs. The chart's tests (`helm.sh/hook: test`) are among them: they run after the action when `test.enable` is set. Secret hooks, and hooks holding sensitive strings, are known after apply in a resource's first plan. " +
				"Like `planned_action`, a refresh sets it to null. Terraform-only (no HelmRelease field).",
			ElementType: types.StringType,
			Computed:    true,
		},
		"planned_crds": schema.MapAttribute{
			MarkdownDescription: "Set by a plan that runs a Helm action: the CRDs of the chart's `crds/` that action applies under its CRD policy (`install.crds`, default `Create`: each is created unless it exists when the action runs, then left as it is; `upgrade.crds`, default `Skip`: none; `CreateReplace`: each, replaced). Under `Create` every CRD of the chart is listed, existing or not: another release of the same apply may create them between the plan and the apply, keyed `apiextensions.k8s.io/v1/CustomResourceDefinition/<name>`, each as YAML. " +
				"Like `planned_action`, a refresh sets it to null. Terraform-only (no HelmRelease field).",
			ElementType: types.StringType,
			Computed:    true,
		},
		"planned_dependencies": schema.MapAttribute{
			MarkdownDescription: "Set by a plan that runs a Helm action: the chart's dependencies (its subcharts) as that action deploys them, name → version (`redis` → `17.3.2`): those vendored in its `charts/`, those fetched from `Chart.yaml`'s repositories, and with `chart.dependency_update`, the versions it resolved. " +
				"Like `planned_action`, a refresh sets it to null. Terraform-only (no HelmRelease field).",
			ElementType: types.StringType,
			Computed:    true,
		},
		"planned_changes": schema.MapAttribute{
			MarkdownDescription: "With `plan_detail = \"" + planDetailChanges + "\"`, set by a plan that runs a Helm action or corrects drift: what it changes, field by field. " +
				"Keys are `<object key> <JSON pointer>` (`apps/v1/Deployment/apps/web /spec/replicas`) with values `<before> → <after>` as JSON (`(none)` where absent; Secret values and sensitive strings as the keyed hashes `resources` shows), " +
				"or the object key alone with `created`, `deleted`, `known after apply` or, for an object deleted in the cluster, `created again`. Before an upgrade is the current release; before a drift correction, the live object. " +
				"Like `planned_action`, a refresh sets it to null; null with other `plan_detail` values. Terraform-only (no HelmRelease field).",
			ElementType: types.StringType,
			Computed:    true,
		},
		"app_version": schema.StringAttribute{
			MarkdownDescription: "App version of the resolved chart.",
			Computed:            true,
		},
		"chart_source_revision": schema.StringAttribute{
			MarkdownDescription: "Where in its source the deployed chart was read, as Flux writes the artifact revision: for `chart.git`, the reference and commit (`main@sha1:<hash>`, `v1.2.0@sha1:<hash>`, `sha1:<hash>` for a commit). A plan that upgrades shows the commit it resolved, and the apply deploys that commit even if the branch moved since; a plan without a Helm action keeps the one deployed, so a new commit that leaves the chart's revision alone plans nothing. Null for other sources.",
			Computed:            true,
		},
		"chart_digest": schema.StringAttribute{
			MarkdownDescription: "SHA-256 of the chart archive (Helm repositories, `.tgz`), or the OCI manifest digest; empty for a chart directory, and for a release adopted by import or `moved` until its next install or upgrade (Helm's storage does not record the archive a release came from).",
			Computed:            true,
		},
		"resources": schema.MapAttribute{
			MarkdownDescription: "Objects of the release manifest, keyed `<group>/<version>/<Kind>/<namespace>/<name>` (core group: `v1/<Kind>/…`; no namespace segment for cluster-scoped objects), each as YAML: the plan shows here what an install or upgrade changes, and, with drift detection, the objects changed or deleted in the cluster. Hooks, tests and the chart's `crds/` are not listed. Values of Secret `data` and `stringData` are never in clear: they show as `(sensitive value) hmac-sha256:<hex>`, keyed with a random key of this resource kept in its private state, so that a change shows while a guess cannot be checked against a published plan. " +
				"So are the strings of `sensitive_values`, `sensitive_values_wo` and of `values_from` Secrets wherever the chart copies them (a ConfigMap, an environment variable, an annotation; in clear, escaped or base64-encoded; strings of 6 characters or more): the same keyed hash takes their place. " +
				"A new resource's Secrets, and its objects holding such strings, are known after its first apply.",
			ElementType: types.StringType,
			Computed:    true,
		},
		"status": statusAttribute(),
	}
}

// releaseChartAttribute is chart with the write-only repository password a
// managed resource may take.
func releaseChartAttribute() schema.SingleNestedAttribute {
	a := resourceAttribute(chartAttribute()).(schema.SingleNestedAttribute)
	// chart_ref may take its place (HelmRelease spec.chart or spec.chartRef).
	a.Required, a.Optional = false, true
	a.MarkdownDescription += " Exactly one of `chart` and `chart_ref` is set. Default: none, with `chart_ref`."
	a.Attributes["password_wo"] = schema.StringAttribute{
		MarkdownDescription: "Password or token for the repository or registry, write-only: never stored in the plan or the state (Terraform ≥ 1.11). Used in place of `password` when set. Default: none.",
		Optional:            true,
		Sensitive:           true,
		WriteOnly:           true,
	}
	a.Attributes["password_wo_version"] = schema.Int64Attribute{
		MarkdownDescription: "A version of the write-only credentials, `password_wo` and `git.private_key_wo`, kept in the state to record that they changed: with `engine = \"flux\"`, a new version writes the new credentials into the cluster's Secret (a new credential alone never upgrades the release). Default: none.",
		Optional:            true,
	}
	git := a.Attributes["git"].(schema.SingleNestedAttribute)
	git.Attributes["private_key_wo"] = schema.StringAttribute{
		MarkdownDescription: "SSH private key for an `ssh://` URL, write-only: never stored in the plan or the state (Terraform ≥ 1.11). Used in place of `private_key` when set; bump `password_wo_version` when it changes. Default: none.",
		Optional:            true,
		Sensitive:           true,
		WriteOnly:           true,
	}
	a.Attributes["git"] = git
	return a
}

func timeoutAttribute(action string) schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: "Time the " + action + " may take (`timeout`). Default: the release's `timeout`.",
		Optional:            true,
		Validators:          []validator.String{duration()},
	}
}

func flag(desc, field string) schema.BoolAttribute {
	return schema.BoolAttribute{MarkdownDescription: desc + " (`" + field + "`). Default: `false`.", Optional: true}
}

// actionAttributes are the attributes install and upgrade share, with the
// attributes of one of them added.
func actionAttributes(action, crdDefault string, own map[string]schema.Attribute) map[string]schema.Attribute {
	attrs := map[string]schema.Attribute{
		"timeout": timeoutAttribute(action),
		"crds": schema.StringAttribute{
			MarkdownDescription: "What to do with the chart's `crds/` on " + action + " (`crds`): " + crdPolicies.markdown() + ". Default: `" + crdDefault + "`.",
			Optional:            true,
			Validators:          []validator.String{crdPolicies.validator()},
		},
		"disable_hooks":               flag("Skip the chart's hooks", "disableHooks"),
		"disable_open_api_validation": flag("Skip the validation of objects against the cluster's OpenAPI schema (a server-side dry run before the objects are written): a client-side write then sends them as they are, and the API server drops fields it does not know; a server-side apply is still refused them", "disableOpenAPIValidation"),
		"disable_schema_validation":   flag("Skip the validation of values against the chart's `values.schema.json`", "disableSchemaValidation"),
		"disable_take_ownership":      flag("Refuse to take over objects that exist and belong to no release", "disableTakeOwnership"),
		"disable_wait":                flag("Do not wait for the objects to be ready", "disableWait"),
		"disable_wait_for_jobs":       flag("Do not wait for Jobs to complete", "disableWaitForJobs"),
	}
	for k, a := range own {
		attrs[k] = a
	}
	return attrs
}

func installAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: "How the release is installed (HelmRelease `spec.install`). Default: the v2 defaults of each field.",
		Optional:            true,
		Attributes: actionAttributes("install", "Create", map[string]schema.Attribute{
			"replace":          flag("Reuse the name of a deleted release kept in history", "replace"),
			"create_namespace": flag("Create `target_namespace` when missing (before the objects are validated; an install refused before writing anything deletes it again)", "createNamespace"),
			"skip_crds": schema.BoolAttribute{
				MarkdownDescription: "Skip the chart's CRDs (`skipCRDs`). Default: `false`.",
				Optional:            true,
				DeprecationMessage:  "Deprecated in HelmRelease v2: use install.crds = \"Skip\".",
			},
			"strategy": strategyAttribute("install"),
			"server_side_apply": schema.BoolAttribute{
				MarkdownDescription: "Whether the install creates the objects by server-side apply (`serverSideApply`), forcing conflicts with other field managers as helm-controller does; `false` creates them client-side, as Helm 3 did. The release's record says which (`apply_method`), and upgrades and rollbacks follow it unless told otherwise. The field manager is `terraform-provider-helmrelease` in-process, `helm` under helm-controller. With `engine = \"flux\"` it needs helm-controller v1.5 or later (Helm 4). Default: `true`, helm-controller's default since v1.5, on both engines (helm-controller v1.4, on Helm 3, creates objects client-side).",
				Optional:            true,
			},
			"remediation": schema.SingleNestedAttribute{
				MarkdownDescription: "What to do when the install fails under the strategy `RemediateOnFailure` (`remediation`): the failed release is uninstalled before each retry. Default: no retry.",
				Optional:            true,
				Attributes: map[string]schema.Attribute{
					"retries": schema.Int64Attribute{
						MarkdownDescription: "Retries after a failed install within one apply; negative is unlimited (`retries`): one apply then stops after 64 Helm actions with an error, and the next apply goes on from the recorded status. Default: `0`.",
						Optional:            true,
					},
					"ignore_test_failures":   flagDefaultOf("Let failed tests pass after an install", "ignoreTestFailures", "`test.ignore_failures`"),
					"remediate_last_failure": flagDefaultOf("Uninstall the release after the last failed retry too", "remediateLastFailure", "`false`"),
				},
			},
		}),
	}
}

// strategyAttribute is install.strategy or upgrade.strategy.
func strategyAttribute(action string) schema.SingleNestedAttribute {
	taint := ""
	if action == "install" {
		taint = " A failed install fails the resource's create, which Terraform replaces at the next apply (uninstall, then install) unless the resource is untainted (`terraform untaint`): then the next apply upgrades the failed release in place."
	}
	return schema.SingleNestedAttribute{
		MarkdownDescription: "What follows a failed " + action + " (`strategy`). Default: `{ name = \"RemediateOnFailure\" }`.",
		Optional:            true,
		Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{
				MarkdownDescription: "The strategy (`name`): `RemediateOnFailure` remediates the failure as `remediation` says and, once no retry remains, stalls the release: later applies leave it alone until `reset_at`, `force_at`, a new chart version or new values. " +
					"`RetryOnFailure` neither remediates nor counts retries: the apply fails and leaves the failed release as it is, and every later apply upgrades it again until one succeeds (`remediation` is then not used)." + taint,
				Required:   true,
				Validators: []validator.String{actionStrategies.validator()},
			},
			"retry_interval": schema.StringAttribute{
				MarkdownDescription: "How long helm-controller waits before it retries (`retryInterval`), with `engine = \"flux\"` only: the controller retries between Terraform runs. The `helm` engine retries at the next apply and takes no interval. Only with `RetryOnFailure`. Default: `5m` (the controller's).",
				Optional:            true,
				Validators:          []validator.String{duration()},
			},
		},
	}
}

func waitStrategyAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: "How install, upgrade, rollback and uninstall wait for the release's objects and hooks (HelmRelease `spec.waitStrategy`). Default: `poller`, helm-controller's default since v1.5 (Helm 4), on both engines (helm-controller v1.4 waits as `legacy`).",
		Optional:            true,
		Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{
				MarkdownDescription: "The strategy (`name`): `legacy` is Helm 3's waiter (Helm 4's `legacy`): Deployments, StatefulSets, DaemonSets, Jobs, Pods, Services and PersistentVolumeClaims, and any other object is ready once it exists; hooks are watched by Helm's watch. " +
					"`poller` polls every object's status as helm-controller does (kstatus, through Flux's `ssa` library, every second where the controller polls every 5 seconds): custom resources that report a `Ready` condition or an `observedGeneration` are waited for too, `health_check_exprs` decide for their kinds, and the wait ends as soon as one object has failed; hooks and tests are waited for the same way (Jobs until complete, Pods until succeeded). helm-controller runs this for its `poller`, which it gives Helm 4 as `watcher`; Helm 4's own watcher is not used. One of " + waitStrategies.markdown() + ".",
				Required:   true,
				Validators: []validator.String{waitStrategies.validator()},
			},
		},
	}
}

func healthCheckExprsAttribute() schema.ListNestedAttribute {
	return schema.ListNestedAttribute{
		MarkdownDescription: "When objects of a kind are ready, as CEL expressions over the object (`apiVersion`, `kind`, `metadata`, `spec`, `status`), for kinds whose status kstatus cannot read, e.g. a cert-manager `Certificate` or a database operator's resource (HelmRelease `spec.healthCheckExprs`, Flux's health check expressions). " +
			"Used by the `poller` wait strategy, which setting them makes the default. An object whose `status.observedGeneration` lags its generation is in progress; then `in_progress`, `failed` and `current` are evaluated in that order, the first that holds decides, and none holding is in progress. A failed wait names the expression that did not hold. Expressions that do not compile are refused at plan. Default: none.",
		Optional: true,
		NestedObject: schema.NestedAttributeObject{
			Attributes: map[string]schema.Attribute{
				"api_version": schema.StringAttribute{MarkdownDescription: "API version of the kind, e.g. `cert-manager.io/v1` (`apiVersion`).", Required: true, Validators: []validator.String{stringvalidator.LengthAtLeast(1)}},
				"kind":        schema.StringAttribute{MarkdownDescription: "The kind, e.g. `Certificate` (`kind`). Default: every kind of the API group.", Optional: true},
				"current":     schema.StringAttribute{MarkdownDescription: "Holds when the object is ready, e.g. `status.conditions.filter(e, e.type == 'Ready').all(e, e.status == 'True')` (`current`).", Required: true, Validators: []validator.String{stringvalidator.LengthAtLeast(1)}},
				"in_progress": schema.StringAttribute{MarkdownDescription: "Holds while the object is on its way, checked first (`inProgress`). Default: none.", Optional: true},
				"failed":      schema.StringAttribute{MarkdownDescription: "Holds when the object has failed, which ends the wait at once (`failed`). Default: none.", Optional: true},
			},
		},
	}
}

func flagDefaultOf(desc, field, def string) schema.BoolAttribute {
	return schema.BoolAttribute{MarkdownDescription: desc + " (`" + field + "`). Default: " + def + ".", Optional: true}
}

func upgradeAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: "How the release is upgraded (HelmRelease `spec.upgrade`). Default: the v2 defaults of each field.",
		Optional:            true,
		Attributes: actionAttributes("upgrade", "Skip", map[string]schema.Attribute{
			"cleanup_on_fail":   flag("Delete the objects an upgrade created when it fails", "cleanupOnFail"),
			"force":             flag("Replace objects that cannot be patched (delete and create)", "force"),
			"preserve_values":   flag("Merge the values of the previous revision under the new ones", "preserveValues"),
			"strategy":          strategyAttribute("upgrade"),
			"server_side_apply": serverSideApplyAttribute("upgrade", "the release's newest record"),
			"chart_name_change_strategy": schema.StringAttribute{
				MarkdownDescription: "What a change of the chart's name does (`chartNameChangeStrategy`), one of " + chartNameChangeStrategies.markdown() + ": `" + chartNameReinstall + "` uninstalls the release (under `uninstall`'s settings) and installs the new chart afresh, a new history from revision 1, as helm-controller has done since Flux 2.2; `" + chartNameInPlaceUpdate + "` upgrades the release to the new chart in place, as `helm upgrade` does. The plan's `planned_action` says which. With `engine = \"flux\"`, `" + chartNameInPlaceUpdate + "` needs helm-controller v1.6 or later. Default: `" + chartNameReinstall + "`.",
				Optional:            true,
				Validators:          []validator.String{chartNameChangeStrategies.validator()},
			},
			"remediation": schema.SingleNestedAttribute{
				MarkdownDescription: "What to do when the upgrade fails under the strategy `RemediateOnFailure` (`remediation`). Default: no retry.",
				Optional:            true,
				Attributes: map[string]schema.Attribute{
					"retries": schema.Int64Attribute{
						MarkdownDescription: "Retries after a failed upgrade within one apply, each after the remediation; negative is unlimited (`retries`): one apply then stops after 64 Helm actions with an error, and the next apply goes on from the recorded status. Default: `0`.",
						Optional:            true,
					},
					"strategy": schema.StringAttribute{
						MarkdownDescription: "Remediation of a failed upgrade (`strategy`): " + remediationStrategies.markdown() + " (the install then starts afresh). Default: `rollback`.",
						Optional:            true,
						Validators:          []validator.String{remediationStrategies.validator()},
					},
					"ignore_test_failures":   flagDefaultOf("Let failed tests pass after an upgrade", "ignoreTestFailures", "`test.ignore_failures`"),
					"remediate_last_failure": flagDefaultOf("Remediate the last failed retry too", "remediateLastFailure", "`true` when `retries` > 0, else `false`"),
				},
			},
		}),
	}
}

func testAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: "Helm tests run after each install and upgrade (HelmRelease `spec.test`). Default: no tests.",
		Optional:            true,
		Attributes: map[string]schema.Attribute{
			"enable":          flag("Run the chart's tests", "enable"),
			"timeout":         timeoutAttribute("test run"),
			"ignore_failures": flag("Let failed tests pass: no remediation", "ignoreFailures"),
			"filters": schema.ListNestedAttribute{
				MarkdownDescription: "Tests to run or skip by name (`filters`); with an include filter, only the included tests run. Default: all tests.",
				Optional:            true,
				NestedObject: schema.NestedAttributeObject{
					Attributes: map[string]schema.Attribute{
						"name":    schema.StringAttribute{MarkdownDescription: "Name of the test hook (`name`).", Required: true, Validators: []validator.String{stringvalidator.LengthAtLeast(1)}},
						"exclude": flag("Skip the test instead of running it", "exclude"),
					},
				},
			},
		},
	}
}

func rollbackAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: "How a failed upgrade is rolled back (HelmRelease `spec.rollback`). Default: the v2 defaults of each field.",
		Optional:            true,
		Attributes: map[string]schema.Attribute{
			"timeout":               timeoutAttribute("rollback"),
			"cleanup_on_fail":       flag("Delete the objects a failed rollback created", "cleanupOnFail"),
			"disable_hooks":         flag("Skip the chart's hooks", "disableHooks"),
			"disable_wait":          flag("Do not wait for the objects to be ready", "disableWait"),
			"disable_wait_for_jobs": flag("Do not wait for Jobs to complete", "disableWaitForJobs"),
			"force":                 flag("Replace objects that cannot be patched (delete and create)", "force"),
			"recreate": schema.BoolAttribute{
				MarkdownDescription: "Restart the pods of the objects (`recreate`). Helm 4 removed it: the in-process engine and helm-controller v1.5 and later ignore it, as helm-controller does with a warning; only helm-controller v1.4 (Helm 3) still restarts pods. Default: `false`.",
				Optional:            true,
				DeprecationMessage:  "rollback.recreate has no effect: Helm 4 removed it, and the in-process engine and helm-controller v1.5 and later ignore it (helm-controller v1.4 alone still restarts pods). Remove it.",
			},
			"server_side_apply": serverSideApplyAttribute("rollback", "the record of the revision rolled back to"),
		},
	}
}

// serverSideApplyAttribute is upgrade.server_side_apply or
// rollback.server_side_apply; record is the record auto follows.
func serverSideApplyAttribute(action, record string) schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: "How the " + action + " writes the objects (`serverSideApply`), one of " + serverSideApplyModes.markdown() + ": `" + ssaEnabled + "` by server-side apply, forcing conflicts with other field managers as helm-controller does; `" + ssaDisabled + "` by client-side three-way merge patches; `" + ssaAuto + "` as " + record + " says it was written (`apply_method`), and client-side for a record without one: a release installed client-side (by Helm 3, HashiCorp's helm provider or this provider before it ran Helm 4) stays client-side until this says `" + ssaEnabled + "`. With `engine = \"flux\"` it needs helm-controller v1.5 or later (Helm 4). Default: `" + ssaAuto + "`, helm-controller's default, on both engines.",
		Optional:            true,
		Validators:          []validator.String{serverSideApplyModes.validator()},
	}
}

func uninstallAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: "How the release is uninstalled, on destroy and by remediation (HelmRelease `spec.uninstall`). Default: the v2 defaults of each field.",
		Optional:            true,
		Attributes: map[string]schema.Attribute{
			"timeout": timeoutAttribute("uninstall"),
			"deletion_propagation": schema.StringAttribute{
				MarkdownDescription: "How dependents of deleted objects are deleted (`deletionPropagation`): " + deletionPropagations.markdown() + ". Default: `background`.",
				Optional:            true,
				Validators:          []validator.String{deletionPropagations.validator()},
			},
			"disable_hooks": flag("Skip the chart's hooks", "disableHooks"),
			"disable_wait":  flag("Do not wait for the objects to be deleted", "disableWait"),
			"keep_history":  flag("Keep the release's history in storage (status `uninstalled`)", "keepHistory"),
			"delete_namespace": schema.BoolAttribute{
				MarkdownDescription: "Delete the namespace this release's install created (`install.create_namespace`) when the release is destroyed, and wait for it to be gone (up to `uninstall.timeout`). Only when it holds nothing but what Kubernetes keeps in every namespace and what goes with the release (objects whose owners are all gone or in the namespace and going too); otherwise, and when an API group's discovery fails or a kind cannot be listed (what the namespace holds is then unknown), the namespace stays and a warning names why. A namespace that existed before the install, or was created by another tool, always stays. No HelmRelease field: helm-controller never deletes namespaces. Default: `false` (the namespace stays, as with Helm).",
				Optional:            true,
			},
		},
	}
}

func driftDetectionAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: "Comparison of the release's objects with the cluster on refresh (HelmRelease `spec.driftDetection`). An object labelled or annotated `helmrelease.terraform.io/driftDetection: disabled` (or Flux's `helm.toolkit.fluxcd.io/driftDetection`) is left out. Default: disabled.",
		Optional:            true,
		Attributes: map[string]schema.Attribute{
			"mode": schema.StringAttribute{
				MarkdownDescription: "`enabled`: drifted and deleted objects show in `resources` in the plan and apply corrects them (without a new Helm revision); `warn`: a warning only; `disabled` (`mode`). Default: `disabled`.",
				Optional:            true,
				Validators:          []validator.String{driftModes.validator()},
			},
			"ignore": schema.ListNestedAttribute{
				MarkdownDescription: "Fields left out of the comparison (`ignore`). Default: none.",
				Optional:            true,
				NestedObject: schema.NestedAttributeObject{
					Attributes: map[string]schema.Attribute{
						"paths": schema.ListAttribute{
							MarkdownDescription: "JSON pointers (RFC 6901) of the fields, e.g. `/spec/replicas` (`paths`).",
							ElementType:         types.StringType,
							Required:            true,
							Validators:          []validator.List{listvalidator.SizeAtLeast(1), listvalidator.ValueStringsAre(jsonPointer())},
						},
						"target": resourceAttribute(selectorAttribute(false, "Objects the rule applies to (`target`). Default: all objects of the release.")),
					},
				},
			},
		},
	}
}

// statusAttribute is HelmRelease status, as the reconciler or helm-controller records it.
func statusAttribute() schema.SingleNestedAttribute {
	str := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{MarkdownDescription: desc, Computed: true}
	}
	count := func(desc string) schema.Int64Attribute {
		return schema.Int64Attribute{MarkdownDescription: desc, Computed: true}
	}
	return schema.SingleNestedAttribute{
		MarkdownDescription: "What the last apply or refresh observed (HelmRelease `status`). It changes only when the release or the cluster does.",
		Computed:            true,
		Attributes: map[string]schema.Attribute{
			"ready":   schema.BoolAttribute{MarkdownDescription: "Whether the release is in sync with the configuration (condition `Ready`).", Computed: true},
			"reason":  str("Reason of the `Ready` condition, e.g. `InstallSucceeded`, `UpgradeFailed`, `RetriesExceeded`."),
			"message": str("Message of the `Ready` condition."),
			"conditions": schema.ListNestedAttribute{
				MarkdownDescription: "Conditions `Ready`, `Released`, `TestSuccess`, `Remediated`, `Stalled`, and `Drifted` with drift detection (`true` while the cluster differs from the release, reason `DriftDetected`; `false` once compared and found in sync, reason `NoDriftDetected`), as in Flux (without timestamps).",
				Computed:            true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"type":    str("Condition type."),
					"status":  schema.BoolAttribute{MarkdownDescription: "Condition status.", Computed: true},
					"reason":  str("Reason."),
					"message": str("Message."),
				}},
			},
			"failures":                        count("Failures since the last success (`failures`)."),
			"install_failures":                count("Failed installs since the chart or values last changed (`installFailures`)."),
			"upgrade_failures":                count("Failed upgrades since the chart or values last changed (`upgradeFailures`)."),
			"last_attempted_revision":         str("Chart revision last attempted: the chart version with its build metadata (`lastAttemptedRevision`)."),
			"last_attempted_revision_digest":  str("Digest of the chart last attempted when its revision does not carry it: a Helm repository's archive digest, so that a version published again is an upgrade (`lastAttemptedRevisionDigest`); empty for other sources."),
			"last_attempted_config_digest":    str("Digest of the values last attempted (`lastAttemptedConfigDigest`): `hmac-sha256:…` under the resource's private key, so that it confirms no guessed value."),
			"last_attempted_release_action":   str("`install` or `upgrade` (`lastAttemptedReleaseAction`)."),
			"last_applied_revision":           str("Chart version last released successfully."),
			"observed_post_renderers_digest":  str("Digest of the post-renderers of the last success (`observedPostRenderersDigest`)."),
			"observed_common_metadata_digest": str("Digest of `common_metadata` of the last success."),
			"last_handled_force_at":           str("`force_at` last handled (`lastHandledForceAt`)."),
			"last_handled_reset_at":           str("`reset_at` last handled (`lastHandledResetAt`)."),
			"storage_namespace":               str("Namespace of the release's Helm storage (`storageNamespace`)."),
			"history": schema.ListNestedAttribute{
				MarkdownDescription: "Releases this resource made, newest first, at most `max_history` (`history`).",
				Computed:            true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":           str("Release name."),
					"namespace":      str("Release namespace."),
					"version":        count("Revision."),
					"status":         str("Helm status: `deployed`, `failed`, `superseded`, `uninstalled`, …"),
					"action":         str("The Helm action that made the revision (`action`): `install`, `upgrade`, `rollback`; empty when it was made by another tool, or recorded before the provider recorded actions. With `engine = \"flux\"`, as helm-controller v1.5 and later record it."),
					"chart_name":     str("Chart name."),
					"chart_version":  str("Chart version."),
					"app_version":    str("App version."),
					"config_digest":  str("Digest of the values (`hmac-sha256:…`, keyed as `last_attempted_config_digest`)."),
					"digest":         str("Digest of the release in storage (`hmac-sha256:…`, keyed as `last_attempted_config_digest`): another digest means a change made outside this resource."),
					"chart_digest":   str("Digest of the chart archive the revision was made from, when its chart version does not carry it (Helm repositories; Flux's `ociDigest`); empty otherwise."),
					"first_deployed": str("When the release was first deployed (RFC 3339)."),
					"last_deployed":  str("When this revision was deployed (RFC 3339)."),
					"deleted":        str("When it was uninstalled (RFC 3339), or empty."),
					"test_hooks": schema.MapNestedAttribute{
						MarkdownDescription: "Test hooks run on the revision, by name.",
						Computed:            true,
						NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
							"last_started":   str("When the test started (RFC 3339)."),
							"last_completed": str("When it completed (RFC 3339)."),
							"phase":          str("`Succeeded` or `Failed`."),
						}},
					},
				}},
			},
		},
	}
}

// plannedActionDescription says what planned_action is: why a plan runs a
// Helm action, said in the plan's diff rather than as a warning each
// release of a module would raise for an ordinary change.
const plannedActionDescription = "Set by a plan that runs a Helm action: which one and why, e.g. `install`, or " +
	"`upgrade: values changed; chart content changed`, or `upgrade: the release is not ready: …` for a retry, or `reinstall: chart name changed from a to b; …` when a new chart name uninstalls the release first (`upgrade.chart_name_change_strategy`). " +
	"A refresh sets it to null (it describes a plan, not the release), so a plan that runs no Helm action (no change, " +
	"or drift corrected without a new revision) shows none; with `-refresh=false` such a plan keeps the last one unchanged. " +
	"Known after apply where the apply's own plan decides: an update of a chart no refresh pinned (write-only credentials, a release resumed), whose source may have moved by then. " +
	"Terraform-only (no HelmRelease field)."
