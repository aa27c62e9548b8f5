# Service account impersonation: every Helm action runs as
# system:serviceaccount:team-a:deployer, so the release can do only what
# that account's RBAC allows in team-a (here: Deployments, ReplicaSets,
# Services, ConfigMaps, Secrets and Pods). The provider's credentials need the
# "impersonate" verb on it.
resource "helmrelease_release" "team_app" {
  name                 = "podinfo"
  namespace            = "team-a"
  service_account_name = "deployer"
  chart                = { repository = var.chart_repository, name = "podinfo", version = "6.*" }
}
