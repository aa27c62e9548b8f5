# Settings are optional: without any, the provider uses the KUBE_* variables,
# then KUBECONFIG, then the in-cluster service account.
provider "helmrelease" {
  kubernetes = {
    config_path    = var.kubeconfig
    config_context = var.kube_context
  }
}

# A cluster created in the same configuration: its outputs may be unknown
# at plan time, which the provider tolerates. A token from the cloud
# provider's data source works where no exec plugin can run (HCP Terraform).
provider "helmrelease" {
  alias = "workload"
  kubernetes = {
    host                   = var.cluster_endpoint
    cluster_ca_certificate = var.cluster_ca_certificate
    token                  = var.cluster_token
  }
  registries = [
    { url = "oci://registry.example.com", username = "bot", password = var.registry_token },
    # A token that expires: the command runs when a chart of the registry
    # is first resolved, and again when the registry refuses its token.
    {
      url      = "oci://123456789012.dkr.ecr.eu-west-1.amazonaws.com"
      username = "AWS"
      exec     = { command = "aws", args = ["ecr", "get-login-password", "--region", "eu-west-1"] }
    },
  ]
}
