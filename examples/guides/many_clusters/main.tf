# One configuration, many clusters: the provider names each cluster of the
# fleet, and a module installs a release into every one of them with
# for_each. Adding a cluster to var.clusters creates it and installs its
# release in the same apply.

variable "clusters" {
  description = "The fleet, by name: how to reach each cluster, and whether its apps are installed (set apps = false and apply before removing a cluster, so that its releases are uninstalled while it is still reachable)."
  type = map(object({
    kubeconfig = string
    apps       = optional(bool, true)
  }))
}

variable "chart_repository" {
  description = "Helm repository serving the podinfo chart."
  type        = string
  default     = "https://stefanprodan.github.io/podinfo"
}

# Stands for the module that creates each cluster (EKS, GKE, AKS, kind…):
# like a new cluster's endpoint and credentials, its output is known only
# after apply, so the first plan of a cluster's releases cannot look into it.
resource "terraform_data" "cluster" {
  for_each = var.clusters
  input    = { kubeconfig = each.value.kubeconfig }
}

provider "helmrelease" {
  # With a cluster module, e.g.:
  #   for name, c in module.eks : name => {
  #     host                   = c.cluster_endpoint
  #     cluster_ca_certificate = base64decode(c.cluster_certificate_authority_data)
  #     exec = {
  #       api_version = "client.authentication.k8s.io/v1beta1"
  #       command     = "aws"
  #       args        = ["eks", "get-token", "--cluster-name", c.cluster_name]
  #     }
  #   }
  clusters = {
    for name, c in terraform_data.cluster : name => { config_path = c.output.kubeconfig }
  }
}

module "podinfo" {
  source = "./modules/fleet-release"

  clusters         = toset([for name, c in var.clusters : name if c.apps])
  name             = "podinfo"
  namespace        = "apps"
  chart_repository = var.chart_repository
  values = {
    replicaCount = 1
  }
}

output "release_ids" {
  description = "The ID of each cluster's release: <cluster>:<storage_namespace>/<release_name>."
  value       = module.podinfo.ids
}
