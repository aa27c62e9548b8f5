# Post-renderers: Kustomize patches and image overrides applied to what the
# chart renders, in order, before common metadata and the origin labels.
resource "helmrelease_release" "podinfo" {
  name      = "podinfo"
  namespace = "apps"
  chart     = { repository = var.chart_repository, name = "podinfo", version = "6.*" }
  install   = { create_namespace = true }

  post_renderers = [{
    kustomize = {
      patches = [
        {
          target = { kind = "Deployment", name = "podinfo" }
          patch = yamlencode([
            { op = "add", path = "/spec/template/spec/terminationGracePeriodSeconds", value = 60 },
          ])
        },
        {
          patch = yamlencode({
            apiVersion = "v1"
            kind       = "Service"
            metadata = {
              name        = "podinfo"
              annotations = { "service.beta.kubernetes.io/aws-load-balancer-type" = "nlb" }
            }
          })
        },
      ]
      # Pin the image whatever tag the chart version defaults to.
      images = [{ name = "ghcr.io/stefanprodan/podinfo", new_tag = "6.7.1" }]
    }
  }]

  common_metadata = {
    labels = { team = "platform" }
  }
}
