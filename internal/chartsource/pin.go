package chartsource

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// Pin is a resolution to find again: what an earlier resolve of the same
// source returned (Terraform plans a resource again as it applies a plan,
// and the two plans, then the apply, must deploy the same chart). Resolve
// of a pinned source returns that chart, from the source or from the
// cache checked against its digest, however the source moved meanwhile:
// the version a range resolved, the manifest digest an OCI tag named, the
// commit a branch was at, the bucket's revision. What the source can no
// longer give (a version published again with another archive that the
// cache does not hold, a bucket's objects changed, a chart reference's
// artifact moved, a local chart edited) fails with ErrChangedSincePlan,
// naming the revision pinned and the one found.
type Pin struct {
	// Version is the revision resolved (Resolved.Version).
	Version string `json:"version"`
	// Digest is Resolved.Digest: the archive's or the OCI manifest's.
	Digest string `json:"digest,omitempty"`
	// SourceRevision is Resolved.SourceRevision (Git, buckets, chart
	// references).
	SourceRevision string `json:"sourceRevision,omitempty"`
	// Dependencies are the subcharts resolved (Resolved.Dependencies).
	Dependencies []Dependency `json:"dependencies,omitempty"`
	// Content is Resolved.ContentDigest: a local chart's files.
	Content string `json:"content,omitempty"`
}

// PinOf is the pin of what r resolved.
func PinOf(r *Resolved) *Pin {
	return &Pin{Version: r.Version, Digest: r.Digest, SourceRevision: r.SourceRevision, Dependencies: r.Dependencies, Content: r.ContentDigest}
}

// String names the pinned revision for messages: its version, with its
// digest or source revision when it has one.
func (p *Pin) String() string {
	s := p.Version
	switch {
	case p.SourceRevision != "":
		s += " from " + p.SourceRevision
	case p.Digest != "":
		s += " (digest " + p.Digest + ")"
	}
	return s
}

// baseVersion is the chart version of the pin, without the build metadata
// a revision adds (an OCI manifest's, a content digest's).
func (p *Pin) baseVersion(parts int) string {
	if parts == 0 {
		return p.Version
	}
	base, _, _ := strings.Cut(p.Version, "+")
	return base
}

// check fails with ErrChangedSincePlan when out is not the pinned chart.
func (p *Pin) check(src Source, out *Resolved) error {
	deps := func(d []Dependency) string {
		b, _ := json.Marshal(d)
		return string(b)
	}
	got := PinOf(out)
	if p.Content != "" && got.Content != p.Content {
		// A local chart: its files are the configuration's own, with no
		// history to read the planned ones from.
		return marked{fmt.Errorf("chart %s: its files changed since the plan read them (content %s then, %s now)", src.Name, shortHex(p.Content), shortHex(got.Content)), ErrLocalChartChanged}
	}
	same := got.Version == p.Version && (p.SourceRevision == "" || got.SourceRevision == p.SourceRevision) &&
		(p.Digest == "" || strings.TrimPrefix(got.Digest, "sha256:") == strings.TrimPrefix(p.Digest, "sha256:")) &&
		(p.Dependencies == nil || deps(got.Dependencies) == deps(p.Dependencies))
	if same {
		return nil
	}
	what := "the chart"
	if got.Version == p.Version && got.SourceRevision == p.SourceRevision && got.Digest != p.Digest {
		what = "the chart, published again,"
	}
	msg := fmt.Sprintf("chart %s%s: %s resolved to %s, and now resolves to %s", src.Name, src.where(), what, p, got)
	if deps(got.Dependencies) != deps(p.Dependencies) && p.Dependencies != nil {
		msg += fmt.Sprintf(" with dependencies %s (planned %s)", dependencyList(got.Dependencies), dependencyList(p.Dependencies))
	}
	return marked{fmt.Errorf("%s", msg), ErrChangedSincePlan}
}

func dependencyList(deps []Dependency) string {
	if len(deps) == 0 {
		return "none"
	}
	out := make([]string, len(deps))
	for i, d := range deps {
		out[i] = d.Name + " " + d.Version
	}
	return strings.Join(out, ", ")
}

// where names src's origin for messages: " of <repository>", " from Git
// <url>", " from bucket <name>", " of <chart reference>", or "" for a
// local chart.
func (src Source) where() string {
	switch {
	case src.ChartRef != nil:
		return " of " + src.ChartRef.String()
	case src.Git != nil:
		return " from Git " + src.Git.URL
	case src.Bucket != nil:
		return " from bucket " + src.Bucket.BucketName + " on " + src.Bucket.Endpoint
	case src.Repository != "":
		return " of " + src.Repository
	}
	return ""
}

// Fingerprint is a digest of what decides which chart src resolves to
// (not its credentials, nor a chart reference's current artifact): two
// sources of the same fingerprint resolve alike, so that a pin made for
// one applies to the other. A chart reference's is the object's alone:
// the repository, version and values files read from a HelmChart move
// with its artifact, which the pin is there to hold.
func (src Source) Fingerprint() string {
	if src.ChartRef != nil {
		b, _ := json.Marshal(struct{ ChartRef *ChartRef }{src.ChartRef})
		sum := sha256.Sum256(b)
		return hex.EncodeToString(sum[:])
	}
	type git struct {
		URL string
		Ref GitRef
	}
	var g *git
	if src.Git != nil {
		g = &git{URL: src.Git.URL, Ref: src.Git.Ref}
	}
	fields := struct {
		Name, Repository, Version, Strategy, Keyring string
		Git                                          *git
		Bucket                                       *Bucket
		ValuesFiles                                  []string
		IgnoreMissing, DependencyUpdate              bool
		Verify                                       *VerifyConfig
		ChartRef                                     *ChartRef
	}{
		Name: src.Name, Repository: src.Repository, Version: src.Version, Strategy: string(src.strategy()), Keyring: src.Keyring,
		Git: g, Bucket: src.Bucket, ValuesFiles: slices.Clone(src.ValuesFiles), IgnoreMissing: src.IgnoreMissingValuesFiles,
		DependencyUpdate: src.DependencyUpdate, Verify: src.VerifyConfig, ChartRef: src.ChartRef,
	}
	b, _ := json.Marshal(fields)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// pinned is src with its pin carried to the source's own pins: the
// revision of Git and buckets.
func (src Source) pinned() Source {
	p := src.Pin
	if p == nil || p.SourceRevision == "" {
		return src
	}
	switch {
	case src.Git != nil && src.Git.Pinned == "":
		g := *src.Git
		g.Pinned = p.SourceRevision
		src.Git = &g
	case src.Bucket != nil && src.Bucket.Pinned == "":
		b := *src.Bucket
		b.Pinned = p.SourceRevision
		src.Bucket = &b
	}
	return src
}

// indexEntry is the entry of the index that src names: the newest
// version its constraint allows, or the version pinned.
func (src Source) indexEntry(idx *Index) (*ChartVersion, error) {
	if src.Pin == nil {
		v, err := idx.Resolve(src.Name, src.Version)
		if err != nil {
			return nil, fmt.Errorf("repository %s: %w", src.Repository, err)
		}
		return v, nil
	}
	// A revision with parts has the chart version's build metadata
	// replaced by them.
	parts := src.strategy() == StrategyRevision || len(src.ValuesFiles) > 0
	base := func(v string) string {
		if !parts {
			return v
		}
		b, _, _ := strings.Cut(v, "+")
		return b
	}
	want := base(src.Pin.Version)
	all, err := idx.Versions(src.Name)
	if err != nil {
		return nil, fmt.Errorf("repository %s: %w", src.Repository, err)
	}
	for _, v := range all {
		if base(v.Version) == want {
			return v, nil
		}
	}
	return nil, marked{fmt.Errorf("chart %s of %s: version %s, which it resolved to, is no longer in the repository's index", src.Name, src.Repository, want), ErrChangedSincePlan}
}

// dependencyVersion is the version constraint dependency name resolves
// with: the version pinned, else constraint.
func (src Source) dependencyVersion(name, constraint string) string {
	if src.Pin != nil {
		for _, d := range src.Pin.Dependencies {
			if d.Name == name {
				return d.Version
			}
		}
	}
	return constraint
}

// Deployed is src taking the chart deployed, p (an imported or moved
// release's, as its record says), where src can give it and would resolve
// anew otherwise: so that the plan that takes a release over, and the
// apply's plan after it, resolve one chart however the source moves. A
// Helm repository's range that admits p's version names that version; an
// OCI range or tag that admits it is pinned to the manifest p records; a
// Git branch, semver range or reference name, or a bucket, to the
// revision p records; a chart reference to the version deployed, which
// its object's artifact must still be (it moves with its source). False,
// src unchanged, where src names one chart already, does not admit p's
// version, or p records too little (a release installed by another tool
// records no digest or revision).
func (src Source) Deployed(p *Pin) (Source, bool) {
	if p == nil || src.Reproducible() || src.DependencyUpdate {
		return src, false
	}
	switch {
	case src.ChartRef != nil:
		src.Pin = &Pin{Version: p.Version, Digest: p.Digest, SourceRevision: p.SourceRevision}
		return src, true
	case src.Git != nil || src.Bucket != nil:
		if p.SourceRevision == "" {
			return src, false
		}
		src.Pin = &Pin{Version: p.Version, SourceRevision: p.SourceRevision}
		return src, true
	case src.Repository == "":
		return src, false
	}
	base, _, _ := strings.Cut(p.Version, "+")
	v, err := semver.NewVersion(base)
	if err != nil {
		return src, false
	}
	constraint, _, _ := strings.Cut(src.Version, "@")
	if strings.TrimSpace(constraint) == "" {
		constraint = "*"
	}
	c, err := semver.NewConstraint(constraint)
	if err != nil || !c.Check(v) {
		return src, false
	}
	if !IsOCI(src.Repository) {
		src.Version = base
		return src, true
	}
	if p.Digest == "" {
		return src, false
	}
	src.Pin = &Pin{Version: p.Version, Digest: p.Digest}
	return src, true
}

// Reproducible reports whether a later resolve of src, on any machine,
// finds the chart a resolve finds now without a pin, as far as the
// configuration can say: a local chart, one version of a repository
// (HTTP or OCI), a Git tag or commit; not a version range, a Git branch,
// semver range or reference name, a bucket, a chart reference (whose
// artifact moves with its source), nor dependencies updated from their
// ranges, nor an OCI tag without its manifest digest ("1.2.3@sha256:…"):
// pushing a tag again is routine in OCI registries. A Helm repository's
// version published again under the same name, and a Git tag moved, are
// the cases an immutable name does not cover.
func (src Source) Reproducible() bool {
	switch {
	case src.ChartRef != nil || src.Bucket != nil || src.DependencyUpdate:
		return false
	case src.Git != nil:
		return src.Git.Ref.Commit != "" || (src.Git.Ref.Tag != "" && src.Git.Ref.Name == "" && src.Git.Ref.SemVer == "")
	case src.Repository == "":
		return true
	case IsOCI(src.Repository):
		_, _, byDigest := OCIDigestVersion(src.Version)
		return byDigest
	}
	return exactVersion(src.Version)
}

// exactVersion reports whether constraint names one version ("1.2.3",
// "=1.2.3", "v1.2.3"), not a range.
func exactVersion(constraint string) bool {
	v := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(constraint), "="))
	if v == "" || strings.ContainsAny(v, "*xX^~<>|, ") {
		return false
	}
	sv, err := semver.NewVersion(v)
	// "1" and "1.2" are ranges to semver's constraints.
	return err == nil && strings.Count(strings.TrimPrefix(sv.Original(), "v"), ".") >= 2
}
