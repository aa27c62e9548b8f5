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
  sensitive_values = yamlencode({ apiKey = var.api_key })

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

# A chart from a Helm repository, with credentials, extra values files of the
# chart and provenance verification.
data "helmrelease_template" "podinfo" {
  name = "podinfo"
  chart = {
    repository   = "https://charts.example.com/stable"
    name         = "podinfo"
    version      = "6.5.*"
    username     = "reader"
    password     = var.repository_password
    values_files = ["values.yaml", "values-production.yaml"]
    verify       = { keyring = "${path.module}/keys/release-team.gpg" }
  }
}

# A chart from an OCI registry: the version gets "+<12 hex digits>" of the
# manifest digest, so a tag pushed again is a new version. Credentials come
# from the provider's `registries` list for this host when none are given.
data "helmrelease_template" "cache" {
  name = "cache"
  chart = {
    repository = "oci://registry.example.com/charts"
    name       = "redis"
    version    = ">=18.0.0 <19.0.0"
  }
}

output "objects" {
  value = keys(data.helmrelease_template.web.resources)
}
