# Terraform >= 1.14: run the release's tests now with
#   terraform apply -invoke=action.helmrelease_test.web
# or after every change of the release, from an action trigger.
action "helmrelease_test" "web" {
  config {
    namespace = helmrelease_release.web.storage_namespace
    name      = helmrelease_release.web.release_name
    timeout   = "10m"
    filters   = [{ name = "web-smoke-test" }]
  }
}

resource "terraform_data" "after_release" {
  input = helmrelease_release.web.status.last_applied_revision
  lifecycle {
    action_trigger {
      events  = [after_create, after_update]
      actions = [action.helmrelease_test.web]
    }
  }
}
