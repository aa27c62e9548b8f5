# The demo `make demo` applies on the local test cluster: it renders the
# chart beside this file with the cluster's capabilities, as a release of it
# would be installed.
terraform {
  required_providers {
    helmrelease = { source = "helmrelease/helmrelease" }
  }
}

# Reads KUBECONFIG, which `make demo` points at the local cluster.
provider "helmrelease" {}

data "helmrelease_template" "hello" {
  name      = "hello"
  namespace = "demo"
  chart     = { name = "${path.module}/chart" }
  values = {
    replicas = 2
    greeting = "Hello from Terraform"
  }
  post_renderers = [{
    kustomize = {
      images = [{ name = "example.com/hello", new_tag = "2.0" }]
    }
  }]
}

output "objects" {
  value = keys(data.helmrelease_template.hello.resources)
}

output "deployment" {
  value = data.helmrelease_template.hello.resources["apps/v1/Deployment/demo/hello"]
}

output "notes" {
  value = data.helmrelease_template.hello.notes
}
