package chartsource

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/fluxcd/pkg/git"
	"helm.sh/helm/v4/pkg/chart/common"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
)

// Errors of Resolve, to tell which part of a source is wrong.
var (
	// ErrLocalChart: a local chart that cannot be read or loaded.
	ErrLocalChart = errors.New("local chart not loadable")
	// ErrLocalChartChanged: a local chart's files are not those pinned
	// (Pin.Content). It is an ErrChangedSincePlan.
	ErrLocalChartChanged = fmt.Errorf("local chart %w", ErrChangedSincePlan)
	// ErrDependency: a Chart.yaml dependency that cannot be resolved.
	ErrDependency = errors.New("chart dependency not resolvable")
	// ErrValuesFile: a values file missing from the chart or not YAML.
	ErrValuesFile = errors.New("chart values file not usable")
)

// marked is err, which errors.Is also recognises as kind.
type marked struct{ err, kind error }

func (m marked) Error() string   { return m.err.Error() }
func (m marked) Unwrap() []error { return []error{m.err, m.kind} }

// Source is a chart as the configuration names it (spec.chart.spec).
type Source struct {
	// Name is the chart name in a repository, the chart's directory in a
	// Git repository (Git set), or the path of a local chart (directory or
	// .tgz) when Repository is empty.
	Name string
	// Repository is https://…, http://… (a Helm repository), oci://… (an
	// OCI registry) or empty (a local chart).
	Repository string
	// Git, when set, is the Git repository holding the chart at Name
	// (Repository is then empty).
	Git *Git
	// Bucket, when set, is the bucket holding the chart in the folder Name
	// (Repository and Git are then empty).
	Bucket *Bucket
	// Version is a semver constraint; empty is "*". Charts from Git have
	// the version their Chart.yaml says.
	Version string
	// ValuesFiles, when set, replace the chart's default values by these
	// files of the chart merged in order (values.yaml only if listed).
	ValuesFiles []string
	// IgnoreMissingValuesFiles skips values files the chart lacks instead
	// of failing (spec.chart.spec.ignoreMissingValuesFiles).
	IgnoreMissingValuesFiles bool
	// ReconcileStrategy says what makes a new revision; empty is Revision
	// for a local chart and ChartVersion for a repository.
	ReconcileStrategy ReconcileStrategy
	Auth              Auth
	// Keyring, when set, is a keyring file of public keys (GnuPG) that must
	// have signed the chart's provenance file (spec.chart.spec.verify, `helm
	// install --verify`): a chart without one, or not matching it, fails.
	// Chart directories cannot be verified.
	Keyring string
	// Verify, when set, is the signature an OCI chart's manifest must
	// have (cosign or notation), verified before the chart is pulled.
	Verify *Verification
	// VerifyConfig is the verification as the configuration wrote it,
	// which the release records (Recorded.Verify) for an import to read
	// back; it plays no part in resolving.
	VerifyConfig *VerifyConfig

	// ChartRef, when set, names the Flux object this source was read
	// from (spec.chartRef), which the release records; Artifact is then
	// that object's artifact, which the resolve must find.
	ChartRef *ChartRef
	Artifact *Artifact

	// DependencyUpdate makes the chart's charts/ match Chart.yaml as
	// `helm dependency update` does (see updateDependencies): for charts
	// read from a directory (a local one, in Git or in a bucket).
	DependencyUpdate bool
	// DependencyAuth, when set, is the login of a dependency's repository
	// (the provider's registries): a dependency gets no credentials of
	// its parent's.
	DependencyAuth func(repository string) Auth

	// Pin, when set, is the resolution to find again (see Pin).
	Pin *Pin

	// localRoot, when set, is the directory a local chart's file://
	// dependencies may not leave (a Git checkout).
	localRoot string
}

// Resolved is a chart ready to render.
type Resolved struct {
	Chart *chart.Chart
	// Dependencies are the chart's subcharts as it renders with them,
	// by name.
	Dependencies []Dependency
	// IndexName is the chart's name as the repository index lists it,
	// set when Chart is not loaded yet (Version).
	IndexName string
	// Version is the revision of the chart: its version with Parts as
	// build metadata ("1.2.0+5e1f0c9a2b7d"); the loaded chart's metadata
	// carries it too, so that the release records it and a new revision
	// is an upgrade.
	Version string
	// Parts are the digests in Version's build metadata, in order: the
	// OCI manifest (OCI), the chart's content (Revision strategy), the
	// values files in use (values files set).
	Parts      []RevisionPart
	AppVersion string
	// Digest is the archive's SHA-256 (repositories, .tgz) or the manifest
	// digest (OCI); empty for a chart directory.
	Digest string
	// ContentDigest is the SHA-256 of a local chart's files as loaded,
	// its dependencies' included (whatever the reconcile strategy): what
	// a pin of a local chart holds it to. Empty for other sources.
	ContentDigest string
	// LayerDigest is the OCI chart layer's digest ("sha256:…"): the
	// archive of an OCI chart, as source-controller stores it.
	LayerDigest string
	// TrackedDigest is Digest when Version does not carry it but a new
	// one must be an upgrade: a Helm repository's version published again
	// (ChartVersion strategy). Empty otherwise.
	TrackedDigest string
	// Versions are the versions available, newest first (repositories).
	Versions []string
	// StaleIndex is set when the repository failed and its index cached
	// on disk resolved the version.
	StaleIndex *StaleIndex
	// SourceRevision is the revision of the source the chart was read
	// from, as Flux's artifact revision: "main@sha1:<commit>" (Git).
	// Empty for repositories and local charts.
	SourceRevision string
	// Verified is the signature verification the chart passed (OCI
	// charts with Source.Verify).
	Verified *Verified
	// CacheRepaired are the entries of the cache, the chart's and its
	// dependencies', that did not match the digests naming them: fetched
	// again and replaced, never used.
	CacheRepaired []CacheRepair
	// RangedDependencies name the dependencies built from a version
	// range (charts/ lacked them and Chart.lock pins none): another
	// resolve may build newer ones.
	RangedDependencies []string
}

// ociArtifact reports whether src is an OCIRepository's artifact, pulled
// by the manifest digest of its revision; a HelmChart's artifact, even of
// an OCI HelmRepository, is a chart version.
func (src Source) ociArtifact() bool {
	return src.Artifact != nil && IsOCI(src.Repository) && (src.ChartRef == nil || src.ChartRef.Kind == KindOCIRepository)
}

// fromSource reports whether src reads its chart from a Flux source kind
// that is not a chart repository (Git, a bucket).
func (src Source) fromSource() bool { return src.Git != nil || src.Bucket != nil }

// Name is the resolved chart's name: its metadata's, else the index's;
// empty when neither is known.
func (r *Resolved) Name() string {
	switch {
	case r == nil:
		return ""
	case r.Chart != nil && r.Chart.Metadata != nil:
		return r.Chart.Metadata.Name
	}
	return r.IndexName
}

// tracksDigest reports whether a new archive digest of the same version
// is a new revision that the version does not show.
func (src Source) tracksDigest() bool {
	return src.Repository != "" && !IsOCI(src.Repository) && src.strategy() == StrategyChartVersion
}

// Resolve finds, fetches and loads the chart of src, builds its missing
// dependencies from their repositories, and applies its values files.
// A login of src.Auth gives its password first, and a new one when the
// repository refuses it.
func (r *Repositories) Resolve(ctx context.Context, src Source) (*Resolved, error) {
	return withLogin(ctx, src.Auth, func(auth Auth) (*Resolved, error) {
		src.Auth = auth
		return r.resolve(ctx, src)
	})
}

func (r *Repositories) resolve(ctx context.Context, src Source) (*Resolved, error) {
	if src.Verify != nil && (!IsOCI(src.Repository) || src.fromSource()) {
		// Never skipped silently: cosign and notation sign OCI manifests.
		return nil, marked{fmt.Errorf("%s verification needs a chart of an OCI registry (oci://), and chart %s is not one", src.Verify.Provider, src.Name), ErrSignature}
	}
	src = src.pinned()
	var out *Resolved
	var err error
	// deps is where the chart's file:// dependencies are found.
	deps := src
	switch {
	case src.Git != nil:
		var root string
		if out, root, err = r.resolveGit(ctx, src); err == nil {
			deps = Source{Name: filepath.Join(root, src.Name), localRoot: root}
		}
	case src.Bucket != nil:
		var root string
		if out, root, err = r.resolveBucket(ctx, src); err == nil {
			deps = Source{Name: filepath.Join(root, filepath.FromSlash(src.Name)), localRoot: root}
		}
	case src.Repository == "":
		out, err = resolveLocal(src)
	case IsOCI(src.Repository):
		var oci *OCIChart
		if oci, err = r.oci(ctx, src); err == nil {
			// As Flux does: the release's chart version carries the digest,
			// so that a tag pushed again is an upgrade.
			out = &Resolved{Chart: oci.Chart, Version: oci.Version, AppVersion: oci.Chart.Metadata.AppVersion, Digest: oci.Digest, LayerDigest: oci.LayerDigest, Versions: oci.Versions, Verified: oci.Verified,
				Parts: []RevisionPart{{Change: changeOCI, Hex: shortHex(oci.Digest)}}}
			if oci.Repaired != nil {
				out.CacheRepaired = append(out.CacheRepaired, *oci.Repaired)
			}
		}
	case strings.HasPrefix(src.Repository, "https://") || strings.HasPrefix(src.Repository, "http://"):
		out, err = r.resolveHTTP(ctx, src)
	default:
		return nil, fmt.Errorf("repository %q: use https://, http:// or oci://, or leave it empty for a local chart", src.Repository)
	}
	if err != nil {
		return nil, err
	}
	deps.DependencyUpdate, deps.DependencyAuth, deps.Pin = src.DependencyUpdate, src.DependencyAuth, src.Pin
	if src.DependencyUpdate {
		if src.Repository != "" || src.ChartRef != nil || !isDir(deps.Name) {
			return nil, marked{fmt.Errorf("chart %s: a dependency update needs the chart's directory (a local chart directory, or a chart from Git or a bucket), and the chart is an archive", src.Name), ErrDependency}
		}
		err = r.updateDependencies(ctx, out, deps)
	} else {
		err = r.buildDependencies(ctx, out, deps)
	}
	if err != nil {
		return nil, err
	}
	out.Dependencies = dependenciesOf(out.Chart)
	used, err := applyValuesFiles(out.Chart, src.ValuesFiles, src.IgnoreMissingValuesFiles)
	if err != nil {
		return nil, err
	}
	switch {
	case src.strategy() == StrategyRevision && src.Git != nil:
		// As source-controller's HelmChart: the commit's first 12 digits.
		out.Parts = append(out.Parts, RevisionPart{Change: changeCommit, Hex: shortHex(git.ExtractHashFromRevision(out.SourceRevision).String())})
	case src.strategy() == StrategyRevision && src.Bucket != nil:
		// The first 12 digits of the bucket's index digest, as HelmChart.
		out.Parts = append(out.Parts, RevisionPart{Change: changeBucket, Hex: shortHex(out.SourceRevision)})
	case src.strategy() == StrategyRevision:
		skip := make([]string, len(used))
		for i, f := range used {
			skip[i] = f.name
		}
		out.Parts = append(out.Parts, RevisionPart{Change: changeContent, Hex: shortHex(contentDigest(out.Chart, skip))})
	}
	if len(src.ValuesFiles) > 0 {
		out.Parts = append(out.Parts, RevisionPart{Change: changeValuesFiles, Hex: shortHex(valuesFilesDigest(used))})
	}
	out.Version = revision(out.Version, out.Parts)
	if src.Repository == "" && !src.fromSource() && src.ChartRef == nil {
		out.ContentDigest = contentDigest(out.Chart, nil)
	}
	switch {
	case src.ociArtifact():
		out.SourceRevision = src.Artifact.Revision
	case src.Artifact != nil:
		if p := src.Pin; p != nil && p.Version != src.Artifact.Revision {
			// The version pinned, fetched from the object's source, is no
			// longer the object's artifact: what the object gives now.
			return nil, p.check(src, &Resolved{Version: src.Artifact.Revision, SourceRevision: src.Artifact.Revision, Digest: src.Artifact.Digest})
		}
		if err := matchArtifact(out, src.Artifact); err != nil {
			return nil, err
		}
	}
	out.Chart.Metadata.Version = out.Version
	record(out, src)
	if src.tracksDigest() {
		out.TrackedDigest = out.Digest
	}
	if src.Pin != nil {
		if err := src.Pin.check(src, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Version resolves the revision src names without fetching or loading the
// chart where the source allows: from the index of a Helm repository, when
// the revision is the chart version alone (the result's Chart is then nil).
// OCI and local charts, and revisions that digest the chart's files, are
// resolved whole.
func (r *Repositories) Version(ctx context.Context, src Source) (*Resolved, error) {
	return withLogin(ctx, src.Auth, func(auth Auth) (*Resolved, error) {
		src.Auth = auth
		return r.version(ctx, src)
	})
}

func (r *Repositories) version(ctx context.Context, src Source) (*Resolved, error) {
	if src.Repository == "" || src.Git != nil || src.Bucket != nil || IsOCI(src.Repository) || src.strategy() == StrategyRevision || len(src.ValuesFiles) > 0 || src.Artifact != nil {
		return r.resolve(ctx, src)
	}
	idx, err := r.index(ctx, src.Repository, src.Auth)
	if err != nil {
		return nil, err
	}
	v, err := src.indexEntry(idx)
	if err != nil {
		return nil, err
	}
	if src.Pin != nil && src.Pin.Digest != "" && v.Digest != src.Pin.Digest {
		// Published again since the pin: the archive pinned, from the
		// cache, or an error saying so.
		return r.resolve(ctx, src)
	}
	name := src.Name
	if v.Metadata != nil && v.Name != "" {
		name = v.Name
	}
	return &Resolved{IndexName: name, Version: v.Version, AppVersion: v.AppVersion, Digest: v.Digest, TrackedDigest: v.Digest, Versions: versionsOf(idx, src.Name), StaleIndex: idx.Stale}, nil
}

func versionsOf(idx *Index, name string) []string {
	all, _ := idx.Versions(name)
	versions := make([]string, len(all))
	for i, cv := range all {
		versions[i] = cv.Version
	}
	return versions
}

func (r *Repositories) resolveHTTP(ctx context.Context, src Source) (*Resolved, error) {
	idx, err := r.index(ctx, src.Repository, src.Auth)
	if err != nil {
		return nil, err
	}
	v, err := src.indexEntry(idx)
	if err != nil {
		return nil, err
	}
	var b []byte
	var target *url.URL
	var repaired *CacheRepair
	if p := src.Pin; p != nil && p.Digest != "" && v.Digest != p.Digest {
		// Published again since the pin: only the archive of the pinned
		// digest will do, which the cache may still hold.
		if b = r.cachedArchive(p.Digest, src.Auth); b == nil {
			return nil, marked{fmt.Errorf("chart %s of %s: version %s was published again since it resolved (digest sha256:%s, then sha256:%s), and cache_dir does not hold the archive resolved then", src.Name, src.Repository, v.Version, v.Digest, p.Digest), ErrChangedSincePlan}
		}
		pinned := *v
		pinned.Digest = p.Digest
		v = &pinned
		if _, target, err = chartURLs(src.Repository, v); err != nil {
			return nil, err
		}
	} else if b, target, repaired, err = r.archive(ctx, src.Repository, v, src.Auth); err != nil {
		return nil, err
	}
	if src.Keyring != "" {
		prov, err := r.provenance(ctx, src.Repository, target, src.Auth)
		if err != nil {
			return nil, err
		}
		if err := verifyProvenance(src.Keyring, path.Base(target.Path), b, prov); err != nil {
			return nil, fmt.Errorf("repository %s: %w", src.Repository, err)
		}
	}
	c, err := load(src.Repository, v, b)
	if err != nil {
		return nil, err
	}
	out := &Resolved{Chart: c, Version: v.Version, AppVersion: v.AppVersion, Digest: v.Digest, Versions: versionsOf(idx, src.Name), StaleIndex: idx.Stale}
	if repaired != nil {
		out.CacheRepaired = []CacheRepair{*repaired}
	}
	return out, nil
}

func resolveLocal(src Source) (*Resolved, error) {
	info, err := os.Stat(src.Name)
	if err != nil {
		return nil, marked{fmt.Errorf("local chart: %w", err), ErrLocalChart}
	}
	var archive []byte
	var c *chart.Chart
	if info.IsDir() {
		if src.Keyring != "" {
			return nil, fmt.Errorf("%w: local chart %s is a directory; package and sign it (helm package --sign) to verify it", ErrProvenance, src.Name)
		}
		c, err = loader.LoadDir(src.Name)
	} else {
		// Read once: the bytes verified are the bytes loaded.
		if archive, err = os.ReadFile(src.Name); err != nil {
			return nil, marked{fmt.Errorf("local chart: %w", err), ErrLocalChart}
		}
		if src.Keyring != "" {
			prov, err := os.ReadFile(src.Name + ".prov")
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("local chart %s: %w", src.Name, err)
			}
			if err := verifyProvenance(src.Keyring, src.Name, archive, prov); err != nil {
				return nil, fmt.Errorf("local chart: %w", err)
			}
		}
		c, err = loader.LoadArchive(bytes.NewReader(archive))
	}
	if err != nil {
		return nil, marked{fmt.Errorf("local chart %s: %w", src.Name, err), ErrLocalChart}
	}
	if src.Version != "" {
		constraint, err := semver.NewConstraint(src.Version)
		if err != nil {
			return nil, fmt.Errorf("version constraint %q: %w", src.Version, err)
		}
		v, err := semver.NewVersion(c.Metadata.Version)
		if err != nil || !constraint.Check(v) {
			return nil, marked{fmt.Errorf("local chart %s has version %s, which does not satisfy %q", src.Name, c.Metadata.Version, src.Version), ErrNoMatchingVersion}
		}
	}
	out := &Resolved{Chart: c, Version: c.Metadata.Version, AppVersion: c.Metadata.AppVersion, Versions: []string{c.Metadata.Version}}
	if archive != nil {
		sum := sha256.Sum256(archive)
		out.Digest = hex.EncodeToString(sum[:])
	}
	return out, nil
}

// buildDependencies adds the dependencies of Chart.yaml that charts/ lacks,
// fetched from their repositories (file:// relative to a local chart), as
// source-controller builds a chart's dependencies and `helm dependency
// build` does: at the versions of Chart.lock when it is in step with
// Chart.yaml, else at the newest version each constraint allows.
func (r *Repositories) buildDependencies(ctx context.Context, out *Resolved, src Source) error {
	c := out.Chart
	present := map[string]bool{}
	for _, d := range c.Dependencies() {
		present[d.Name()] = true
	}
	locked := lockedVersions(c)
	for _, dep := range c.Metadata.Dependencies {
		if present[dep.Name] {
			continue
		}
		if dep.Repository == "" {
			return dependencyError(c, dep, errors.New("it is not in charts/ and names no repository"))
		}
		version, ok := locked[dep.Name]
		if !ok {
			version = dep.Version
			if !strings.HasPrefix(dep.Repository, "file://") && !exactVersion(version) {
				out.RangedDependencies = append(out.RangedDependencies, dep.Name)
			}
		}
		sub, err := r.dependency(ctx, out, src, dep, src.dependencyVersion(dep.Name, version))
		if err != nil {
			return err
		}
		c.AddDependency(sub)
	}
	return nil
}

// updateDependencies replaces the chart's subcharts of Chart.yaml's
// dependencies with the versions `helm dependency update` fetches: those
// of Chart.lock when it is in step with Chart.yaml (each dependency
// locked, from the same repository, at a version its constraint allows),
// else the newest version each constraint allows. A subchart in charts/
// that Chart.yaml does not name stays.
func (r *Repositories) updateDependencies(ctx context.Context, out *Resolved, src Source) error {
	c := out.Chart
	locked := lockedVersions(c)
	var subs []*chart.Chart
	named := map[string]bool{}
	for _, dep := range c.Metadata.Dependencies {
		if dep.Repository == "" {
			return dependencyError(c, dep, errors.New("a dependency update needs its repository (Chart.yaml names none)"))
		}
		version := dep.Version
		if v, ok := locked[dep.Name]; ok {
			version = v
		}
		version = src.dependencyVersion(dep.Name, version)
		sub, err := r.dependency(ctx, out, src, dep, version)
		if err != nil {
			return err
		}
		subs = append(subs, sub)
		named[dep.Name] = true
	}
	var kept []*chart.Chart
	for _, d := range c.Dependencies() {
		if !named[d.Name()] {
			kept = append(kept, d)
		}
	}
	c.SetDependencies(append(kept, subs...)...)
	return nil
}

// lockedVersions are the versions Chart.lock pins, by dependency name,
// when it is in step with Chart.yaml; nil otherwise.
func lockedVersions(c *chart.Chart) map[string]string {
	if c.Lock == nil || len(c.Lock.Dependencies) != len(c.Metadata.Dependencies) {
		return nil
	}
	locks := map[string]*chart.Dependency{}
	for _, l := range c.Lock.Dependencies {
		locks[l.Name] = l
	}
	out := map[string]string{}
	for _, dep := range c.Metadata.Dependencies {
		l, ok := locks[dep.Name]
		if !ok || l.Repository != dep.Repository {
			return nil
		}
		v, err := semver.NewVersion(l.Version)
		if err != nil {
			return nil
		}
		if dep.Version != "" {
			constraint, err := semver.NewConstraint(dep.Version)
			if err != nil || !constraint.Check(v) {
				return nil
			}
		}
		out[dep.Name] = l.Version
	}
	return out
}

// dependency fetches dep of the chart of parent at version (a
// constraint): file:// relative to a chart directory, else from its
// repository with the login src.DependencyAuth gives. The cache entries
// it repaired join parent's.
func (r *Repositories) dependency(ctx context.Context, parent *Resolved, src Source, dep *chart.Dependency, version string) (*chart.Chart, error) {
	c := parent.Chart
	var sub *Resolved
	var err error
	switch {
	case strings.HasPrefix(dep.Repository, "file://"):
		if src.Repository != "" || !isDir(src.Name) {
			err = errors.New("file:// dependencies resolve only for chart directories")
			break
		}
		dir := filepath.Join(src.Name, strings.TrimPrefix(dep.Repository, "file://"))
		if src.localRoot != "" && !within(src.localRoot, dir) {
			err = errors.New("a file:// dependency may not leave the repository")
			break
		}
		sub, err = resolveLocal(Source{Name: dir, Version: version})
	default:
		var auth Auth
		if src.DependencyAuth != nil {
			auth = src.DependencyAuth(dep.Repository)
		}
		sub, err = r.Resolve(ctx, Source{Name: dep.Name, Repository: dep.Repository, Version: version, Auth: auth})
	}
	if err != nil {
		return nil, dependencyError(c, dep, err)
	}
	parent.CacheRepaired = append(parent.CacheRepaired, sub.CacheRepaired...)
	if len(sub.Parts) > 0 {
		// A subchart as published, as Helm's dependency build fetches it:
		// the digests of a revision are the release's chart's only.
		sub.Chart.Metadata.Version, _, _ = strings.Cut(sub.Version, "+")
	}
	return sub.Chart, nil
}

func dependencyError(c *chart.Chart, dep *chart.Dependency, err error) error {
	return marked{fmt.Errorf("chart %s: dependency %s %s from %q cannot be resolved: %w", c.Name(), dep.Name, dep.Version, dep.Repository, err), ErrDependency}
}

// Dependency is a subchart of a resolved chart.
type Dependency struct {
	Name, Version string
}

// dependenciesOf are c's subcharts, sorted by name.
func dependenciesOf(c *chart.Chart) []Dependency {
	var out []Dependency
	for _, d := range c.Dependencies() {
		if d.Metadata != nil {
			out = append(out, Dependency{Name: d.Name(), Version: d.Metadata.Version})
		}
	}
	slices.SortFunc(out, func(a, b Dependency) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// within reports whether path is root or under it (both clean).
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func isDir(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}

// applyValuesFiles replaces the chart's default values by files, merged in
// order with later files overriding earlier ones (spec.chart.spec.valuesFiles),
// and returns the files used. A file the chart lacks is an error, or
// skipped with ignoreMissing.
func applyValuesFiles(c *chart.Chart, files []string, ignoreMissing bool) ([]valuesFile, error) {
	if len(files) == 0 {
		return nil, nil
	}
	contents := map[string][]byte{}
	for _, f := range append(c.Raw, c.Files...) {
		contents[f.Name] = f.Data
	}
	merged := map[string]any{}
	used := make([]valuesFile, 0, len(files))
	for _, name := range files {
		data, ok := contents[valuesFileName(name)]
		if !ok && ignoreMissing {
			continue
		}
		if !ok {
			return nil, marked{fmt.Errorf("chart %s has no values file %q", c.Name(), name), ErrValuesFile}
		}
		values, err := common.ReadValues(data)
		if err != nil {
			return nil, marked{fmt.Errorf("values file %q of chart %s: %w", name, c.Name(), err), ErrValuesFile}
		}
		merged = chartutil.MergeTables(values.AsMap(), merged)
		used = append(used, valuesFile{name: valuesFileName(name), data: data})
	}
	c.Values = merged
	return used, nil
}
