# The newest 6.x of podinfo in a Helm repository.
data "helmrelease_chart" "podinfo" {
  repository = var.chart_repository
  name       = "podinfo"
  version    = "6.*"
}

# The same chart in an OCI registry; without username, the provider's
# `registries` login for the host is used (none for a public chart).
data "helmrelease_chart" "podinfo_oci" {
  repository = var.oci_repository
  name       = "podinfo"
  version    = ">=6.0.0 <7.0.0"
  ca_file    = var.oci_ca_file
}

output "versions" {
  value = {
    repository = data.helmrelease_chart.podinfo.chart_version
    oci        = data.helmrelease_chart.podinfo_oci.chart_version # e.g. 6.7.1+1a2b3c4d5e6f
  }
}
