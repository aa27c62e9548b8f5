# Terraform >= 1.14: `terraform query` lists the releases of a namespace;
# `terraform query -generate-config-out=releases.tf` writes an import block
# and a helmrelease_release block for each.
list "helmrelease_release" "apps" {
  provider         = helmrelease
  include_resource = true
  config {
    namespace      = "apps"
    label_selector = "status=deployed"
  }
}
