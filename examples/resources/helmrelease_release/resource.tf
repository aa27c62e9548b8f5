# Quickstart: a chart from a Helm repository, with values; plan shows the
# objects the install creates, apply installs, waits for them and runs the
# chart's tests.
resource "helmrelease_release" "podinfo" {
  name      = "podinfo"
  namespace = "apps"

  chart = {
    repository = var.chart_repository
    name       = "podinfo"
    version    = "6.*"
  }

  values = {
    replicaCount = 2
    ui           = { message = "Deployed by Terraform" }
    ingress = {
      enabled = true
      hosts   = [{ host = "podinfo.example.com", paths = [{ path = "/", pathType = "ImplementationSpecific" }] }]
    }
  }

  install = { create_namespace = true }
  test    = { enable = true }
}
