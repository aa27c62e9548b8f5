package chartsource

import (
	"encoding/json"
	"net/url"

	"helm.sh/helm/v3/pkg/chart"
)

// SourceAnnotation is the annotation of a resolved chart's metadata that
// records the source it was resolved from, as JSON (Recorded). Helm keeps
// a chart's metadata with every revision of a release, so the release
// says where its chart came from: import and `terraform query` write the
// chart block from it. Helm's storage object itself cannot hold it: its
// labels take no URL or version constraint, and Helm rewrites the object,
// dropping annotations, each time it updates a revision.
const SourceAnnotation = "helmrelease.terraform.io/chart-source"

// Recorded is the part of a Source a release records: what the
// configuration said, without credentials or files of the machine that
// applied it (a keyring, certificates).
type Recorded struct {
	Repository        string            `json:"repository,omitempty"`
	Name              string            `json:"name"`
	Version           string            `json:"version,omitempty"`
	ReconcileStrategy ReconcileStrategy `json:"reconcileStrategy,omitempty"`
	ValuesFiles       []string          `json:"valuesFiles,omitempty"`
	// IgnoreMissingValuesFiles is Source's.
	IgnoreMissingValuesFiles bool `json:"ignoreMissingValuesFiles,omitempty"`
}

// record writes src into the annotations of c.
func record(c *chart.Chart, src Source) {
	if c == nil || c.Metadata == nil {
		return
	}
	r := Recorded{Repository: withoutUserinfo(src.Repository), Name: src.Name, Version: src.Version, ReconcileStrategy: src.ReconcileStrategy, ValuesFiles: src.ValuesFiles,
		IgnoreMissingValuesFiles: src.IgnoreMissingValuesFiles}
	b, err := json.Marshal(r)
	if err != nil {
		return // strings only: cannot fail
	}
	if c.Metadata.Annotations == nil {
		c.Metadata.Annotations = map[string]string{}
	}
	c.Metadata.Annotations[SourceAnnotation] = string(b)
}

// RecordedSource reads the source a release's chart was resolved from;
// false when the chart records none (a release of another tool, or of a
// version of this provider before it recorded them).
func RecordedSource(c *chart.Chart) (Recorded, bool) {
	var r Recorded
	if c == nil || c.Metadata == nil {
		return r, false
	}
	raw, ok := c.Metadata.Annotations[SourceAnnotation]
	if !ok || json.Unmarshal([]byte(raw), &r) != nil || r.Name == "" {
		return Recorded{}, false
	}
	return r, true
}

// withoutUserinfo drops credentials written into a repository URL.
func withoutUserinfo(repository string) string {
	u, err := url.Parse(repository)
	if err != nil || u.User == nil {
		return repository
	}
	u.User = nil
	return u.String()
}
