package chartsource

import (
	"errors"
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// ErrChartRef: the Flux object a chart reference names cannot give its
// chart (missing, not Ready, of a kind or setting not supported).
var ErrChartRef = errors.New("chart reference not usable")

// ChartRef names the Flux source object whose artifact is the chart
// (HelmRelease spec.chartRef): an OCIRepository or a HelmChart, managed
// elsewhere.
type ChartRef struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// The kinds a ChartRef names.
const (
	KindOCIRepository = "OCIRepository"
	KindHelmChart     = "HelmChart"
)

func (r ChartRef) String() string { return r.Kind + " " + r.Namespace + "/" + r.Name }

// Artifact is the artifact of the object a ChartRef names, which the
// resolve of the object's own source must find again: the chart is then
// the one helm-controller deploys.
type Artifact struct {
	// Revision is the artifact's revision: "<tag>@sha256:<hex>" or
	// "sha256:<hex>" (OCIRepository: the manifest pulled), or the chart
	// version (HelmChart), which becomes the resolved version.
	Revision string
	// Digest, when set, is the SHA-256 ("sha256:<hex>") the chart archive
	// must have: a HelmChart's artifact copied unchanged from its Helm
	// repository.
	Digest string
	// SourceRevision is the revision of the HelmChart's source it was
	// built from (status.observedSourceArtifactRevision); the resolved
	// SourceRevision when the source itself gives none.
	SourceRevision string
}

// ociPin is the manifest digest of an OCIRepository's artifact revision,
// and its tag ("" for a digest reference).
func (a *Artifact) ociPin() (tag, digest string, err error) {
	tag, digest, found := strings.Cut(a.Revision, "@")
	if !found {
		tag, digest = "", a.Revision
	}
	if !strings.HasPrefix(digest, "sha256:") || len(digest) != len("sha256:")+64 {
		return "", "", marked{fmt.Errorf("artifact revision %q names no sha256 manifest digest", a.Revision), ErrChartRef}
	}
	return tag, digest, nil
}

// checkOCITag refuses a chart whose version is not the semver tag it was
// pulled by, as helm-controller does ("artifact revision … does not match
// chart version").
func checkOCITag(tag, version string) error {
	tv, err := semver.NewVersion(strings.ReplaceAll(tag, "_", "+"))
	if err != nil {
		return nil // not a semver tag: any version
	}
	if v, err := semver.NewVersion(version); err != nil || !tv.Equal(v) {
		return marked{fmt.Errorf("artifact revision %s does not match chart version %s", tag, version), ErrChartRef}
	}
	return nil
}

// matchArtifact makes out the artifact of a HelmChart: its version is the
// artifact's revision, whose version without build metadata must be the
// chart's, and its archive (an OCI chart's layer) the artifact's digest
// where one is given.
func matchArtifact(out *Resolved, a *Artifact) error {
	chartCore, _, _ := strings.Cut(out.Version, "+")
	artifactCore, _, _ := strings.Cut(a.Revision, "+")
	if chartCore != artifactCore {
		return marked{fmt.Errorf("the source holds chart version %s, but the HelmChart's artifact is %s: source-controller has not built it yet", chartCore, a.Revision), ErrChartRef}
	}
	archive := out.Digest
	if out.LayerDigest != "" {
		archive = out.LayerDigest
	}
	if a.Digest != "" && archive != "" && strings.TrimPrefix(a.Digest, "sha256:") != strings.TrimPrefix(archive, "sha256:") {
		return marked{fmt.Errorf("chart %s %s was published again since source-controller fetched it (digest %s, the artifact's %s): wait for source-controller to build it again", out.Name(), chartCore, archive, a.Digest), ErrChartRef}
	}
	out.Version, out.Parts = a.Revision, nil
	if out.SourceRevision == "" {
		out.SourceRevision = a.SourceRevision
	}
	return nil
}
