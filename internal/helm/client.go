package helm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/postrender"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
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
}

// NewClient returns a client storing releases as Secrets in
// opts.StorageNamespace.
func NewClient(opts ClientOptions) (*Client, error) {
	logf := func(string, ...any) {}
	if opts.Log != nil {
		logf = opts.Log.Log
	}
	kc := kube.New(opts.Getter)
	kc.Log = logf
	cs, err := kc.Factory.KubernetesClientSet()
	if err != nil {
		return nil, fmt.Errorf("creating Kubernetes client for Helm: %w", err)
	}
	secrets := driver.NewSecrets(cs.CoreV1().Secrets(opts.StorageNamespace))
	secrets.Log = logf
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
	k := &kubeClient{Client: kc, getter: opts.Getter}
	return &Client{kube: k, cfg: &action.Configuration{
		RESTClientGetter: opts.Getter,
		Releases:         storage.Init(d),
		KubeClient:       k,
		Log:              logf,
	}}, nil
}

// observer passes every release written to storage to observe.
type observer struct {
	driver.Driver
	observe func(*Release)
}

func (o *observer) Create(key string, rls *Release) error {
	if err := o.Driver.Create(key, rls); err != nil {
		return err
	}
	o.observe(rls)
	return nil
}

func (o *observer) Update(key string, rls *Release) error {
	if err := o.Driver.Update(key, rls); err != nil {
		return err
	}
	o.observe(rls)
	return nil
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
	return rel, nil
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
	return rels, nil
}

// UpdateRelease writes rel to storage, e.g. to mark a pending release failed.
func (c *Client) UpdateRelease(rel *Release) error {
	if err := c.cfg.Releases.Update(rel); err != nil {
		return fmt.Errorf("updating release %s.v%d in storage: %w", rel.Name, rel.Version, err)
	}
	return nil
}

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
	PostRenderer             postrender.PostRenderer
	Description              string
	// Poller, when set, waits instead of Helm 3's waiter.
	Poller *Poller
	// DryRun renders and validates against the cluster without writing.
	DryRun bool
}

// Install installs chart as a new release. The chart's CRDs are left to the
// caller (the CRD policy): Helm's own CRD handling is off.
func (c *Client) Install(ctx context.Context, chart *Chart, values map[string]any, o InstallOptions) (*Release, error) {
	cfg := c.cfg
	if o.DryRun && o.TakeOwnership {
		// Helm reads every object of the release to learn which exist; a
		// dry run that takes ownership of what exists does nothing with
		// the answer.
		dry := *c.cfg
		dry.KubeClient = mappedOnly{c.cfg.KubeClient}
		cfg = &dry
		defer func() {
			if c.cfg.Capabilities == nil {
				c.cfg.Capabilities = dry.Capabilities // discovered once
			}
		}()
	}
	a := action.NewInstall(cfg)
	a.ReleaseName, a.Namespace = o.ReleaseName, o.Namespace
	a.Timeout, a.Wait, a.WaitForJobs = o.Timeout, o.Wait, o.WaitForJobs
	a.DisableHooks = o.DisableHooks
	a.DisableOpenAPIValidation = o.DisableOpenAPIValidation
	a.SkipSchemaValidation = o.SkipSchemaValidation
	a.TakeOwnership = o.TakeOwnership
	a.Replace = o.Replace
	a.CreateNamespace = o.CreateNamespace
	a.PostRenderer = o.PostRenderer
	a.Description = o.Description
	a.SkipCRDs = true
	if o.DryRun {
		a.DryRun, a.DryRunOption, a.Wait, a.WaitForJobs = true, "server", false, false
	}
	defer c.waitWith(o.Poller)()
	return a.RunWithContext(ctx, chart, values)
}

// waitWith makes p the waiter until the returned function is called.
func (c *Client) waitWith(p *Poller) func() {
	c.kube.poller = p
	return func() { c.kube.poller = nil }
}

// mappedOnly is the KubeClient of a dry-run install that takes ownership:
// Build maps the manifest's objects to the cluster's kinds (an unknown kind
// is still an error) and returns none, so that Helm does not read each.
type mappedOnly struct{ kube.Interface }

func (m mappedOnly) Build(r io.Reader, validate bool) (kube.ResourceList, error) {
	if _, err := m.Interface.Build(r, validate); err != nil {
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
	Force                    bool
	CleanupOnFail            bool
	ReuseValues              bool
	MaxHistory               int
	PostRenderer             postrender.PostRenderer
	Description              string
	// Poller, when set, waits instead of Helm 3's waiter.
	Poller *Poller
	// DryRun renders and validates against the cluster without writing.
	DryRun bool
}

// Upgrade upgrades release name to chart with values; CRDs are the caller's.
func (c *Client) Upgrade(ctx context.Context, name string, chart *Chart, values map[string]any, o UpgradeOptions) (*Release, error) {
	a := action.NewUpgrade(c.cfg)
	a.Namespace = o.Namespace
	a.Timeout, a.Wait, a.WaitForJobs = o.Timeout, o.Wait, o.WaitForJobs
	a.DisableHooks = o.DisableHooks
	a.DisableOpenAPIValidation = o.DisableOpenAPIValidation
	a.SkipSchemaValidation = o.SkipSchemaValidation
	a.TakeOwnership = o.TakeOwnership
	a.Force = o.Force
	a.CleanupOnFail = o.CleanupOnFail
	a.ReuseValues = o.ReuseValues
	a.MaxHistory = o.MaxHistory
	a.PostRenderer = o.PostRenderer
	a.Description = o.Description
	a.SkipCRDs = true
	if o.DryRun {
		a.DryRun, a.DryRunOption, a.Wait, a.WaitForJobs = true, "server", false, false
	}
	defer c.waitWith(o.Poller)()
	return a.RunWithContext(ctx, name, chart, values)
}

// TestOptions of Test.
type TestOptions struct {
	Namespace string
	Timeout   time.Duration
	// Include and Exclude filter tests by hook name.
	Include, Exclude []string
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
	return a.Run(name)
}

// RollbackOptions of Rollback.
type RollbackOptions struct {
	// Version to roll back to; 0 is the previous one.
	Version           int
	Timeout           time.Duration
	Wait, WaitForJobs bool
	DisableHooks      bool
	Force             bool
	Recreate          bool
	CleanupOnFail     bool
	MaxHistory        int
	// Poller, when set, waits instead of Helm 3's waiter.
	Poller *Poller
}

// Rollback rolls release name back.
func (c *Client) Rollback(name string, o RollbackOptions) error {
	a := action.NewRollback(c.cfg)
	a.Version = o.Version
	a.Timeout, a.Wait, a.WaitForJobs = o.Timeout, o.Wait, o.WaitForJobs
	a.DisableHooks, a.Force, a.Recreate = o.DisableHooks, o.Force, o.Recreate
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
}

// Uninstall removes release name; a release that does not exist is an
// error wrapping driver.ErrReleaseNotFound.
func (c *Client) Uninstall(name string, o UninstallOptions) (*Release, error) {
	a := action.NewUninstall(c.cfg)
	a.Timeout, a.Wait = o.Timeout, o.Wait
	a.DisableHooks, a.KeepHistory = o.DisableHooks, o.KeepHistory
	a.DeletionPropagation = o.DeletionPropagation
	a.Description = o.Description
	res, err := a.Run(name)
	if res == nil {
		return nil, err
	}
	return res.Release, err
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
