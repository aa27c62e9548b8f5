# Settings are optional: without any, the provider uses the KUBE_* variables,
# then KUBECONFIG, then the in-cluster service account.
provider "helmrelease" {
  kubernetes = {
    config_path    = "~/.kube/config"
    config_context = "kind-kind"
  }
}

# A cluster created in the same configuration: its outputs are unknown at
# plan time, which the provider tolerates.
provider "helmrelease" {
  alias = "eks"
  kubernetes = {
    host                   = module.eks.cluster_endpoint
    cluster_ca_certificate = base64decode(module.eks.cluster_certificate_authority_data)
    exec = {
      api_version = "client.authentication.k8s.io/v1"
      command     = "aws"
      args        = ["eks", "get-token", "--cluster-name", module.eks.cluster_name]
    }
  }
  registries = [{ url = "oci://registry.example.com", username = "bot", password = var.registry_token }]
}
