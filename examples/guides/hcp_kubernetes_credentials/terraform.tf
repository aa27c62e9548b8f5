terraform {
  required_providers {
    helmrelease = { source = "helmrelease/helmrelease" }
  }
}

# Written by HCP Terraform into every run of a workspace that sets
# TFC_KUBERNETES_PROVIDER_AUTH=true: the path of the token file of the
# run's workload identity (its plan and apply phases get one each), under
# "default", and under "aliases" one per TFC_KUBERNETES_PROVIDER_AUTH_<TAG>.
# Declare it as it is here; HCP Terraform sets its value.
variable "tfc_kubernetes_dynamic_credentials" {
  description = "Object containing Kubernetes dynamic credentials configuration"
  type = object({
    default = object({ token_path = string })
    aliases = map(object({ token_path = string }))
  })
}

variable "clusters" {
  description = "The API server URL and CA certificate (PEM) of each cluster, by the alias of its dynamic credentials: default and staging."
  type = map(object({
    host                   = string
    cluster_ca_certificate = string
  }))
}

variable "chart_repository" {
  description = "Helm repository serving the podinfo chart."
  type        = string
  default     = "https://stefanprodan.github.io/podinfo"
}
