# Service account impersonation: every Helm action runs as
# system:serviceaccount:team-a:deployer, so the release can do only what
# that account's RBAC allows. The provider's credentials need the
# "impersonate" verb on it.
resource "helmrelease_release" "team_app" {
  name                 = "app"
  namespace            = "team-a"
  service_account_name = "deployer"
  chart                = { repository = "https://charts.example.com/stable", name = "app", version = "~1.0" }
}
