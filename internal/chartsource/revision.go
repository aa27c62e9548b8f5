package chartsource

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
)

// ReconcileStrategy says what makes a new revision of a chart
// (spec.chart.spec.reconcileStrategy).
type ReconcileStrategy string

const (
	// StrategyChartVersion: a new chart version (OCI: a new manifest digest).
	StrategyChartVersion ReconcileStrategy = "ChartVersion"
	// StrategyRevision: any change of the chart's content, dependencies
	// and values files included.
	StrategyRevision ReconcileStrategy = "Revision"
)

// ReconcileStrategies are the strategies, for validators and descriptions.
var ReconcileStrategies = []ReconcileStrategy{StrategyChartVersion, StrategyRevision}

// strategy is the strategy of src: the configured one, else Revision for a
// local chart (an edit in the configuration's own chart must deploy) and
// ChartVersion for a repository or Git (Flux's default).
func (src Source) strategy() ReconcileStrategy {
	switch {
	case src.ReconcileStrategy != "":
		return src.ReconcileStrategy
	case src.Repository == "" && !src.fromSource():
		return StrategyRevision
	default:
		return StrategyChartVersion
	}
}

// RevisionPart is one identifier of a revision's build metadata: the first
// 12 hex digits of a digest, and what a change of it means.
type RevisionPart struct {
	// Change says in a few words what a new value means, for plans.
	Change string
	Hex    string
}

// What the identifiers of a revision stand for.
const (
	changeOCI         = "chart pushed again under the same tag"
	changeContent     = "chart content changed"
	changeValuesFiles = "values files changed"
	changeCommit      = "new commit"
	changeBucket      = "bucket objects changed"
)

// revision is version with parts as semver build metadata, dot-separated:
// "1.2.0+5e1f0c9a2b7d". Helm, Flux and the engine compare revisions as
// strings, so a new part value is a new revision.
func revision(version string, parts []RevisionPart) string {
	if len(parts) == 0 {
		return version
	}
	ids := make([]string, len(parts))
	for i, p := range parts {
		ids[i] = p.Hex
	}
	base, _, _ := strings.Cut(version, "+")
	return base + "+" + strings.Join(ids, ".")
}

// RevisionChanges says why revision from differs from r's: the chart
// version, or which part of the build metadata; nil when they are equal.
func (r *Resolved) RevisionChanges(from string) []string {
	if from == r.Version {
		return nil
	}
	fromBase, fromMeta, _ := strings.Cut(from, "+")
	toBase, _, _ := strings.Cut(r.Version, "+")
	if from == "" || fromBase != toBase {
		return []string{fmt.Sprintf("chart version %q → %q", from, r.Version)}
	}
	var old []string
	if fromMeta != "" {
		old = strings.Split(fromMeta, ".")
	}
	var out []string
	if len(old) == len(r.Parts) {
		for i, p := range r.Parts {
			if old[i] != p.Hex {
				out = append(out, p.Change)
			}
		}
	}
	if len(out) == 0 {
		// Another strategy or other values files: the parts do not line up.
		out = append(out, fmt.Sprintf("chart revision %q → %q", from, r.Version))
	}
	return out
}

func shortHex(digest string) string {
	_, hexPart, found := strings.Cut(digest, ":")
	if !found {
		hexPart = digest
	}
	if len(hexPart) > 12 {
		hexPart = hexPart[:12]
	}
	return hexPart
}

// contentDigest is the SHA-256 of every file of c and of its dependencies
// (as loaded: .helmignore applies), each under its path, skipping the top
// chart's files in skip (the values files in use, which have a part of
// their own).
func contentDigest(c *chart.Chart, skip []string) string {
	h := sha256.New()
	var walk func(c *chart.Chart, prefix string)
	walk = func(c *chart.Chart, prefix string) {
		files := slices.Clone(c.Raw)
		slices.SortFunc(files, func(a, b *common.File) int { return strings.Compare(a.Name, b.Name) })
		for _, f := range files {
			if prefix == "" && slices.Contains(skip, f.Name) {
				continue
			}
			// Length-prefixed, so that no two file sets hash alike.
			fmt.Fprintf(h, "%d:%s%s\n%d:", len(prefix)+len(f.Name), prefix, f.Name, len(f.Data))
			h.Write(f.Data)
		}
		deps := slices.Clone(c.Dependencies())
		slices.SortFunc(deps, func(a, b *chart.Chart) int { return strings.Compare(a.Name(), b.Name()) })
		for _, d := range deps {
			walk(d, prefix+"charts/"+d.Name()+"/")
		}
	}
	walk(c, "")
	return hex.EncodeToString(h.Sum(nil))
}

// valuesFilesDigest is the SHA-256 of the values files in use, in order,
// by name and content.
func valuesFilesDigest(used []valuesFile) string {
	h := sha256.New()
	for _, f := range used {
		fmt.Fprintf(h, "%d:%s\n%d:", len(f.name), f.name, len(f.data))
		h.Write(f.data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

type valuesFile struct {
	name string
	data []byte
}

// valuesFileName is the name of a values file in a chart's file list.
func valuesFileName(name string) string {
	return path.Clean(strings.TrimPrefix(filepath.ToSlash(name), "./"))
}
