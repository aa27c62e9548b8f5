# values_from: values kept in ConfigMaps and Secrets of `namespace`, merged
# in order; `values` go over them, and entries with a target_path are set
# last (helm --set syntax). Here the ConfigMap podinfo-defaults (key
# values.yaml) and the Secret podinfo-ui (key message) exist in "apps";
# podinfo-<environment> may.
resource "helmrelease_release" "podinfo" {
  name      = "podinfo"
  namespace = "apps"
  chart     = { repository = var.chart_repository, name = "podinfo", version = "6.*" }

  values_from = [
    { kind = "ConfigMap", name = "podinfo-defaults" },
    { kind = "ConfigMap", name = "podinfo-${var.environment}", optional = true },
    { kind = "Secret", name = "podinfo-ui", values_key = "message", target_path = "ui.message" },
  ]
  values = {
    replicaCount = 2
  }
}

variable "environment" {
  description = "Environment whose ConfigMap of values, if any, applies."
  type        = string
  default     = "production"
}
