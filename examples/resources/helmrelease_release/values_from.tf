# values_from: values kept in ConfigMaps and Secrets of `namespace`, merged
# in order; `values` go over them, and entries with a target_path are set
# last (helm --set syntax).
resource "helmrelease_release" "grafana" {
  name      = "grafana"
  namespace = "monitoring"
  chart     = { repository = "https://charts.example.com/stable", name = "grafana", version = ">=7.0.0 <8.0.0" }

  values_from = [
    { kind = "ConfigMap", name = "grafana-defaults" },
    { kind = "ConfigMap", name = "grafana-${var.environment}", optional = true },
    { kind = "Secret", name = "grafana-admin", values_key = "password", target_path = "adminPassword" },
  ]
  values = {
    persistence = { enabled = true }
  }
}
