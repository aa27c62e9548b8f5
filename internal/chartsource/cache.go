package chartsource

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	godigest "github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"helm.sh/helm/v4/pkg/registry"
)

// The cache directory may be shared with other workspaces and restored by
// CI systems from caches other jobs write: nothing read from it is trusted
// for what its name says. An archive is checked against the digest that
// names it, from a source outside the cache (a registry's manifest digest,
// a repository index's digest), each time it is read, and the bytes
// checked are the bytes loaded; an entry that does not match is a miss,
// fetched again and replaced, and reported (Resolved.CacheRepaired).
// Checkouts of Git repositories and buckets, which no digest names whole,
// are used only by the process that made them (runDir).

// CacheRepair is an entry of the cache that did not match the digest
// naming it, fetched again and replaced.
type CacheRepair struct {
	// Path is the file in the cache directory.
	Path string
	// What names the content: "chart my-chart 1.2.0 of oci://…".
	What string
	// Why says what did not match.
	Why string
}

func (c CacheRepair) String() string { return fmt.Sprintf("%s (%s): %s", c.What, c.Path, c.Why) }

// errCacheMissing: no entry, which is fetched silently.
var errCacheMissing = errors.New("not cached")

// ociCacheEntry is a chart of an OCI registry as cached by its manifest
// digest: <path>.manifest.json (the manifest), <path> (the chart layer)
// and <path>.prov (the provenance layer, when the manifest has one).
type ociCacheEntry struct {
	path   string
	digest string
}

func (r *Repositories) ociCache(digest string) ociCacheEntry {
	return ociCacheEntry{path: r.cachePath("oci", digest) + ".tgz", digest: digest}
}

// read returns the chart layer (and the provenance layer when withProv)
// of the cached manifest, each checked against the digest the manifest
// names, and the manifest against the entry's digest. errCacheMissing
// says nothing (or an entry of an older layout) is cached; another error
// says what does not match.
func (e ociCacheEntry) read(withProv bool) (chartData, prov []byte, err error) {
	manifest, err := os.ReadFile(e.path + ".manifest.json")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, errCacheMissing
	}
	if err != nil {
		return nil, nil, err
	}
	if err := checkDigest(e.digest, manifest); err != nil {
		return nil, nil, fmt.Errorf("manifest: %w", err)
	}
	layers, err := chartLayers(manifest)
	if err != nil {
		return nil, nil, err
	}
	if chartData, err = readChecked(e.path, layers.chart); err != nil {
		return nil, nil, fmt.Errorf("chart layer: %w", err)
	}
	if withProv && layers.prov != "" {
		if prov, err = readChecked(e.path+".prov", layers.prov); err != nil {
			return nil, nil, fmt.Errorf("provenance layer: %w", err)
		}
	}
	return chartData, prov, nil
}

// write caches a chart pulled by the entry's digest; a cache that cannot be
// written only costs a pull next time. The manifest goes last: an entry
// is read only once whole.
func (r *Repositories) writeOCI(e ociCacheEntry, pulled *registry.PullResult) {
	if os.MkdirAll(filepath.Dir(e.path), 0o750) != nil {
		return
	}
	if pulled.Prov != nil && len(pulled.Prov.Data) > 0 {
		r.store(e.path+".prov", pulled.Prov.Data)
	}
	r.store(e.path, pulled.Chart.Data)
	r.store(e.path+".manifest.json", pulled.Manifest.Data)
}

// checkPulled checks what the registry client pulled by digest against it,
// as read checks the cache: the manifest, and its layers.
func checkPulled(digest string, pulled *registry.PullResult) error {
	if err := checkDigest(digest, pulled.Manifest.Data); err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	layers, err := chartLayers(pulled.Manifest.Data)
	if err != nil {
		return err
	}
	if err := checkDigest(layers.chart, pulled.Chart.Data); err != nil {
		return fmt.Errorf("chart layer: %w", err)
	}
	if pulled.Prov != nil && len(pulled.Prov.Data) > 0 {
		if err := checkDigest(layers.prov, pulled.Prov.Data); err != nil {
			return fmt.Errorf("provenance layer: %w", err)
		}
	}
	return nil
}

// helmLayers are the digests of a chart manifest's layers.
type helmLayers struct{ chart, prov string }

func chartLayers(manifest []byte) (helmLayers, error) {
	var m ocispec.Manifest
	if err := json.Unmarshal(manifest, &m); err != nil {
		return helmLayers{}, fmt.Errorf("manifest: %w", err)
	}
	var out helmLayers
	for _, l := range m.Layers {
		switch l.MediaType {
		case registry.ChartLayerMediaType, registry.LegacyChartLayerMediaType:
			out.chart = l.Digest.String()
		case registry.ProvLayerMediaType:
			out.prov = l.Digest.String()
		}
	}
	if out.chart == "" {
		return helmLayers{}, fmt.Errorf("manifest has no layer of media type %s", registry.ChartLayerMediaType)
	}
	return out, nil
}

// readChecked reads file, whose content must have digest want;
// errCacheMissing when there is none (a provenance layer not pulled yet).
func readChecked(file, want string) ([]byte, error) {
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errCacheMissing
	}
	if err != nil {
		return nil, err
	}
	return b, checkDigest(want, b)
}

// checkDigest checks data against want, an OCI digest ("sha256:…").
func checkDigest(want string, data []byte) error {
	d, err := godigest.Parse(want)
	if err != nil {
		return fmt.Errorf("digest %q: %w", want, err)
	}
	if got := d.Algorithm().FromBytes(data); got != d {
		return fmt.Errorf("content has digest %s, not %s", got, d)
	}
	return nil
}

// runDir is where this process keeps the checkout name (a commit, a
// bucket revision) under root: a checkout is a tree of files that no
// digest names whole, which another process or a restored cache could
// have changed, so each process checks out anew, once.
func (r *Repositories) runDir(root, name string) string {
	return filepath.Join(root, name+"."+r.run)
}

// otherRunsAge is when another process's checkouts (and unfinished
// downloads) are removed: a resolve reads its checkout within seconds of
// making it, and one that finds it gone checks out again.
const otherRunsAge = time.Hour

// removeOtherRuns removes what processes left under root over
// otherRunsAge ago; a cache that cannot be cleaned only takes space.
func removeOtherRuns(root string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > otherRunsAge {
			_ = os.RemoveAll(filepath.Join(root, e.Name()))
		}
	}
}
