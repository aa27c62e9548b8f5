# A release in another cluster: its kubeconfig is in a Secret of the
# release's namespace on the provider's cluster, as Cluster API writes them
# (<cluster>-kubeconfig, key "value").
resource "helmrelease_release" "podinfo" {
  name      = "podinfo"
  namespace = "fleet"
  chart     = { repository = var.chart_repository, name = "podinfo", version = "6.*" }

  target_namespace  = "podinfo"
  storage_namespace = "podinfo"
  install           = { create_namespace = true }

  kube_config = {
    secret_ref = { name = "workload-1-kubeconfig", key = "value" }
  }
}
