# Terraform >= 1.14: force one upgrade of the release without editing the
# configuration (as a new `force_at` does):
#   terraform apply -invoke=action.helmrelease_force.podinfo
#   terraform apply   # plans and runs the forced upgrade
resource "helmrelease_release" "podinfo" {
  name      = "podinfo"
  namespace = "apps"
  chart     = { repository = var.chart_repository, name = "podinfo", version = "6.*" }
  install   = { create_namespace = true }
}

action "helmrelease_force" "podinfo" {
  config {
    namespace = helmrelease_release.podinfo.storage_namespace
    name      = helmrelease_release.podinfo.release_name
  }
}
