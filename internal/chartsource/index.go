// Package chartsource resolves charts from their sources: Helm HTTP
// repositories, OCI registries (over TLS or plain HTTP), local directories
// and archives, Git repositories, S3-compatible buckets and the artifacts
// of Flux's chart_ref objects. It verifies what it fetched (pgp provenance,
// cosign and notation signatures), keeps archives, indexes and checkouts in
// a cache checked against their digests on every read, and versions a
// chart as helm-controller does (build metadata from its revision). It is
// the side of the Helm seam (see internal/helm) that reads charts with
// Helm's packages; a loaded chart is a helm.Chart.
package chartsource

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"sort"
	"sync"

	"github.com/Masterminds/semver/v3"
	repo "helm.sh/helm/v4/pkg/repo/v1"
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
// chart's entries start and end; a chart's entries are decoded on first use,
// read from memory or, for a cached index, from its file, so that the index
// itself is never held whole. Safe for concurrent use.
type Index struct {
	src io.ReaderAt
	// sections maps a chart name to its entries' byte range in src.
	sections map[string][2]int
	// sums are the SHA-256 of each section, when src is a file that
	// another process could write in place after the scan.
	sums map[string][sha256.Size]byte

	mu     sync.Mutex
	parsed map[string][]*ChartVersion

	// Stale is set when the repository failed and this is the copy cached
	// on disk.
	Stale *StaleIndex
}

// ParseIndex scans an index. An index not laid out as Helm writes it (the
// entries of each chart under a two-space indented key of "entries:", as
// every Helm and chart-releaser index is) is decoded whole instead.
func ParseIndex(raw []byte) (*Index, error) {
	var scan sectionScanner
	for pos := 0; pos < len(raw) && !scan.bad; {
		end := bytes.IndexByte(raw[pos:], '\n')
		if end < 0 {
			end = len(raw)
		} else {
			end += pos
		}
		scan.line(pos, end, raw[pos:end])
		pos = end + 1
	}
	if sections, ok := scan.finish(len(raw)); ok {
		return &Index{src: bytes.NewReader(raw), sections: sections, parsed: map[string][]*ChartVersion{}}, nil
	}
	return parseWhole(raw)
}

// close closes the cached file the index reads its entries from, if any.
func (i *Index) close() {
	if f, ok := i.src.(*os.File); ok {
		_ = f.Close()
	}
}

// parseIndexFile scans the index in f line by line, without reading it
// whole into memory; f stays open for the chart entries read later, each
// checked against the SHA-256 of its section the scan took. It returns the
// index's digest (hex): the SHA-256 of its content with each chart's
// section replaced by that section's SHA-256, so that every byte is
// hashed once. An index not laid out as Helm writes it is decoded whole,
// and its digest is its content's SHA-256.
func parseIndexFile(f *os.File) (*Index, string, error) {
	scan := sectionScanner{hash: sha256.New(), whole: sha256.New(), sums: map[string][sha256.Size]byte{}}
	r := bufio.NewReaderSize(f, 64<<10)
	pos := 0
	var long []byte
	for !scan.bad {
		chunk, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, chunk...)
			continue
		}
		line := chunk
		if long != nil {
			line = append(long, chunk...)
			long = nil
		}
		if len(line) > 0 {
			end := pos + len(bytes.TrimSuffix(line, []byte("\n")))
			scan.line(pos, end, line[:end-pos])
			scan.feed(line)
			pos += len(line)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, "", fmt.Errorf("reading the cached index: %w", err)
		}
	}
	if sections, ok := scan.finish(pos); ok {
		return &Index{src: f, sections: sections, sums: scan.sums, parsed: map[string][]*ChartVersion{}}, hex.EncodeToString(scan.whole.Sum(nil)), nil
	}
	// Read again: the file's digest is the content decoded.
	raw, err := os.ReadFile(f.Name())
	if err != nil {
		return nil, "", fmt.Errorf("reading the cached index: %w", err)
	}
	sum := sha256.Sum256(raw)
	idx, err := parseWhole(raw)
	return idx, hex.EncodeToString(sum[:]), err
}

// parseWhole decodes an index whole.
func parseWhole(raw []byte) (*Index, error) {
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
	idx := &Index{parsed: map[string][]*ChartVersion{}}
	for name, versions := range whole.Entries {
		idx.parsed[name] = clean(name, versions)
	}
	return idx, nil
}

// sectionScanner finds, line by line, the top-level "apiVersion:" and
// "entries:" keys and the chart keys indented by two spaces under the
// latter. bad is set when the layout is not recognised.
type sectionScanner struct {
	sections                      map[string][2]int
	inEntries, sawAPIVersion, bad bool
	current                       string
	start                         int
	// hash, when set, takes the bytes of the current section (feed),
	// and sums their digests, by chart; whole takes the other bytes and
	// each section's digest in its place.
	hash, whole hash.Hash
	sums        map[string][sha256.Size]byte
	opened      bool // the line just taken opened the current section
}

// feed takes the line just passed to line, with its newline: hashed into
// the current section, or the whole.
func (s *sectionScanner) feed(raw []byte) {
	switch {
	case s.hash == nil:
	case s.current == "" || s.opened:
		s.opened = false
		s.whole.Write(raw)
	default:
		s.hash.Write(raw)
	}
}

// line takes the line at [pos, end) of the index, without its newline.
func (s *sectionScanner) line(pos, end int, line []byte) {
	if s.sections == nil {
		s.sections = map[string][2]int{}
	}
	line = bytes.TrimRight(line, "\r")
	switch {
	case len(line) == 0 || line[0] == '#':
	case line[0] != ' ':
		// A top-level key.
		s.close(pos)
		s.inEntries = bytes.Equal(bytes.TrimSpace(line), []byte("entries:"))
		if bytes.HasPrefix(line, []byte("apiVersion:")) {
			s.sawAPIVersion = true
		}
		if line[0] == '{' || line[0] == '[' {
			s.bad = true
		}
	case s.inEntries && len(line) > 2 && line[0] == ' ' && line[1] == ' ' && line[2] != ' ' && line[2] != '-':
		// A chart key under entries.
		s.close(pos)
		key := bytes.TrimSpace(line)
		if !bytes.HasSuffix(key, []byte(":")) {
			s.bad = true
			return
		}
		name := string(bytes.Trim(key[:len(key)-1], `"'`))
		if name == "" {
			s.bad = true
			return
		}
		s.current, s.start = name, end+1
		if s.hash != nil {
			s.hash.Reset()
			s.opened = true
		}
	}
}

func (s *sectionScanner) close(end int) {
	if s.current != "" {
		s.sections[s.current] = [2]int{s.start, end}
		if s.hash != nil {
			sum := [sha256.Size]byte(s.hash.Sum(nil))
			s.sums[s.current] = sum
			s.whole.Write(sum[:])
		}
		s.current = ""
	}
}

// finish ends the scan of an index of size bytes.
func (s *sectionScanner) finish(size int) (map[string][2]int, bool) {
	if s.bad || !s.sawAPIVersion {
		return nil, false
	}
	if s.sections == nil {
		s.sections = map[string][2]int{}
	}
	s.close(size)
	return s.sections, true
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
	data := make([]byte, max(0, span[1]-span[0]))
	// ReadAt may answer io.EOF with the whole section when it ends the file.
	if n, err := i.src.ReadAt(data, int64(span[0])); err != nil && (!errors.Is(err, io.EOF) || n < len(data)) {
		return nil, fmt.Errorf("reading the index entries of chart %q: %w", name, err)
	}
	if want, ok := i.sums[name]; ok && sha256.Sum256(data) != want {
		return nil, fmt.Errorf("the index entries of chart %q changed in the cache file since it was read: run again (the index is downloaded anew)", name)
	}
	var versions []*ChartVersion
	if err := yaml.Unmarshal(data, &versions); err != nil {
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
