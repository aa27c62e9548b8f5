package provider

import (
	"github.com/hashicorp/terraform-plugin-framework-validators/boolvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Attribute schemas shared by helmrelease_template and helmrelease_release.

func valuesFromAttribute() schema.ListNestedAttribute {
	return schema.ListNestedAttribute{
		MarkdownDescription: "ConfigMaps and Secrets in `namespace` to take values from (HelmRelease `spec.valuesFrom`), merged in order; `values` and `sensitive_values` are merged over them, and entries with a `target_path` are set last, over everything. Default: none.",
		Optional:            true,
		NestedObject: schema.NestedAttributeObject{
			Attributes: map[string]schema.Attribute{
				"kind": schema.StringAttribute{
					MarkdownDescription: "Kind of the object: " + valuesFromKinds.markdown() + " (`kind`).",
					Required:            true,
					Validators:          []validator.String{valuesFromKinds.validator()},
				},
				"name": schema.StringAttribute{
					MarkdownDescription: "Name of the object, in `namespace` (`name`).",
					Required:            true,
					Validators:          []validator.String{dnsSubdomain()},
				},
				"values_key": schema.StringAttribute{
					MarkdownDescription: "Data key holding the values YAML, or the single value when `target_path` is set (`valuesKey`). Default: `values.yaml`.",
					Optional:            true,
					Validators:          []validator.String{stringvalidator.RegexMatches(dataKeyPattern, "must be a ConfigMap/Secret data key: letters, digits, '-', '_' and '.'")},
				},
				"target_path": schema.StringAttribute{
					MarkdownDescription: "Path, in `helm --set` syntax, at which the value of `values_key` is set (`targetPath`); a value in quotes is set as a string. Default: none (the data is a values YAML document merged at the root).",
					Optional:            true,
					Validators:          []validator.String{targetPath()},
				},
				"optional": schema.BoolAttribute{
					MarkdownDescription: "Whether a missing object or key is ignored (`optional`); other errors still fail. Default: `false`.",
					Optional:            true,
				},
				"literal": schema.BoolAttribute{
					MarkdownDescription: "Whether the value of `values_key` is set at `target_path` as it is, a string, as `helm --set-literal` sets it: commas, brackets, braces, quotes and backslashes are part of the value, for a config file or a JSON document (`literal`, helm-controller v1.6 and later with `engine = \"flux\"`). Needs `target_path`. Default: `false` (the value is read with `--set` syntax).",
					Optional:            true,
					Validators:          []validator.Bool{boolvalidator.AlsoRequires(path.MatchRelative().AtParent().AtName("target_path"))},
				},
			},
		},
	}
}

func selectorAttribute(required bool, what string) schema.SingleNestedAttribute {
	regex := func(field, key string) schema.StringAttribute {
		return schema.StringAttribute{
			MarkdownDescription: "Regular expression matching the " + field + " of the objects (`target." + key + "`). Default: any.",
			Optional:            true,
			Validators:          []validator.String{regex()},
		}
	}
	return schema.SingleNestedAttribute{
		MarkdownDescription: what,
		Required:            required,
		Optional:            !required,
		Attributes: map[string]schema.Attribute{
			"group":     regex("API group", "group"),
			"version":   regex("API version", "version"),
			"kind":      regex("kind", "kind"),
			"name":      regex("name", "name"),
			"namespace": regex("namespace", "namespace"),
			"label_selector": schema.StringAttribute{
				MarkdownDescription: "Label selector expression the objects' labels must match, e.g. `app=web,tier!=db` (`target.labelSelector`). Default: any.",
				Optional:            true,
				Validators:          []validator.String{labelSelector()},
			},
			"annotation_selector": schema.StringAttribute{
				MarkdownDescription: "Label selector expression the objects' annotations must match (`target.annotationSelector`). Default: any.",
				Optional:            true,
				Validators:          []validator.String{labelSelector()},
			},
		},
	}
}

func postRenderersAttribute() schema.ListNestedAttribute {
	return schema.ListNestedAttribute{
		MarkdownDescription: "Post-renderers applied in order to the rendered manifest (HelmRelease `spec.postRenderers`), each either `kustomize` (Flux's) or `exec` (a command, as Helm's `--post-renderer` and the helm provider's `postrender` run). Which hooks are post-rendered: see `post_render_strategy` of `helmrelease_release`. Default: none.",
		Optional:            true,
		NestedObject: schema.NestedAttributeObject{
			Attributes: map[string]schema.Attribute{
				"exec": postRenderExecAttribute(),
				"kustomize": schema.SingleNestedAttribute{
					MarkdownDescription: "Kustomize directives (`kustomize`). Exactly one of `kustomize` and `exec`. Default: none.",
					Optional:            true,
					Attributes: map[string]schema.Attribute{
						"patches": schema.ListNestedAttribute{
							MarkdownDescription: "Strategic merge or JSON 6902 patches, each with an optional target (`patches`). Default: none.",
							Optional:            true,
							NestedObject: schema.NestedAttributeObject{
								Attributes: map[string]schema.Attribute{
									"patch": schema.StringAttribute{
										MarkdownDescription: "The patch, YAML or JSON: an object (strategic merge) or a list of operations (JSON 6902) (`patches[].patch`).",
										Required:            true,
									},
									"target": selectorAttribute(false, "Objects the patch applies to. Default: the object named by a strategic merge patch."),
								},
							},
						},
						"patches_strategic_merge": schema.ListAttribute{
							MarkdownDescription: "Strategic merge patches naming their object (`patchesStrategicMerge`, deprecated in Flux: use `patches`). Default: none.",
							ElementType:         types.StringType,
							Optional:            true,
						},
						"patches_json6902": schema.ListNestedAttribute{
							MarkdownDescription: "JSON 6902 patches with a target (`patchesJson6902`, deprecated in Flux: use `patches`). Default: none.",
							Optional:            true,
							NestedObject: schema.NestedAttributeObject{
								Attributes: map[string]schema.Attribute{
									"target": selectorAttribute(true, "Objects the patch applies to."),
									"patch": schema.StringAttribute{
										MarkdownDescription: "The operations, as a YAML or JSON list, e.g. `jsonencode([{ op = \"add\", path = \"/spec/replicas\", value = 2 }])` (`patchesJson6902[].patch`).",
										Required:            true,
									},
								},
							},
						},
						"images": schema.ListNestedAttribute{
							MarkdownDescription: "Container image replacements (`images`). Default: none.",
							Optional:            true,
							NestedObject: schema.NestedAttributeObject{
								Attributes: map[string]schema.Attribute{
									"name":     schema.StringAttribute{MarkdownDescription: "Image name to replace, as written in the manifest without tag or digest (`images[].name`).", Required: true, Validators: []validator.String{stringvalidator.LengthAtLeast(1)}},
									"new_name": schema.StringAttribute{MarkdownDescription: "Replacement image name (`images[].newName`). Default: unchanged.", Optional: true},
									"new_tag":  schema.StringAttribute{MarkdownDescription: "Replacement tag (`images[].newTag`). Default: unchanged.", Optional: true},
									"digest": schema.StringAttribute{
										MarkdownDescription: "Replacement digest (`sha256:…`), which takes precedence over `new_tag` (`images[].digest`). Default: none.",
										Optional:            true,
										Validators:          []validator.String{stringvalidator.RegexMatches(digestPattern, "must be a digest like sha256:<64 hex digits>")},
									},
								},
							},
						},
					},
				},
			},
		},
		Validators: []validator.List{listvalidator.SizeAtLeast(1)},
	}
}

// postRenderExecAttribute is post_renderers[].exec, which has no
// HelmRelease field: helm-controller runs no commands.
func postRenderExecAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: "A command the rendered manifest is piped through, with Helm's contract for post-renderers: the manifest on standard input, the post-rendered manifest on standard output; a non-zero exit, or no output, fails the plan with what the command wrote on standard error, from which the values of `env`, the `data` and `stringData` of the Secrets in the manifest it was given, the sensitive values and the provider's credentials are redacted. It is stopped when Terraform is interrupted. " +
			"It runs on the machine running Terraform, directly (never through a shell), at every plan and apply, with the provider's environment minus the variables named `KUBE_*`, `TF_*` (Terraform's variables and registry tokens) and `PLUGIN_*`, plus `env`. " +
			"The plan shows the objects as the command rewrote them. What it runs is part of the post-renderers' digest (`status.observed_post_renderers_digest`): `command`, `args`, `env` (keyed), and the content of the program `command` resolves to and of every argument naming a regular file, so an edited script or binary is planned as an upgrade; what the program reads on its own (files it opens, directories, the network) is not seen, and a plan that did not upgrade for another reason does not run it again. A saved plan whose program changed before its apply fails with \"Post-renderer program changed since the plan\" and deploys nothing. " +
			"No HelmRelease field: helm-controller runs no commands, so `engine = \"flux\"` refuses it. `moved` from `helm_release` turns its `postrender` into one. Default: none.",
		Optional: true,
		Attributes: map[string]schema.Attribute{
			"command": schema.StringAttribute{
				MarkdownDescription: "The executable: a path (relative to the directory Terraform runs in; `\"${path.module}/bin/label\"`), or a name looked up in `PATH` (`\"yq\"`). Required.",
				Required:            true,
				Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
			},
			"args": schema.ListAttribute{
				MarkdownDescription: "Its arguments, each passed as it is (no shell expansion). Default: none.",
				ElementType:         types.StringType,
				Optional:            true,
			},
			"env": schema.MapAttribute{
				MarkdownDescription: "Environment variables set for it, over the inherited ones. Sensitive: shown as such in plans. Default: none.",
				ElementType:         types.StringType,
				Optional:            true,
				Sensitive:           true,
			},
			"timeout": schema.StringAttribute{
				MarkdownDescription: "Time one run may take, a Go duration (`30s`). Default: `1m`.",
				Optional:            true,
				Validators:          []validator.String{duration()},
			},
		},
	}
}

func commonMetadataAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: "Labels and annotations added to every object of the release (HelmRelease `spec.commonMetadata`). Default: none.",
		Optional:            true,
		Attributes: map[string]schema.Attribute{
			"labels": schema.MapAttribute{
				MarkdownDescription: "Labels (`labels`). Default: none.", ElementType: types.StringType, Optional: true,
				Validators: []validator.Map{mapvalidator.KeysAre(qualifiedName("label key")), mapvalidator.ValueStringsAre(labelValue())},
			},
			"annotations": schema.MapAttribute{
				MarkdownDescription: "Annotations (`annotations`). Default: none.", ElementType: types.StringType, Optional: true,
				Validators: []validator.Map{mapvalidator.KeysAre(qualifiedName("annotation key"))},
			},
		},
	}
}
