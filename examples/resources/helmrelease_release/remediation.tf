# Remediation: a failed install is uninstalled and retried three times; a
# failed upgrade (or failed test) is rolled back and retried twice. When the
# retries are exhausted, plans are empty with a warning until the chart or
# values change, or reset_at gets a new value.
resource "helmrelease_release" "api" {
  name      = "api"
  namespace = "apps"
  chart     = { repository = "oci://registry.example.com/charts", name = "api", version = "~2.4" }
  timeout   = "10m"

  install = {
    remediation = { retries = 3 }
  }
  upgrade = {
    cleanup_on_fail = true
    remediation     = { retries = 2, strategy = "rollback" }
  }
  test = {
    enable  = true
    filters = [{ name = "api-smoke-test" }]
  }
  rollback = { cleanup_on_fail = true }

  # Bump to retry after fixing the cause, or to force one upgrade.
  reset_at = var.api_reset_token
  force_at = var.api_force_token
}
