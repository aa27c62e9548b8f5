# The demo `make demo` applies on the local test cluster: a release of the
# chart beside this file, installed, tested for drift on every refresh, and
# remediated as helm-controller would. Run `terraform plan` again after
# `kubectl scale deployment hello -n demo --replicas 5` to see drift.
terraform {
  required_providers {
    helmrelease = { source = "helmrelease/helmrelease" }
  }
}

# Reads KUBECONFIG, which `make demo` points at the local cluster.
provider "helmrelease" {}

resource "helmrelease_release" "hello" {
  name      = "hello"
  namespace = "demo"
  chart     = { name = "${path.module}/chart" }
  values = {
    replicas = 2
    greeting = "Hello from Terraform"
  }
  post_renderers = [{
    kustomize = {
      images = [{ name = "ghcr.io/stefanprodan/podinfo", new_tag = "6.7.1" }]
    }
  }]
  install         = { create_namespace = true, remediation = { retries = 2 } }
  upgrade         = { remediation = { retries = 2 } }
  drift_detection = { mode = "enabled" }
}

output "objects" {
  value = keys(helmrelease_release.hello.resources)
}

output "status" {
  value = {
    ready    = helmrelease_release.hello.status.ready
    reason   = helmrelease_release.hello.status.reason
    revision = helmrelease_release.hello.status.history[0].version
  }
}
