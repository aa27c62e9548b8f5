terraform {
  required_version = ">= 1.14"
  required_providers {
    helmrelease = { source = "helmrelease/helmrelease" }
  }
}

# The provider reads KUBE_* variables, then KUBECONFIG.
provider "helmrelease" {}
