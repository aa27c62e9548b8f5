# As `helm install -f values/base.yaml -f values/production.yaml`, then an
# object: maps merge at every depth, lists are replaced, later arguments
# win (Terraform >= 1.8).
resource "helmrelease_release" "podinfo" {
  name      = "podinfo"
  namespace = "apps"
  chart     = { repository = var.chart_repository, name = "podinfo", version = "6.*" }
  install   = { create_namespace = true }

  values = provider::helmrelease::merge_values(
    file("${path.module}/values/base.yaml"),
    file("${path.module}/values/${var.environment}.yaml"),
    { replicaCount = var.replicas },
  )
}

variable "environment" {
  type    = string
  default = "production"
}

variable "replicas" {
  type    = number
  default = 2
}
