terraform {
  # moved blocks across resource types: Terraform >= 1.8.
  required_version = ">= 1.8"
  required_providers {
    # Both for the apply that moves: Terraform reads the old state with the
    # helm provider's schema. Remove helm afterwards.
    helm        = { source = "hashicorp/helm" }
    helmrelease = { source = "helmrelease/helmrelease" }
  }
}

# The provider reads KUBE_* variables, then KUBECONFIG.
provider "helmrelease" {}

variable "chart_repository" {
  description = "Helm repository serving the podinfo chart."
  type        = string
  default     = "https://stefanprodan.github.io/podinfo"
}
