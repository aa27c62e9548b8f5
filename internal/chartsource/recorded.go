package chartsource

import (
	"bytes"
	"encoding/json"
	"net/url"
	"slices"
	"strings"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// SourceAnnotation is the annotation of a resolved chart's metadata that
// records the source it was resolved from, as JSON (Recorded). Helm keeps
// a chart's metadata with every revision of a release, so the release
// says where its chart came from: import and `terraform query` write the
// chart block from it. Helm's storage object itself cannot hold it: its
// labels take no URL or version constraint, and Helm rewrites the object,
// dropping annotations, each time it updates a revision.
const SourceAnnotation = "helmrelease.terraform.io/chart-source"

// CRDsAnnotation is the annotation of a resolved chart's metadata that
// names the CRDs of its crds/ directories and its subcharts', comma-
// separated: Helm stores a release's chart without its subcharts, so
// what an uninstall leaves (their CRDs) can be told only from this.
const CRDsAnnotation = "helmrelease.terraform.io/crds"

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
	// Git is the Git repository and reference, without credentials.
	Git *RecordedGit `json:"git,omitempty"`
	// Bucket is the bucket, without credentials or pins.
	Bucket *Bucket `json:"bucket,omitempty"`
	// ChartRef names the Flux object the chart was the artifact of.
	ChartRef *ChartRef `json:"chartRef,omitempty"`
	// DependencyUpdate is Source's.
	DependencyUpdate bool `json:"dependencyUpdate,omitempty"`
	// PlainHTTP is Source.Auth's: the OCI registry was reached over plain
	// HTTP.
	PlainHTTP bool `json:"plainHTTP,omitempty"`
	// Verify is Source.VerifyConfig.
	Verify *VerifyConfig `json:"verify,omitempty"`
	// Digest and Revision are Resolved.Digest and .SourceRevision: the
	// archive or OCI manifest, the Git commit or bucket revision
	// deployed, which the plans that take the release over find again
	// (Source.Deployed).
	Digest   string `json:"digest,omitempty"`
	Revision string `json:"revision,omitempty"`
}

// Deployed is the pin of the chart r recorded, of version (the chart's
// version as deployed).
func (r Recorded) Deployed(version string) *Pin {
	return &Pin{Version: version, Digest: r.Digest, SourceRevision: r.Revision}
}

// VerifyConfig is a chart's signature verification as its configuration
// wrote it: public material and names only (public keys, certificates,
// identities, policies, the keyring's path, a Secret's name), never a
// Secret's content.
type VerifyConfig struct {
	// Provider is as written: empty for the default.
	Provider    string     `json:"provider,omitempty"`
	Keyring     string     `json:"keyring,omitempty"`
	PublicKeys  []string   `json:"publicKeys,omitempty"`
	SecretRef   *SecretRef `json:"secretRef,omitempty"`
	Identities  []Identity `json:"matchOIDCIdentity,omitempty"`
	TrustedRoot string     `json:"trustedRoot,omitempty"`
	TrustPolicy string     `json:"trustPolicy,omitempty"`
}

// SecretRef names a Secret; Namespace empty is the release's.
type SecretRef struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// RecordedGit is what a release records of Source.Git.
type RecordedGit struct {
	URL string `json:"url"`
	Ref GitRef `json:"ref"`
	// KnownHosts are the SSH server's host keys (public).
	KnownHosts string `json:"knownHosts,omitempty"`
}

// record writes src, and what it resolved to (out), into the annotations
// of out's chart.
func record(out *Resolved, src Source) {
	c := out.Chart
	if c == nil || c.Metadata == nil {
		return
	}
	r := Recorded{Repository: withoutUserinfo(src.Repository), Name: src.Name, Version: src.Version, ReconcileStrategy: src.ReconcileStrategy, ValuesFiles: src.ValuesFiles,
		IgnoreMissingValuesFiles: src.IgnoreMissingValuesFiles, DependencyUpdate: src.DependencyUpdate, PlainHTTP: src.Auth.PlainHTTP, Verify: src.VerifyConfig,
		Digest: out.Digest, Revision: out.SourceRevision}
	if src.Git != nil {
		r.Git = &RecordedGit{URL: withoutUserinfo(src.Git.URL), Ref: src.Git.Ref, KnownHosts: src.Git.KnownHosts}
	}
	if src.ChartRef != nil {
		// The object says the rest: only the reference is the configuration's.
		r = Recorded{Name: src.Name, ChartRef: src.ChartRef, Digest: out.Digest, Revision: out.SourceRevision}
	}
	if b := src.Bucket; b != nil && src.ChartRef == nil {
		r.Bucket = &Bucket{Endpoint: b.Endpoint, BucketName: b.BucketName, Prefix: b.Prefix, Region: b.Region, Provider: b.Provider, Insecure: b.Insecure}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return // strings only: cannot fail
	}
	if c.Metadata.Annotations == nil {
		c.Metadata.Annotations = map[string]string{}
	}
	c.Metadata.Annotations[SourceAnnotation] = string(b)
	if names := crdNames(c); len(names) > 0 {
		c.Metadata.Annotations[CRDsAnnotation] = strings.Join(names, ",")
	}
}

// crdNames are the names of the CRDs of c's crds/ directories, its
// subcharts' included, sorted.
func crdNames(c *chart.Chart) []string {
	var names []string
	for _, f := range c.CRDObjects() {
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(f.File.Data), 4096)
		for {
			var doc struct {
				Kind     string `json:"kind"`
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			if err := dec.Decode(&doc); err != nil {
				break // the end, or not YAML: Helm refuses it at install
			}
			if doc.Kind == "CustomResourceDefinition" && doc.Metadata.Name != "" {
				names = append(names, doc.Metadata.Name)
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// RecordedCRDs are the CRDs a release's chart and its subcharts brought
// (CRDsAnnotation); none when it records none.
func RecordedCRDs(c *chart.Chart) []string {
	if c == nil || c.Metadata == nil || c.Metadata.Annotations[CRDsAnnotation] == "" {
		return nil
	}
	return strings.Split(c.Metadata.Annotations[CRDsAnnotation], ",")
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
	if u.Scheme == "ssh" {
		// An SSH user (git@) is no credential: only a password is.
		u.User = url.User(u.User.Username())
		return u.String()
	}
	u.User = nil
	return u.String()
}
