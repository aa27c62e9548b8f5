package helm

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"text/template"

	"helm.sh/helm/v4/pkg/action"
	chartutil "helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	postrender "helm.sh/helm/v4/pkg/postrenderer"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// Chart is a loaded Helm chart.
type Chart = chart.Chart

// LoadChart loads a chart from a directory or a packaged .tgz file.
func LoadChart(path string) (*Chart, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("reading local chart: %w", err)
	}
	c, err := loader.Load(path)
	if err != nil {
		return nil, fmt.Errorf("loading chart %s: %w", path, err)
	}
	return c, nil
}

// Capabilities is what templates see of the cluster (.Capabilities).
type Capabilities struct {
	// KubeVersion like "v1.37.2"; empty means Helm's default.
	KubeVersion string
	// APIVersions are group/versions and group/version/Kinds served.
	APIVersions []string
}

// DiscoverCapabilities reads the cluster's version and served APIs.
func DiscoverCapabilities(dc discovery.DiscoveryInterface) (*Capabilities, error) {
	v, err := dc.ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("reading Kubernetes version: %w", err)
	}
	versions, err := action.GetVersionSet(dc)
	if err != nil {
		return nil, fmt.Errorf("reading served API versions: %w", err)
	}
	return &Capabilities{KubeVersion: v.GitVersion, APIVersions: versions}, nil
}

// RenderOptions say what to render.
type RenderOptions struct {
	ReleaseName string
	// Namespace is the release's target namespace.
	Namespace string
	Chart     *Chart
	Values    map[string]any
	// PostRenderer runs over the rendered manifest, CRDs included.
	PostRenderer postrender.PostRenderer
	// PostRenderStrategy; empty is PostRenderNoHooks.
	PostRenderStrategy PostRenderStrategy
	// Capabilities of the target cluster; nil means Helm's defaults.
	Capabilities *Capabilities
	// IncludeCRDs adds the chart's crds/ directory to the manifest.
	IncludeCRDs bool
	// DisableSchemaValidation skips values.schema.json.
	DisableSchemaValidation bool
	// IsUpgrade renders as an upgrade (.Release.IsUpgrade).
	IsUpgrade bool
	// LookupConfig is the cluster that the template function lookup
	// reads, as an install's render does; nil: lookup finds nothing, as
	// with helm template.
	LookupConfig *rest.Config
	// Lookups, when set with LookupConfig, records the lookup calls.
	Lookups *Lookups
}

// Rendered is the result of a render.
type Rendered struct {
	// Manifest is the multi-document YAML an install would apply (hooks excluded).
	Manifest string
	// Notes is the rendered NOTES.txt.
	Notes string
	// Hooks are the chart's hooks, tests included, as the action would
	// record them.
	Hooks []*Hook
}

// Render renders a chart without touching any cluster, as `helm template`
// does, with the capabilities of the target cluster when given.
func Render(ctx context.Context, opts RenderOptions) (*Rendered, error) {
	cfg := action.NewConfiguration(action.ConfigurationSetLogger(slog.DiscardHandler))
	if opts.LookupConfig != nil {
		// Helm's client-side render takes its template functions too.
		cfg.CustomTemplateFuncs = template.FuncMap{"lookup": opts.Lookups.wrap(opts.LookupConfig)}
	}
	install := action.NewInstall(cfg)
	install.DryRunStrategy = action.DryRunClient
	install.Replace = true
	install.ReleaseName = opts.ReleaseName
	install.Namespace = opts.Namespace
	install.IncludeCRDs = opts.IncludeCRDs
	install.PostRenderer = opts.PostRenderer
	install.PostRenderStrategy = postRenderStrategy(opts.PostRenderStrategy)
	install.SkipSchemaValidation = opts.DisableSchemaValidation
	install.IsUpgrade = opts.IsUpgrade
	install.DisableOpenAPIValidation = true
	if c := opts.Capabilities; c != nil {
		if c.KubeVersion != "" {
			kv, err := chartutil.ParseKubeVersion(c.KubeVersion)
			if err != nil {
				return nil, fmt.Errorf("parsing Kubernetes version %q: %w", c.KubeVersion, err)
			}
			install.KubeVersion = kv
		}
		install.APIVersions = c.APIVersions
	}
	values := opts.Values
	if values == nil {
		values = map[string]any{}
	}
	rel, err := releaseOf(install.RunWithContext(ctx, opts.Chart, values))
	if err != nil {
		return nil, fmt.Errorf("rendering chart %s: %w", opts.Chart.Name(), err)
	}
	return &Rendered{Manifest: strings.TrimSpace(rel.Manifest), Notes: rel.Info.Notes, Hooks: rel.Hooks}, nil
}
