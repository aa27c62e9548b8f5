package provider

import (
	"maps"

	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func providerSchema() schema.Schema {
	return schema.Schema{
		MarkdownDescription: "The helmrelease provider installs, upgrades, tests and remediates Helm releases with the semantics of Flux's HelmRelease (helm-controller API v2).\n\n" +
			"Cluster settings are taken, in this order, from the `kubernetes` attributes, the `KUBE_*` environment variables, the `KUBECONFIG` environment variable, and the in-cluster service account. The default kubeconfig file (`~/.kube/config`) is never read unless named. Settings that are unknown at plan time (a cluster created in the same apply) do not fail the plan.",
		Attributes: map[string]schema.Attribute{
			"kubernetes": schema.SingleNestedAttribute{
				MarkdownDescription: "How to reach the default Kubernetes cluster, of the releases that set no `cluster`. Every attribute is optional; unset attributes fall back to their `KUBE_*` environment variable.",
				Optional:            true,
				Attributes:          kubernetesAttributes(true),
			},
			"clusters": schema.MapNestedAttribute{
				MarkdownDescription: "Named clusters, by name, each reached as its attributes say (the attributes of `kubernetes`; no `KUBE_*` or `KUBECONFIG` variable and no in-cluster account fills in for a named cluster). A release, data source, action or `terraform query` picks one with `cluster`; the names start their IDs (`<cluster>:<storage_namespace>/<release_name>`), so they are letters, digits, `-`, `_` and `.`. Values may be unknown at plan (a cluster created in the same apply): only the releases on that cluster wait for it. Credentials stay in the provider configuration, never in the state. Default: none.",
				Optional:            true,
				NestedObject:        schema.NestedAttributeObject{Attributes: kubernetesAttributes(false)},
				Validators: []validator.Map{mapvalidator.KeysAre(stringvalidator.RegexMatches(clusterNamePattern,
					"must start with a letter or digit and hold only letters, digits, '-', '_' and '.', e.g. prod-eu"))},
			},
			"registries": schema.ListNestedAttribute{
				MarkdownDescription: "Logins for OCI registries (`oci://` chart repositories, by host) and Helm repositories (`https://`, by URL prefix), used lazily when a chart is first resolved from them, for charts that set no `username` of their own. Each login is a `username` with a `password`, a `username` with an `exec` command printing a token that expires (ECR, GAR, ACR), or `docker_config` (OCI only); an OCI registry's entry may also, or only, set `plain_http`. Default: none (anonymous pulls; the machine's Docker and Helm credential files are never read unless `docker_config` says so).",
				Optional:            true,
				NestedObject: schema.NestedAttributeObject{
					Attributes: map[string]schema.Attribute{
						"url": schema.StringAttribute{
							MarkdownDescription: "Registry as `oci://host[:port]`, or Helm repository URL `https://host[:port][/path]` (`http://` too) whose charts' repositories it prefixes.",
							Required:            true,
							Validators:          []validator.String{stringvalidator.RegexMatches(loginURLPattern, "must be oci://host[:port] or an https:// (http://) repository URL without credentials, query or fragment, e.g. oci://registry.example.com or https://charts.example.com/stable")},
						},
						"username": schema.StringAttribute{
							MarkdownDescription: "User name sent with `password` or the `exec` token (ECR: `AWS`; GAR: `oauth2accesstoken`; ACR: `00000000-0000-0000-0000-000000000000`). Required with `password` and `exec`; not with `docker_config`, whose configuration names it. Default: none.",
							Optional:            true,
							Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
						},
						"password": schema.StringAttribute{
							MarkdownDescription: "Password or token. Never shown in plans or logs. Default: none.",
							Optional:            true,
							Sensitive:           true,
						},
						"exec": schema.SingleNestedAttribute{
							MarkdownDescription: "Command that prints a token to use as the password, e.g. `aws ecr get-login-password`: run the first time a chart of this login is resolved in a Terraform run, and again when the registry or repository refuses the token (it expired), never more often. Its standard output less surrounding white space is the token, on one line; a command that fails, or prints no token within a minute, is reported with the last line of its standard error. The token is kept in memory only: never in state, plans, logs or errors (with `engine = \"flux\"` it is written to the release's credentials Secret, where it expires; see the guide). Default: none.",
							Optional:            true,
							Attributes:          commandAttributes(nil),
						},
						"plain_http": schema.BoolAttribute{
							MarkdownDescription: "Reach this OCI registry over plain HTTP instead of HTTPS, for every chart and dependency from it (each chart's `chart.plain_http` as if set; with `engine = \"flux\"`, the OCIRepository's `insecure`): a registry on loopback or inside the network that serves no TLS, such as kind's local registry. An entry may set only `url` and `plain_http`, for a registry that needs no login. OCI registries only. Default: `false`.",
							Optional:            true,
						},
						"docker_config": schema.BoolAttribute{
							MarkdownDescription: "Take the registry's credentials from Docker's configuration, as `docker pull` does: `$DOCKER_CONFIG/config.json` (default `~/.docker/config.json`), its `auths`, `credsStore` and `credHelpers` (a `docker-credential-<name>` helper such as `ecr-login` or `gcloud` is run on each login to the registry). OCI registries only. Default: `false`.",
							Optional:            true,
						},
					},
					Validators: []validator.Object{registryLoginValidator{}},
				},
			},
			"cache_dir": schema.StringAttribute{
				MarkdownDescription: "Directory caching repository indexes and chart archives between runs. Nothing read from it is trusted for its name: an archive is checked against the digest that names it (the OCI manifest's layer digests, the repository index's digest) every time it is read, and one that does not match is fetched again, replaced and reported with a warning; Git and bucket checkouts are used only by the run that made them. Default: `terraform-provider-helmrelease` in the user's cache directory.",
				Optional:            true,
				Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
			},
		},
		Blocks: map[string]schema.Block{},
	}
}

// kubernetesAttributes are the connection settings of the kubernetes block
// and of each of clusters; withEnv says the KUBE_* variables fill in unset
// ones (the kubernetes block's only).
func kubernetesAttributes(withEnv bool) map[string]schema.Attribute {
	env := func(name string, how ...string) string {
		if !withEnv {
			return ""
		}
		if len(how) > 0 {
			return " Environment: `" + name + "` (" + how[0] + ")."
		}
		return " Environment: `" + name + "`."
	}
	sibling := func(name string) path.Expression { return path.MatchRelative().AtParent().AtName(name) }
	return map[string]schema.Attribute{
		"config_path": schema.StringAttribute{
			MarkdownDescription: "Path of a kubeconfig file (`~` expands to the home directory)." + env("KUBE_CONFIG_PATH") + " Default: none.",
			Optional:            true,
			Validators:          []validator.String{stringvalidator.LengthAtLeast(1), stringvalidator.ConflictsWith(sibling("kubeconfig"))},
		},
		"config_paths": schema.ListAttribute{
			MarkdownDescription: "Paths of kubeconfig files, merged as kubectl merges `KUBECONFIG`." + env("KUBE_CONFIG_PATHS", "separated by `:`") + " Default: none.",
			ElementType:         types.StringType,
			Optional:            true,
			Validators:          []validator.List{listvalidator.SizeAtLeast(1), listvalidator.ConflictsWith(sibling("kubeconfig"))},
		},
		"config_context": schema.StringAttribute{
			MarkdownDescription: "Context of the kubeconfig to use." + env("KUBE_CTX") + " Default: the kubeconfig's current context.",
			Optional:            true,
		},
		"kubeconfig": schema.StringAttribute{
			MarkdownDescription: "Raw kubeconfig YAML, for example the output of a cluster module. Default: none.",
			Optional:            true,
			Sensitive:           true,
		},
		"host": schema.StringAttribute{
			MarkdownDescription: "URL of the Kubernetes API server, e.g. `https://10.0.0.1:6443`." + env("KUBE_HOST") + " Default: the kubeconfig's.",
			Optional:            true,
		},
		"token": schema.StringAttribute{
			MarkdownDescription: "Bearer token." + env("KUBE_TOKEN") + " Default: none.",
			Optional:            true,
			Sensitive:           true,
		},
		"cluster_ca_certificate": schema.StringAttribute{
			MarkdownDescription: "PEM-encoded CA certificate of the API server." + env("KUBE_CLUSTER_CA_CERT_DATA") + " Default: the kubeconfig's, else the system roots.",
			Optional:            true,
		},
		"client_certificate": schema.StringAttribute{
			MarkdownDescription: "PEM-encoded client certificate." + env("KUBE_CLIENT_CERT_DATA") + " Default: none.",
			Optional:            true,
			Validators:          []validator.String{stringvalidator.AlsoRequires(sibling("client_key"))},
		},
		"client_key": schema.StringAttribute{
			MarkdownDescription: "PEM-encoded key of `client_certificate`." + env("KUBE_CLIENT_KEY_DATA") + " Default: none.",
			Optional:            true,
			Sensitive:           true,
			Validators:          []validator.String{stringvalidator.AlsoRequires(sibling("client_certificate"))},
		},
		"insecure": schema.BoolAttribute{
			MarkdownDescription: "Skip verification of the API server's certificate." + env("KUBE_INSECURE") + " Default: `false`.",
			Optional:            true,
		},
		"tls_server_name": schema.StringAttribute{
			MarkdownDescription: "Server name used to verify the API server's certificate." + env("KUBE_TLS_SERVER_NAME") + " Default: the host name of `host`.",
			Optional:            true,
		},
		"proxy_url": schema.StringAttribute{
			MarkdownDescription: "Proxy for requests to the API server (`http`, `https` or `socks5`)." + env("KUBE_PROXY_URL") + " Default: none.",
			Optional:            true,
		},
		"exec": schema.SingleNestedAttribute{
			MarkdownDescription: "Credential plugin run to get credentials (client.authentication.k8s.io), e.g. `aws eks get-token`. Default: none.",
			Optional:            true,
			Attributes: commandAttributes(map[string]schema.Attribute{
				"api_version": schema.StringAttribute{
					MarkdownDescription: "API version of the ExecCredential exchanged with the plugin.",
					Required:            true,
					Validators: []validator.String{stringvalidator.OneOf(
						"client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")},
				},
			}),
		},
		"qps": schema.Float64Attribute{
			MarkdownDescription: "Queries per second the provider allows itself to the API server (a client-side token bucket with `burst`). Default: unset, which limits to 50 per second, burst 100, unless the API server answers that it throttles with API Priority and Fairness (Kubernetes ≥ 1.20 by default): then the server's queues decide, as with controller-runtime and Flux, under a ceiling of 1,000 per second (burst 1,000) that bounds identities the server exempts from APF (`system:masters`). Setting `qps` or `burst` always limits to what is set.",
			Optional:            true,
			Validators:          []validator.Float64{float64validator.AtLeast(1)},
		},
		"burst": schema.Int64Attribute{
			MarkdownDescription: "Burst of queries allowed above `qps`. Default: `100` when `qps` is set; unset as `qps` says.",
			Optional:            true,
			Validators:          []validator.Int64{int64validator.AtLeast(1)},
		},
	}
}

// commandAttributes are the attributes of a command the provider runs
// (kubernetes.exec, a registries login's exec), with extra ones.
func commandAttributes(extra map[string]schema.Attribute) map[string]schema.Attribute {
	attrs := map[string]schema.Attribute{
		"command": schema.StringAttribute{
			MarkdownDescription: "Command to run, found on `PATH` unless a path.",
			Required:            true,
			Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
		},
		"args": schema.ListAttribute{
			MarkdownDescription: "Arguments of the command. Default: none.",
			ElementType:         types.StringType,
			Optional:            true,
		},
		"env": schema.MapAttribute{
			MarkdownDescription: "Environment variables added to the provider's for the command. Default: none.",
			ElementType:         types.StringType,
			Optional:            true,
		},
	}
	maps.Copy(attrs, extra)
	return attrs
}
