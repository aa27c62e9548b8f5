# Terraform >= 1.14: run the release's tests now with
#   terraform apply -invoke=action.helmrelease_test.podinfo
# or after every change of the release, from an action trigger.
resource "helmrelease_release" "podinfo" {
  name      = "podinfo"
  namespace = "apps"
  chart     = { repository = var.chart_repository, name = "podinfo", version = "6.*" }
  install   = { create_namespace = true }
}

action "helmrelease_test" "podinfo" {
  config {
    namespace = helmrelease_release.podinfo.storage_namespace
    name      = helmrelease_release.podinfo.release_name
    timeout   = "10m"
  }
}

resource "terraform_data" "after_release" {
  input = helmrelease_release.podinfo.status.last_applied_revision
  lifecycle {
    action_trigger {
      events  = [after_create, after_update]
      actions = [action.helmrelease_test.podinfo]
    }
  }
}
