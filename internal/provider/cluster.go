package provider

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/client-go/rest"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/flux"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
)

// clusterNamePattern is what a key of the provider's clusters may be: it
// starts resource IDs (<cluster>:<storage_namespace>/<release_name>), so
// it holds neither ':' nor '/'.
var clusterNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// errConfigUnknown is returned by clients whose configuration is not known
// yet (planning a cluster created in the same apply).
var errConfigUnknown = errors.New("the provider's settings of the cluster are not known until apply")

// errClusterNotConfigured is returned for a cluster name that the
// provider's clusters do not hold.
type errClusterNotConfigured struct {
	name       string
	configured []string
}

func (e *errClusterNotConfigured) Error() string {
	if len(e.configured) == 0 {
		return fmt.Sprintf("the provider configures no clusters, so none is named %q", e.name)
	}
	return fmt.Sprintf("the provider's clusters have no %q (they are %s)", e.name, strings.Join(e.configured, ", "))
}

// cluster is one Kubernetes cluster the provider reaches: the default one
// (the kubernetes block, name "") or one of clusters. Its clients,
// discovery and Flux client are made on first use, once per process, and
// shared by every release on it; all methods are safe for concurrent use.
type cluster struct {
	name    string
	clients *kube.Clients

	// discoveries are the cluster's discovery by impersonated user (""
	// for the provider's own).
	discoveries sync.Map // string → *kube.Discovery

	// plannedKinds are the kinds of the CRDs of the releases planned so
	// far on the cluster (reconcile.Options.PlannedKinds); unserved, by
	// release ID, the kinds a plan rendered that the cluster did not
	// serve, which its apply waits for (waitForKinds).
	plannedKinds kube.PlannedKinds
	unserved     sync.Map // string → []schema.GroupVersionKind

	// fluxMu guards flux, the cluster's Flux client, made on first use.
	fluxMu sync.Mutex
	flux   *flux.Client
}

func newCluster(name string, restConfig func() (*rest.Config, error)) *cluster {
	return &cluster{name: name, clients: kube.NewClients(restConfig)}
}

// unknownCluster is a cluster whose settings are not known until apply.
func unknownCluster(name string) *cluster {
	err := errConfigUnknown
	if name != "" {
		err = fmt.Errorf("cluster %q: %w", name, errConfigUnknown)
	}
	return newCluster(name, func() (*rest.Config, error) { return nil, err })
}

// known reports whether the cluster's settings are known (they are not at
// plan when the cluster is made in the same apply).
func (c *cluster) known() bool {
	_, err := c.clients.RESTConfig()
	return !errors.Is(err, errConfigUnknown)
}

// fluxClient is the cluster's shared client of Flux's objects.
func (c *cluster) fluxClient() (*flux.Client, error) {
	c.fluxMu.Lock()
	defer c.fluxMu.Unlock()
	if c.flux != nil {
		return c.flux, nil
	}
	cfg, err := c.clients.RESTConfig()
	if err != nil {
		return nil, err
	}
	e, err := flux.New(cfg)
	if err != nil {
		return nil, err
	}
	c.flux = e
	return e, nil
}

// discovery is the cluster's shared discovery for the user impersonate
// ("" for the provider's credentials).
func (c *cluster) discovery(cfg *rest.Config, impersonate string) *kube.Discovery {
	v, _ := c.discoveries.LoadOrStore(impersonate, kube.NewDiscovery(cfg, impersonate))
	return v.(*kube.Discovery)
}

// describe names the cluster in messages: `cluster "b"`, or "the
// provider's cluster" for the kubernetes block's.
func (c *cluster) describe() string {
	if c.name == "" {
		return "the provider's cluster"
	}
	return fmt.Sprintf("cluster %q", c.name)
}

// cluster returns the cluster a `cluster` attribute names: the kubernetes
// block's when null or empty, one whose settings are unknown when the name
// or the provider's clusters are, and an errClusterNotConfigured error for
// a name the provider does not configure.
func (d *providerData) cluster(name types.String) (*cluster, error) {
	switch {
	case name.IsUnknown():
		return unknownCluster(""), nil
	case name.ValueString() == "":
		return d.defaultCluster, nil
	case d.clustersUnknown:
		return unknownCluster(name.ValueString()), nil
	}
	if c, ok := d.clusters[name.ValueString()]; ok {
		return c, nil
	}
	return nil, &errClusterNotConfigured{name: name.ValueString(), configured: slices.Sorted(maps.Keys(d.clusters))}
}

// releaseID is the ID of a release: <storage_namespace>/<release_name>,
// prefixed with "<cluster>:" on a named cluster.
func releaseID(cluster, storageNamespace, releaseName string) string {
	id := storageNamespace + "/" + releaseName
	if cluster != "" {
		id = cluster + ":" + id
	}
	return id
}

// parseReleaseID reads an ID releaseID wrote; ok is false when it is not
// one.
func parseReleaseID(id string) (cluster, storageNamespace, releaseName string, ok bool) {
	path := id
	if c, p, found := strings.Cut(id, ":"); found {
		cluster, path = c, p
		if !clusterNamePattern.MatchString(cluster) {
			return "", "", "", false
		}
	}
	storageNamespace, releaseName, ok = strings.Cut(path, "/")
	if !ok || storageNamespace == "" || releaseName == "" || strings.Contains(storageNamespace, ":") || strings.Contains(releaseName, "/") {
		return "", "", "", false
	}
	return cluster, storageNamespace, releaseName, true
}

// clusterDescription describes the cluster attribute of a resource, data
// source, action or list resource: what names the cluster it acts on, and
// what a change does.
func clusterDescription(what, change string) string {
	return strings.TrimSpace("Name of the provider's `clusters` entry "+what+" (beyond Flux, whose HelmRelease acts on its own cluster, or on the one of a kubeconfig Secret with `kube_config`). "+change) + " Default: none, the cluster of the provider's `kubernetes` block."
}

// clusterNameValidator checks a cluster attribute's syntax; ModifyPlan and
// the operations check that the provider configures it.
func clusterNameValidator() validator.String {
	return stringvalidator.RegexMatches(clusterNamePattern, "must be the name of one of the provider's clusters: letters, digits, '-', '_' and '.'")
}
