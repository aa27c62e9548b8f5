# Terraform >= 1.14: let a release whose remediation retries are exhausted
# be tried again without editing the configuration (as a new `reset_at`
# does):
#   terraform apply -invoke=action.helmrelease_reset.podinfo
#   terraform apply   # plans and runs the retry
resource "helmrelease_release" "podinfo" {
  name      = "podinfo"
  namespace = "apps"
  chart     = { repository = var.chart_repository, name = "podinfo", version = "6.*" }
  install   = { create_namespace = true, remediation = { retries = 3 } }
  upgrade   = { remediation = { retries = 3 } }
}

action "helmrelease_reset" "podinfo" {
  config {
    namespace = helmrelease_release.podinfo.storage_namespace
    name      = helmrelease_release.podinfo.release_name
  }
}
