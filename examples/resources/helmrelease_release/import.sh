# Import an existing release by <storage_namespace>/<release_name>. Its chart
# name, version and values are recovered; the next plan shows only what the
# configuration changes.
terraform import helmrelease_release.podinfo apps/podinfo
