package flux

import (
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
)

// templateKind is the kind of the object helm-controller generates from
// the HelmRelease's chart template: HelmChart (the default), or since
// helm-controller v1.7 OCIRepository (spec.chart.kind). Empty without a
// template.
func templateKind(hr *helmv2.HelmRelease) string {
	switch {
	case hr.Spec.Chart == nil:
		return ""
	case hr.Spec.Chart.Kind == "":
		return sourcev1.HelmChartKind
	}
	return hr.Spec.Chart.Kind
}

// generatedObject is the object helm-controller generated from the
// HelmRelease's chart template, as status.helmChart names it:
// "<namespace>/<name>" of a HelmChart, or since helm-controller v1.7
// "<kind>/<namespace>/<name>" (an OCIRepository). ok is false until the
// controller has named one.
func generatedObject(hr *helmv2.HelmRelease) (kind, namespace, name string, ok bool) {
	parts := strings.Split(hr.Status.HelmChart, "/")
	switch {
	case len(parts) == 2 && parts[0] != "" && parts[1] != "":
		return sourcev1.HelmChartKind, parts[0], parts[1], true
	case len(parts) == 3 && parts[0] != "" && parts[1] != "" && parts[2] != "":
		return parts[0], parts[1], parts[2], true
	}
	return "", "", "", false
}

// generatedHelmChart is the namespace and name of the HelmChart
// helm-controller generated from the HelmRelease's chart template; ok is
// false when it named none, or an object of another kind.
func generatedHelmChart(hr *helmv2.HelmRelease) (namespace, name string, ok bool) {
	kind, namespace, name, ok := generatedObject(hr)
	if !ok || kind != sourcev1.HelmChartKind {
		return "", "", false
	}
	return namespace, name, true
}
