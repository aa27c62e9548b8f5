# The newest 6.5.x of podinfo in a Helm repository.
data "helmrelease_chart" "podinfo" {
  repository = "https://charts.example.com/podinfo"
  name       = "podinfo"
  version    = "6.5.*"
}

# A chart in an OCI registry; without username, the provider's
# `registries` login for the host is used.
data "helmrelease_chart" "podinfo_oci" {
  repository = "oci://registry.example.com/charts"
  name       = "podinfo"
  version    = ">=6.0.0 <7.0.0"
}

output "versions" {
  value = {
    repository = data.helmrelease_chart.podinfo.chart_version
    oci        = data.helmrelease_chart.podinfo_oci.chart_version # e.g. 6.5.4+1a2b3c4d5e6f
  }
}
