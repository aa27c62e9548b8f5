# The configuration the state of this directory was applied with, by the
# provider before it ran Helm 4 (the test adds the terraform and provider
# blocks).
resource "helmrelease_release" "app" {
  name            = "app"
  namespace       = "helm3-fixture"
  chart           = { name = "./charts/app" }
  install         = { create_namespace = true }
  values          = { replicaCount = 1, ui = { message = "written by Helm 3" } }
  drift_detection = { mode = "enabled" }
}
