package helm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/kube"
	postrender "helm.sh/helm/v4/pkg/postrenderer"
	ri "helm.sh/helm/v4/pkg/release"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
)

// Release is a Helm release.
type Release = release.Release

// FieldManager is the manager Helm's writes record in the objects'
// managedFields: a name of its own, whatever the binary is called (Helm
// takes the binary's name otherwise, which changes with each version
// installed from a registry), so that drift detection can tell an object
// only this provider's Helm actions wrote.
const FieldManager = "terraform-provider-helmrelease"

func init() {
	// Helm reads it from a package variable: set once, before any action.
	kube.ManagedFieldsManager = FieldManager
}

// ClientOptions configure a Client.
type ClientOptions struct {
	// Getter serves the clients of the target cluster, impersonating when
	// the release has a service account.
	Getter genericclioptions.RESTClientGetter
	// StorageNamespace holds the release's Helm storage (Secrets).
	StorageNamespace string
	// Log receives Helm's log lines.
	Log *LogBuffer
	// Observe is called with every release the actions write to storage.
	Observe func(*Release)
	// WrapStorage, when set, wraps the storage driver (tests inject faults).
	WrapStorage func(driver.Driver) driver.Driver
	// Settled shows the storage through SettledView: pending revisions
	// hidden, writes refused.
	Settled bool
}

// Client runs Helm actions for the releases of one storage namespace.
type Client struct {
	cfg *action.Configuration
	// kube is cfg.KubeClient, whose waiter each action sets.
	kube *kubeClient
	// logs is where Helm logs.
	logs slog.Handler
}

// NewClient returns a client storing releases as Secrets in
// opts.StorageNamespace.
func NewClient(opts ClientOptions) (*Client, error) {
	logs := slog.DiscardHandler
	if opts.Log != nil {
		logs = opts.Log.Handler()
	}
	reads := newReadAhead()
	kc := kube.New(reads.getter(opts.Getter))
	kc.Factory = withSharedValidation(kc.Factory, opts.Getter)
	kc.SetLogger(logs)
	cs, err := kc.Factory.KubernetesClientSet()
	if err != nil {
		return nil, fmt.Errorf("creating Kubernetes client for Helm: %w", err)
	}
	secrets := driver.NewSecrets(cs.CoreV1().Secrets(opts.StorageNamespace))
	secrets.SetLogger(logs)
	var d driver.Driver = secrets
	if opts.WrapStorage != nil {
		d = opts.WrapStorage(d)
	}
	if opts.Settled {
		d = SettledView(d)
	}
	if opts.Observe != nil {
		d = &observer{Driver: d, observe: opts.Observe}
	}
	k := &kubeClient{Client: kc, getter: opts.Getter, reads: reads}
	cfg := action.NewConfiguration(action.ConfigurationSetLogger(logs))
	cfg.RESTClientGetter = opts.Getter
	cfg.Releases = storage.Init(d)
	cfg.Releases.SetLogger(logs)
	cfg.KubeClient = k
	return &Client{kube: k, cfg: cfg, logs: logs}, nil
}

// asRelease is the record behind a Releaser: Helm 4 stores v1 records
// (charts of API v1 and v2) and nothing else this package reads.
func asRelease(r ri.Releaser) (*Release, error) {
	switch v := r.(type) {
	case nil:
		return nil, nil
	case *Release:
		return v, nil
	case Release:
		return &v, nil
	}
	return nil, fmt.Errorf("release record of type %T: only Helm's v1 records (charts of API v1 and v2) are supported", r)
}

// asReleases is asRelease of each.
func asReleases(rs []ri.Releaser) ([]*Release, error) {
	out := make([]*Release, 0, len(rs))
	for _, r := range rs {
		rel, err := asRelease(r)
		if err != nil {
			return nil, err
		}
		out = append(out, rel)
	}
	return out, nil
}

// observer passes every release written to storage to observe.
type observer struct {
	driver.Driver
	observe func(*Release)
}

func (o *observer) Create(key string, rls ri.Releaser) error {
	if err := o.Driver.Create(key, rls); err != nil {
		return err
	}
	o.pass(rls)
	return nil
}

func (o *observer) Update(key string, rls ri.Releaser) error {
	if err := o.Driver.Update(key, rls); err != nil {
		return err
	}
	o.pass(rls)
	return nil
}

func (o *observer) pass(rls ri.Releaser) {
	if rel, err := asRelease(rls); err == nil && rel != nil {
		o.observe(rel)
	}
}

// LastRelease returns the newest revision of the release, or nil when the
// storage holds none.
func (c *Client) LastRelease(name string) (*Release, error) {
	rel, err := c.cfg.Releases.Last(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading release %s from storage: %w", name, err)
	}
	return asRelease(rel)
}

// History returns every revision of the release in storage.
func (c *Client) History(name string) ([]*Release, error) {
	rels, err := c.cfg.Releases.History(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading history of release %s: %w", name, err)
	}
	return asReleases(rels)
}

// UpdateRelease writes rel to storage, e.g. to mark a pending release failed.
func (c *Client) UpdateRelease(rel *Release) error {
	if err := c.cfg.Releases.Update(rel); err != nil {
		return fmt.Errorf("updating release %s.v%d in storage: %w", rel.Name, rel.Version, err)
	}
	return nil
}

// PostRenderStrategy says which rendered objects go through the
// post-renderer: the release's objects only (PostRenderNoHooks, as Helm 3
// did), or its hooks too, in one stream with them (PostRenderCombined,
// Helm 4's default) or apart (PostRenderSeparate).
type PostRenderStrategy = action.PostRenderStrategy

// Post-render strategies.
const (
	PostRenderNoHooks  = action.PostRenderStrategyNoHooks
	PostRenderCombined = action.PostRenderStrategyCombined
	PostRenderSeparate = action.PostRenderStrategySeparate
)

// ApplyMethod is how an upgrade or a rollback writes the objects.
type ApplyMethod string

// Apply methods.
const (
	// ApplyServerSide writes by server-side apply, forcing conflicts
	// with other field managers, as helm-controller does.
	ApplyServerSide ApplyMethod = "true"
	// ApplyClientSide writes by three-way merge patches, as Helm 3 did.
	ApplyClientSide ApplyMethod = "false"
	// ApplyAsLast writes as the release's newest record says it was
	// written (its apply_method): client-side for a record Helm 3 wrote,
	// which has none.
	ApplyAsLast ApplyMethod = "auto"
)

// InstallOptions of Install.
type InstallOptions struct {
	ReleaseName, Namespace   string
	Timeout                  time.Duration
	Wait, WaitForJobs        bool
	DisableHooks             bool
	DisableOpenAPIValidation bool
	SkipSchemaValidation     bool
	TakeOwnership            bool
	Replace                  bool
	CreateNamespace          bool
	// ServerSideApply creates the objects by server-side apply, forcing
	// conflicts; false creates them client-side.
	ServerSideApply bool
	PostRenderer    postrender.PostRenderer
	// PostRenderStrategy; empty is PostRenderNoHooks.
	PostRenderStrategy PostRenderStrategy
	Description        string
	// Poller, when set, waits instead of Helm's legacy waiter.
	Poller *Poller
	// DryRun renders and validates against the cluster without writing.
	DryRun bool
	// APIVersions, for a dry run, are group/versions and
	// group/version/Kinds that .Capabilities.APIVersions has beside the
	// cluster's: the kinds of CRDs that releases applied before this one
	// will create.
	APIVersions []string
	// Lookups, when set, records the render's lookup calls.
	Lookups *Lookups
}

// Install installs chart as a new release. The chart's CRDs are left to the
// caller (the CRD policy): Helm's own CRD handling is off.
func (c *Client) Install(ctx context.Context, chart *Chart, values map[string]any, o InstallOptions) (*Release, error) {
	cfg := c.cfg
	if o.DryRun {
		// Helm reads every object of the release to learn which exist; a
		// dry run that takes ownership of what exists does nothing with
		// the answer.
		var err error
		if cfg, err = c.dryRunConfiguration(o.TakeOwnership, o.APIVersions); err != nil {
			return nil, err
		}
	}
	cfg, err := c.withLookups(cfg, o.Lookups)
	if err != nil {
		return nil, err
	}
	a := action.NewInstall(cfg)
	a.ReleaseName, a.Namespace = o.ReleaseName, o.Namespace
	a.Timeout, a.WaitForJobs = o.Timeout, o.WaitForJobs
	a.WaitStrategy = waitStrategy(o.Wait, o.Poller)
	a.DisableHooks = o.DisableHooks
	a.DisableOpenAPIValidation = o.DisableOpenAPIValidation
	a.SkipSchemaValidation = o.SkipSchemaValidation
	a.TakeOwnership = o.TakeOwnership
	a.Replace = o.Replace
	a.CreateNamespace = o.CreateNamespace
	a.ServerSideApply, a.ForceConflicts = o.ServerSideApply, o.ServerSideApply
	a.PostRenderer = o.PostRenderer
	a.PostRenderStrategy = postRenderStrategy(o.PostRenderStrategy)
	a.Description = o.Description
	a.SkipCRDs = true
	if o.DryRun {
		a.DryRunStrategy, a.WaitStrategy, a.WaitForJobs = action.DryRunServer, kube.HookOnlyStrategy, false
	}
	defer c.waitWith(o.Poller)()
	rel, err := a.RunWithContext(ctx, chart, values)
	return releaseOf(rel, err)
}

// releaseOf is the record an action returned, with its error.
func releaseOf(r ri.Releaser, err error) (*Release, error) {
	rel, aerr := asRelease(r)
	if err != nil {
		return rel, err
	}
	return rel, aerr
}

func postRenderStrategy(s PostRenderStrategy) PostRenderStrategy {
	if s == "" {
		return PostRenderNoHooks
	}
	return s
}

// waitStrategy is the strategy Helm's actions are given: the poller's or
// the legacy waiter's when they wait, hooks only when they do not.
func waitStrategy(wait bool, p *Poller) kube.WaitStrategy {
	switch {
	case !wait:
		return kube.HookOnlyStrategy
	case p != nil:
		return kube.StatusWatcherStrategy
	default:
		return kube.LegacyStrategy
	}
}

// waitWith makes p the waiter until the returned function is called.
func (c *Client) waitWith(p *Poller) func() {
	c.kube.poller = p
	return func() { c.kube.poller = nil }
}

// dryRunConfiguration is the configuration of a dry run: c's, or, when
// mapOnly or apiVersions ask for it, a copy whose KubeClient maps the
// objects without reading them (mappedOnly) and whose .Capabilities are the
// cluster's with apiVersions added. A server-side dry run takes
// .Capabilities from its configuration alone (Helm ignores an action's
// APIVersions then), so kinds still to come go there.
func (c *Client) dryRunConfiguration(mapOnly bool, apiVersions []string) (*action.Configuration, error) {
	if !mapOnly && len(apiVersions) == 0 {
		return c.cfg, nil
	}
	if c.cfg.Capabilities == nil {
		caps, err := discoverCapabilities(c.cfg.RESTClientGetter)
		if err != nil {
			return nil, err
		}
		c.cfg.Capabilities = caps // discovered once, as Helm's actions do
	}
	dry := action.NewConfiguration(action.ConfigurationSetLogger(c.logs))
	dry.RESTClientGetter, dry.Releases, dry.Capabilities, dry.KubeClient = c.cfg.RESTClientGetter, c.cfg.Releases, c.cfg.Capabilities, c.kube
	if mapOnly {
		dry.KubeClient = mappedOnly{c.kube}
	}
	if len(apiVersions) > 0 {
		caps := c.cfg.Capabilities.Copy()
		for _, v := range apiVersions {
			if !caps.APIVersions.Has(v) {
				caps.APIVersions = append(caps.APIVersions, v)
			}
		}
		dry.Capabilities = caps
	}
	return dry, nil
}

// discoverCapabilities reads .Capabilities from the cluster as Helm's
// actions do: discovery invalidated first, a group that fails to answer
// (an orphaned APIService) left out.
func discoverCapabilities(getter action.RESTClientGetter) (*common.Capabilities, error) {
	dc, err := getter.ToDiscoveryClient()
	if err != nil {
		return nil, fmt.Errorf("creating the discovery client: %w", err)
	}
	dc.Invalidate()
	v, err := dc.ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("reading the Kubernetes version: %w", err)
	}
	versions, err := action.GetVersionSet(dc)
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, fmt.Errorf("reading the served API versions: %w", err)
	}
	return &common.Capabilities{
		APIVersions: versions,
		KubeVersion: common.KubeVersion{Version: v.GitVersion, Major: v.Major, Minor: v.Minor},
		HelmVersion: common.DefaultCapabilities.HelmVersion,
	}, nil
}

// mappedOnly is the KubeClient of a dry-run install that takes ownership:
// Build maps the manifest's objects to the cluster's kinds (an unknown kind
// is still an error) and returns none, so that Helm does not read each.
type mappedOnly struct{ *kubeClient }

func (m mappedOnly) Build(r io.Reader, validate bool) (kube.ResourceList, error) {
	if _, err := m.kubeClient.Build(r, validate); err != nil {
		return nil, err
	}
	return nil, nil
}

// UpgradeOptions of Upgrade.
type UpgradeOptions struct {
	Namespace                string
	Timeout                  time.Duration
	Wait, WaitForJobs        bool
	DisableHooks             bool
	DisableOpenAPIValidation bool
	SkipSchemaValidation     bool
	TakeOwnership            bool
	// Force replaces objects a client-side patch cannot update (delete
	// and create); server-side apply forces conflicts instead.
	Force         bool
	CleanupOnFail bool
	ReuseValues   bool
	MaxHistory    int
	// ApplyMethod; empty is ApplyAsLast.
	ApplyMethod  ApplyMethod
	PostRenderer postrender.PostRenderer
	// PostRenderStrategy; empty is PostRenderNoHooks.
	PostRenderStrategy PostRenderStrategy
	Description        string
	// Poller, when set, waits instead of Helm's legacy waiter.
	Poller *Poller
	// DryRun renders and validates against the cluster without writing.
	DryRun bool
	// APIVersions, for a dry run: as InstallOptions.APIVersions.
	APIVersions []string
	// Lookups: as InstallOptions.Lookups.
	Lookups *Lookups
}

// Upgrade upgrades release name to chart with values; CRDs are the caller's.
func (c *Client) Upgrade(ctx context.Context, name string, chart *Chart, values map[string]any, o UpgradeOptions) (*Release, error) {
	ssa, err := c.serverSideApply(name, 0, o.ApplyMethod)
	if err != nil {
		return nil, err
	}
	cfg := c.cfg
	if o.DryRun {
		if cfg, err = c.dryRunConfiguration(false, o.APIVersions); err != nil {
			return nil, err
		}
	}
	if cfg, err = c.withLookups(cfg, o.Lookups); err != nil {
		return nil, err
	}
	a := action.NewUpgrade(cfg)
	a.Namespace = o.Namespace
	a.Timeout, a.WaitForJobs = o.Timeout, o.WaitForJobs
	a.WaitStrategy = waitStrategy(o.Wait, o.Poller)
	a.DisableHooks = o.DisableHooks
	a.DisableOpenAPIValidation = o.DisableOpenAPIValidation
	a.SkipSchemaValidation = o.SkipSchemaValidation
	a.TakeOwnership = o.TakeOwnership
	a.ServerSideApply, a.ForceConflicts = strconv.FormatBool(ssa), ssa
	a.ForceReplace = o.Force && !ssa
	a.CleanupOnFail = o.CleanupOnFail
	a.ReuseValues = o.ReuseValues
	// As helm-controller: the values given are the release's values.
	// Helm would otherwise take the previous revision's when none are
	// given, and a release upgraded elsewhere with values would keep them.
	a.ResetValues = !o.ReuseValues
	a.MaxHistory = o.MaxHistory
	a.PostRenderer = o.PostRenderer
	a.PostRenderStrategy = postRenderStrategy(o.PostRenderStrategy)
	a.Description = o.Description
	a.SkipCRDs = true
	if o.DryRun {
		a.DryRunStrategy, a.WaitStrategy, a.WaitForJobs = action.DryRunServer, kube.HookOnlyStrategy, false
	}
	defer c.waitWith(o.Poller)()
	rel, err := a.RunWithContext(ctx, name, chart, values)
	return releaseOf(rel, err)
}

// serverSideApply resolves m for an action on release name that returns
// to revision version (0: the newest, as an upgrade does; -1: the one
// before the newest, as a rollback to the previous revision does). Helm
// resolves ApplyAsLast itself but forces no conflict then; helm-controller
// resolves it first, as here, to force them on server-side apply.
func (c *Client) serverSideApply(name string, version int, m ApplyMethod) (bool, error) {
	switch m {
	case ApplyServerSide:
		return true, nil
	case ApplyClientSide:
		return false, nil
	case ApplyAsLast, "":
	default:
		return false, fmt.Errorf("apply method %q: not one of %q, %q, %q", m, ApplyServerSide, ApplyClientSide, ApplyAsLast)
	}
	last, err := c.LastRelease(name)
	if err != nil || last == nil {
		return false, err
	}
	rel := last
	if version != 0 {
		if version < 0 {
			version = last.Version - 1
		}
		r, err := c.cfg.Releases.Get(name, version)
		if err != nil {
			return false, fmt.Errorf("reading revision %d of release %s: %w", version, name, err)
		}
		if rel, err = asRelease(r); err != nil {
			return false, err
		}
	}
	return rel.ApplyMethod == string(release.ApplyMethodServerSideApply), nil
}

// TestOptions of Test.
type TestOptions struct {
	Namespace string
	Timeout   time.Duration
	// Include and Exclude filter tests by hook name.
	Include, Exclude []string
	// Poller waits for the test hooks; nil waits with Helm's watcher.
	Poller *Poller
}

// Test runs the release's test hooks; the returned release carries their
// results even when a test failed.
func (c *Client) Test(name string, o TestOptions) (*Release, error) {
	a := action.NewReleaseTesting(c.cfg)
	a.Namespace, a.Timeout = o.Namespace, o.Timeout
	if len(o.Include) > 0 {
		a.Filters[action.IncludeNameFilter] = o.Include
	}
	if len(o.Exclude) > 0 {
		a.Filters[action.ExcludeNameFilter] = o.Exclude
	}
	defer c.waitWith(o.Poller)()
	r, shutdown, err := a.Run(name)
	// shutdown deletes the test hooks whose policy says so once they ran.
	if shutdown != nil {
		if serr := shutdown(); serr != nil && err == nil {
			err = fmt.Errorf("deleting the test hooks of release %s: %w", name, serr)
		}
	}
	return releaseOf(r, err)
}

// RollbackOptions of Rollback.
type RollbackOptions struct {
	// Version to roll back to; 0 is the previous one.
	Version           int
	Timeout           time.Duration
	Wait, WaitForJobs bool
	DisableHooks      bool
	// Force as UpgradeOptions.Force.
	Force         bool
	CleanupOnFail bool
	MaxHistory    int
	// ApplyMethod; empty is ApplyAsLast: as the revision rolled back to
	// was written.
	ApplyMethod ApplyMethod
	// Poller, when set, waits instead of Helm's legacy waiter.
	Poller *Poller
}

// Rollback rolls release name back.
func (c *Client) Rollback(name string, o RollbackOptions) error {
	target := o.Version
	if target == 0 {
		target = -1
	}
	ssa, err := c.serverSideApply(name, target, o.ApplyMethod)
	if err != nil {
		return err
	}
	a := action.NewRollback(c.cfg)
	a.Version = o.Version
	a.Timeout, a.WaitForJobs = o.Timeout, o.WaitForJobs
	a.WaitStrategy = waitStrategy(o.Wait, o.Poller)
	a.DisableHooks = o.DisableHooks
	a.ServerSideApply, a.ForceConflicts = strconv.FormatBool(ssa), ssa
	a.ForceReplace = o.Force && !ssa
	a.CleanupOnFail, a.MaxHistory = o.CleanupOnFail, o.MaxHistory
	defer c.waitWith(o.Poller)()
	return a.Run(name)
}

// UninstallOptions of Uninstall.
type UninstallOptions struct {
	Timeout             time.Duration
	Wait                bool
	DisableHooks        bool
	KeepHistory         bool
	DeletionPropagation string
	Description         string
	// Poller waits for the deletion and the hooks when Wait is set; nil
	// is Helm's legacy waiter.
	Poller *Poller
}

// Uninstalled is what an uninstall did.
type Uninstalled struct {
	Release *Release
	// NotOwned are the objects of the release, "<Kind> <name>", that
	// Helm 4 did not delete because their meta.helm.sh/release-name or
	// release-namespace annotation names another release.
	NotOwned []string
}

// notOwnedHeader opens the list of such objects in Helm's account of an
// uninstall, one "[<Kind>] <name>" line each.
const notOwnedHeader = "were not deleted because they are not owned by this release:"

// Uninstall removes release name; a release that does not exist is an
// error wrapping driver.ErrReleaseNotFound.
func (c *Client) Uninstall(name string, o UninstallOptions) (*Uninstalled, error) {
	a := action.NewUninstall(c.cfg)
	a.Timeout = o.Timeout
	a.WaitStrategy = waitStrategy(o.Wait, o.Poller)
	a.DisableHooks, a.KeepHistory = o.DisableHooks, o.KeepHistory
	defer c.waitWith(o.Poller)()
	a.DeletionPropagation = o.DeletionPropagation
	a.Description = o.Description
	res, err := a.Run(name)
	if res == nil {
		return nil, err
	}
	rel, err := releaseOf(res.Release, err)
	out := &Uninstalled{Release: rel}
	if _, list, ok := strings.Cut(res.Info, notOwnedHeader); ok {
		for _, line := range strings.Split(strings.TrimPrefix(list, "\n"), "\n") {
			kind, obj, ok := strings.Cut(strings.TrimPrefix(line, "["), "] ")
			if !ok || !strings.HasPrefix(line, "[") {
				break
			}
			out.NotOwned = append(out.NotOwned, kind+" "+obj)
		}
	}
	return out, err
}

// IsReleaseNotFound reports whether err means the release does not exist.
func IsReleaseNotFound(err error) bool { return errors.Is(err, driver.ErrReleaseNotFound) }

// CreateRelease writes a new revision to storage as it is (tests simulate
// interrupted actions with it).
func (c *Client) CreateRelease(rel *Release) error {
	if err := c.cfg.Releases.Create(rel); err != nil {
		return fmt.Errorf("creating release %s.v%d in storage: %w", rel.Name, rel.Version, err)
	}
	return nil
}

// TestPodLogs returns the last lines (at most maxLines) of the log of each
// test pod of rel that failed, by pod name; a pod whose log cannot be read
// says why instead.
func (c *Client) TestPodLogs(ctx context.Context, rel *Release, maxLines int64) (map[string]string, error) {
	kc := c.kube.Client
	cs, err := kc.Factory.KubernetesClientSet()
	if err != nil {
		return nil, fmt.Errorf("creating Kubernetes client: %w", err)
	}
	out := map[string]string{}
	for _, h := range rel.Hooks {
		if h.LastRun.Phase != release.HookPhaseFailed || !slices.Contains(h.Events, release.HookTest) {
			continue
		}
		b, err := cs.CoreV1().Pods(rel.Namespace).GetLogs(h.Name, &corev1.PodLogOptions{TailLines: &maxLines}).DoRaw(ctx)
		if err != nil {
			out[h.Name] = "(log not readable: " + err.Error() + ")"
			continue
		}
		out[h.Name] = string(b)
	}
	return out, nil
}
