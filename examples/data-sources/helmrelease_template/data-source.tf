# Render the chart beside this file with values composed as
# helmrelease_release composes them, and a Kustomize post-renderer.
data "helmrelease_template" "web" {
  name      = "web"
  namespace = "apps"
  chart = {
    name    = "${path.module}/charts/web"
    version = "~1.2"
  }

  values = {
    replicaCount = 2
    image        = { tag = "1.27.3" }
  }
  sensitive_values = yamlencode({ apiKey = var.api_key })

  # Read from the cluster when they exist.
  values_from = [
    { kind = "ConfigMap", name = "web-defaults", optional = true },
    { kind = "Secret", name = "web-tls", values_key = "tls.crt", target_path = "tls.crt", optional = true },
  ]

  post_renderers = [{
    kustomize = {
      patches = [{
        target = { kind = "Deployment", name = "web" }
        patch  = jsonencode([{ op = "add", path = "/spec/template/spec/terminationGracePeriodSeconds", value = 60 }])
      }]
      images = [{ name = "nginx", new_name = "mirror.gcr.io/library/nginx" }]
    }
  }]
}

# A chart from a Helm repository (add username and password for a private
# one, values_files for extra values files of the chart, verify for
# provenance).
data "helmrelease_template" "podinfo" {
  name = "podinfo"
  chart = {
    repository = var.chart_repository
    name       = "podinfo"
    version    = "6.*"
  }
}

output "objects" {
  value = concat(keys(data.helmrelease_template.web.resources), keys(data.helmrelease_template.podinfo.resources))
}
