# Post-renderers: Kustomize patches and image overrides applied to what the
# chart renders, in order, before common metadata and the origin labels.
resource "helmrelease_release" "ingress" {
  name      = "ingress"
  namespace = "ingress"
  chart     = { repository = "https://charts.example.com/stable", name = "ingress-nginx", version = "4.10.*" }

  post_renderers = [{
    kustomize = {
      patches = [
        {
          target = { kind = "Deployment", name = "ingress-ingress-nginx-controller" }
          patch = yamlencode([
            { op = "add", path = "/spec/template/spec/priorityClassName", value = "system-cluster-critical" },
          ])
        },
        {
          patch = yamlencode({
            apiVersion = "v1"
            kind       = "Service"
            metadata = {
              name        = "ingress-ingress-nginx-controller"
              annotations = { "service.beta.kubernetes.io/aws-load-balancer-type" = "nlb" }
            }
          })
        },
      ]
      images = [{ name = "registry.k8s.io/ingress-nginx/controller", new_name = "mirror.example.com/ingress-nginx/controller" }]
    }
  }]

  common_metadata = {
    labels = { team = "platform" }
  }
}
