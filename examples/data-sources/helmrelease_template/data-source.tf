# Render a local chart with values composed as helmrelease_release composes
# them, and a Kustomize post-renderer.
data "helmrelease_template" "web" {
  name      = "web"
  namespace = "apps"
  chart = {
    name    = "${path.module}/charts/web"
    version = "~1.2"
  }

  values = {
    replicaCount = 2
    image        = { tag = "1.4.0" }
  }
  sensitive_values = { apiKey = var.api_key }

  values_from = [
    { kind = "ConfigMap", name = "web-defaults" },
    { kind = "Secret", name = "web-tls", values_key = "tls.crt", target_path = "tls.crt", optional = true },
  ]

  post_renderers = [{
    kustomize = {
      patches = [{
        target = { kind = "Deployment", name = "web" }
        patch  = jsonencode([{ op = "add", path = "/spec/template/spec/priorityClassName", value = "high" }])
      }]
      images = [{ name = "nginx", new_name = "registry.example.com/nginx" }]
    }
  }]
}

output "objects" {
  value = keys(data.helmrelease_template.web.resources)
}
