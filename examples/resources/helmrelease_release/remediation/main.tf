# Remediation: a failed install is uninstalled and retried three times; a
# failed upgrade (or failed test) is rolled back and retried twice. When the
# retries are exhausted, plans are empty with a warning until the chart or
# values change, or reset_at gets a new value.
resource "helmrelease_release" "podinfo" {
  name      = "podinfo"
  namespace = "apps"
  chart     = { repository = var.chart_repository, name = "podinfo", version = "~6.5" }
  timeout   = "10m"

  install = {
    create_namespace = true
    remediation      = { retries = 3 }
  }
  upgrade = {
    cleanup_on_fail = true
    remediation     = { retries = 2, strategy = "rollback" }
  }
  test     = { enable = true }
  rollback = { cleanup_on_fail = true }

  # Set to a new value to retry after fixing the cause, or to force one
  # upgrade.
  reset_at = var.reset_token
  force_at = var.force_token
}

variable "reset_token" {
  description = "Set to a new value (e.g. a date) to reset the failure counters."
  type        = string
  default     = null
}

variable "force_token" {
  description = "Set to a new value to force one install or upgrade."
  type        = string
  default     = null
}
