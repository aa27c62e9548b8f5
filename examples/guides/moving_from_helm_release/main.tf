# The helm provider installed these two releases:
#
#   resource "helm_release" "podinfo" {
#     name       = "podinfo"
#     namespace  = "apps"
#     repository = "https://stefanprodan.github.io/podinfo"
#     chart      = "podinfo"
#     version    = "6.7.1"
#     values     = [yamlencode({ replicaCount = 2 })]
#   }
#
#   resource "helm_release" "app" {
#     name      = "app"
#     namespace = "apps"
#     chart     = "./charts/app"
#   }
#
# They move with no reinstall and no upgrade:

moved {
  from = helm_release.podinfo
  to   = helmrelease_release.podinfo
}

resource "helmrelease_release" "podinfo" {
  name      = "podinfo" # the release name of the helm_release
  namespace = "apps"    # its namespace
  chart = {
    repository = var.chart_repository
    name       = "podinfo"
    version    = "6.7.1"
  }
  values = { replicaCount = 2 }
}

moved {
  from = helm_release.app
  to   = helmrelease_release.app
}

resource "helmrelease_release" "app" {
  name      = "app"
  namespace = "apps"
  chart = {
    name = "${path.module}/charts/app"
    # As the helm provider did: upgrade when the chart's version changes.
    # Without it, the first apply upgrades the release once, to record the
    # digest of the chart's content that later edits are compared with.
    reconcile_strategy = "ChartVersion"
  }
}
