# The default credentials: TFC_KUBERNETES_PROVIDER_AUTH=true and
# TFC_KUBERNETES_WORKLOAD_IDENTITY_AUDIENCE=<the audience the cluster's
# OIDC configuration expects>. The token file is read when the provider
# is configured, in each phase of the run: the plan reads the cluster with
# the plan phase's identity, the apply writes with the apply phase's.
provider "helmrelease" {
  kubernetes = {
    host                   = var.clusters["default"].host
    cluster_ca_certificate = var.clusters["default"].cluster_ca_certificate
    token                  = file(var.tfc_kubernetes_dynamic_credentials.default.token_path)
  }
}

# A second cluster, with credentials of its own: the workspace sets
# TFC_KUBERNETES_PROVIDER_AUTH_STAGING=true and
# TFC_KUBERNETES_WORKLOAD_IDENTITY_AUDIENCE_STAGING, and HCP Terraform
# writes the token under aliases["STAGING"] in the case the tag is given.
provider "helmrelease" {
  alias = "staging"
  kubernetes = {
    host                   = var.clusters["staging"].host
    cluster_ca_certificate = var.clusters["staging"].cluster_ca_certificate
    token                  = file(var.tfc_kubernetes_dynamic_credentials.aliases["STAGING"].token_path)
  }
}

resource "helmrelease_release" "podinfo" {
  name      = "podinfo"
  namespace = "apps"
  chart     = { repository = var.chart_repository, name = "podinfo", version = "6.*" }
}

resource "helmrelease_release" "podinfo_staging" {
  provider  = helmrelease.staging
  name      = "podinfo"
  namespace = "team-a"
  chart     = { repository = var.chart_repository, name = "podinfo", version = "6.*" }
}
