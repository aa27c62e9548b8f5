terraform {
  required_version = ">= 1.8"
  required_providers {
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
