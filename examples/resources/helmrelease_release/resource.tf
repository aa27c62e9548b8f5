# Quickstart: a chart from a Helm repository, with values; plan shows the
# objects the install creates, apply installs and waits for them.
resource "helmrelease_release" "podinfo" {
  name      = "podinfo"
  namespace = "apps"

  chart = {
    repository = "https://charts.example.com/stable"
    name       = "podinfo"
    version    = "6.5.*"
  }

  values = {
    replicaCount = 2
    ingress = {
      enabled = true
      hosts   = [{ host = "podinfo.example.com", paths = [{ path = "/", pathType = "Prefix" }] }]
    }
  }
  sensitive_values = yamlencode({ redis = { password = var.redis_password } })

  install = { create_namespace = true }
  test    = { enable = true }
}
