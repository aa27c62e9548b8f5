// Package chartsource resolves charts from their sources: Helm HTTP
// repositories, OCI registries and local paths.
package chartsource

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v3/pkg/repo"
	"sigs.k8s.io/yaml"
)

// ChartVersion is one version of a chart in a repository index.
type ChartVersion = repo.ChartVersion

// ErrChartNotFound: the index has no chart of that name.
var ErrChartNotFound = errors.New("chart not found in repository")

// ErrNoMatchingVersion: no version of the chart satisfies the constraint.
var ErrNoMatchingVersion = errors.New("no chart version matches the constraint")

// Index is a repository index (index.yaml) of which only the charts asked
// for are parsed. Large repositories publish indexes of tens of megabytes;
// decoding one whole costs many times its size in memory, while a release
// needs the entries of one chart. The index is scanned once for where each
// chart's entries start and end; a chart's entries are decoded on first use.
// Safe for concurrent use.
type Index struct {
	raw []byte
	// sections maps a chart name to its entries' byte range in raw.
	sections map[string][2]int

	mu     sync.Mutex
	parsed map[string][]*ChartVersion
}

// ParseIndex scans an index. An index not laid out as Helm writes it (the
// entries of each chart under a two-space indented key of "entries:", as
// every Helm and chart-releaser index is) is decoded whole instead.
func ParseIndex(raw []byte) (*Index, error) {
	idx := &Index{raw: raw, parsed: map[string][]*ChartVersion{}}
	sections, ok := scanSections(raw)
	if ok {
		idx.sections = sections
		return idx, nil
	}
	var whole struct {
		APIVersion string                     `json:"apiVersion"`
		Entries    map[string][]*ChartVersion `json:"entries"`
	}
	if err := yaml.Unmarshal(raw, &whole); err != nil {
		return nil, fmt.Errorf("repository index is not valid YAML: %w", err)
	}
	if whole.APIVersion == "" {
		return nil, errors.New("repository index has no apiVersion: it is not a Helm repository index")
	}
	for name, versions := range whole.Entries {
		idx.parsed[name] = clean(name, versions)
	}
	idx.raw = nil
	return idx, nil
}

// scanSections finds, line by line, the top-level "apiVersion:" and
// "entries:" keys and the chart keys indented by two spaces under the
// latter. ok is false when the layout is not recognised.
func scanSections(raw []byte) (map[string][2]int, bool) {
	sections := map[string][2]int{}
	inEntries, sawAPIVersion := false, false
	current, start := "", 0
	closeSection := func(end int) {
		if current != "" {
			sections[current] = [2]int{start, end}
			current = ""
		}
	}
	for pos := 0; pos < len(raw); {
		end := bytes.IndexByte(raw[pos:], '\n')
		if end < 0 {
			end = len(raw)
		} else {
			end += pos
		}
		line := bytes.TrimRight(raw[pos:end], "\r")
		switch {
		case len(line) == 0 || line[0] == '#':
		case line[0] != ' ':
			// A top-level key.
			closeSection(pos)
			inEntries = bytes.Equal(bytes.TrimSpace(line), []byte("entries:"))
			if bytes.HasPrefix(line, []byte("apiVersion:")) {
				sawAPIVersion = true
			}
			if line[0] == '{' || line[0] == '[' {
				return nil, false
			}
		case inEntries && len(line) > 2 && line[0] == ' ' && line[1] == ' ' && line[2] != ' ' && line[2] != '-':
			// A chart key under entries.
			closeSection(pos)
			key := bytes.TrimSpace(line)
			if !bytes.HasSuffix(key, []byte(":")) {
				return nil, false
			}
			name := string(bytes.Trim(key[:len(key)-1], `"'`))
			if name == "" {
				return nil, false
			}
			current, start = name, end+1
		}
		pos = end + 1
	}
	closeSection(len(raw))
	return sections, sawAPIVersion
}

// Versions returns the versions of chart name, newest first. Entries
// without a valid version or URL are left out, as Helm does.
func (i *Index) Versions(name string) ([]*ChartVersion, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if v, ok := i.parsed[name]; ok {
		return v, nil
	}
	span, ok := i.sections[name]
	if !ok {
		return nil, marked{fmt.Errorf("no chart named %q in the index", name), ErrChartNotFound}
	}
	var versions []*ChartVersion
	if err := yaml.Unmarshal(i.raw[span[0]:min(span[1], len(i.raw))], &versions); err != nil {
		return nil, fmt.Errorf("repository index entries of chart %q are not valid YAML: %w", name, err)
	}
	cleaned := clean(name, versions)
	i.parsed[name] = cleaned
	return cleaned, nil
}

// Names returns the names of the charts of the index, sorted.
func (i *Index) Names() []string {
	i.mu.Lock()
	defer i.mu.Unlock()
	names := make([]string, 0, len(i.sections)+len(i.parsed))
	for n := range i.sections {
		names = append(names, n)
	}
	for n := range i.parsed {
		if _, dup := i.sections[n]; !dup {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// Resolve returns the newest version of chart name that satisfies the
// semver constraint (empty is "*"). As in Helm, prereleases match only a
// constraint that names a prerelease (e.g. ">=1.0.0-0").
func (i *Index) Resolve(name, constraint string) (*ChartVersion, error) {
	if constraint == "" {
		constraint = "*"
	}
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return nil, fmt.Errorf("version constraint %q: %w", constraint, err)
	}
	versions, err := i.Versions(name)
	if err != nil {
		return nil, err
	}
	for _, v := range versions {
		sv, err := semver.NewVersion(v.Version)
		if err != nil {
			continue
		}
		if c.Check(sv) {
			return v, nil
		}
	}
	return nil, marked{fmt.Errorf("chart %q has no version matching %q (newest: %s)", name, constraint, newest(versions)), ErrNoMatchingVersion}
}

func newest(versions []*ChartVersion) string {
	if len(versions) == 0 {
		return "none"
	}
	return versions[0].Version
}

// clean drops entries Helm would not use and sorts the rest newest first.
func clean(name string, versions []*ChartVersion) []*ChartVersion {
	out := versions[:0]
	for _, v := range versions {
		if v == nil || v.Metadata == nil || v.Removed || len(v.URLs) == 0 {
			continue
		}
		if _, err := semver.NewVersion(v.Version); err != nil {
			continue
		}
		if v.Name == "" {
			v.Name = name
		}
		out = append(out, v)
	}
	sort.SliceStable(out, func(a, b int) bool {
		va, _ := semver.NewVersion(out[a].Version)
		vb, _ := semver.NewVersion(out[b].Version)
		return va.GreaterThan(vb)
	})
	return out
}
