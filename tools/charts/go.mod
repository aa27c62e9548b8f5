// Module charts pins the prometheus-community/helm-charts repository, a
// module of files only (no Go package), for its public Helm charts: the
// end-to-end tests install prometheus-operator-crds and a chart that
// renders its ServiceMonitor only where the cluster serves the kind.
module github.com/helmrelease/terraform-provider-helmrelease/tools/charts

go 1.26.0

require github.com/prometheus-community/helm-charts v0.0.0-20260828105119-ed5d7d9b5933
