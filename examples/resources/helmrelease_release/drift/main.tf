# Drift detection: refresh compares every object of the release with the
# cluster; the plan shows drifted fields and deleted objects in `resources`,
# and apply corrects them without a new Helm revision. Fields other
# controllers own are ignored.
resource "helmrelease_release" "podinfo" {
  name      = "podinfo"
  namespace = "apps"
  chart     = { repository = var.chart_repository, name = "podinfo", version = "6.*" }
  install   = { create_namespace = true }

  drift_detection = {
    mode = "enabled"
    ignore = [
      # A HorizontalPodAutoscaler owns the replicas.
      { paths = ["/spec/replicas"], target = { kind = "Deployment" } },
      # A webhook injects its CA into every webhook configuration.
      { paths = ["/webhooks/0/clientConfig/caBundle"], target = { kind = "ValidatingWebhookConfiguration|MutatingWebhookConfiguration" } },
    ]
  }
}
