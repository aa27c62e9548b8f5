# A release in another cluster: its kubeconfig is in a Secret of the
# release's namespace on the provider's cluster, as Cluster API writes them
# (<cluster>-kubeconfig, key "value").
resource "helmrelease_release" "cni" {
  name      = "cilium"
  namespace = "fleet"
  chart     = { repository = "https://charts.example.com/stable", name = "cilium", version = "1.16.*" }

  target_namespace  = "kube-system"
  storage_namespace = "kube-system"

  kube_config = {
    secret_ref = { name = "workload-1-kubeconfig", key = "value" }
  }
}
