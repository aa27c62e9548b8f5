package kube

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Discovery is a cluster's discovery, cached in memory, and the REST mapper
// built on it, for one identity. Getters of many releases on one cluster
// share it: the API groups and the OpenAPI documents are then fetched and
// held once, not once per release. Safe for concurrent use.
type Discovery struct {
	config *rest.Config

	once      sync.Once
	err       error
	discovery discovery.CachedDiscoveryInterface
	mapper    meta.RESTMapper

	// validated are the sets of objects that passed a dry run of this
	// identity whole (DryRunApply), by digest.
	mu        sync.Mutex
	validated map[string]*ValidatedSet

	// fieldValidation are the kinds (schema.GroupVersionKind) the API
	// server was found to validate fields of (FieldValidationKinds).
	fieldValidation sync.Map
}

// NewDiscovery returns the discovery of cfg, impersonating impersonate
// when not empty; nothing is fetched until it is used.
func NewDiscovery(cfg *rest.Config, impersonate string) *Discovery {
	return &Discovery{config: withImpersonation(cfg, impersonate)}
}

func withImpersonation(cfg *rest.Config, impersonate string) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	if impersonate != "" {
		cfg.Impersonate = rest.ImpersonationConfig{UserName: impersonate}
	}
	return cfg
}

func (d *Discovery) init() error {
	d.once.Do(func() {
		dc, err := discovery.NewDiscoveryClientForConfig(d.config)
		if err != nil {
			d.err = fmt.Errorf("creating discovery client: %w", err)
			return
		}
		d.discovery = memory.NewMemCacheClient(dc)
		d.mapper = restmapper.NewDeferredDiscoveryRESTMapper(d.discovery)
	})
	return d.err
}

// Invalidate forgets the cached discovery and REST mappings.
func (d *Discovery) Invalidate() {
	if d.init() != nil {
		return
	}
	d.discovery.Invalidate()
	if r, ok := d.mapper.(meta.ResettableRESTMapper); ok {
		r.Reset()
	}
}

// Getter serves Helm the clients of one REST configuration and namespace,
// without any kubeconfig file. Discovery and the REST mapper are built once
// and shared by the actions of a release (persistent client), and by the
// releases given the same Discovery.
type Getter struct {
	config    *rest.Config
	namespace string
	discovery *Discovery
}

var _ genericclioptions.RESTClientGetter = (*Getter)(nil)

// NewGetter returns a getter for cfg whose default namespace is namespace.
// impersonate, when not empty, is the user the requests act as. shared, when
// not nil, is the discovery of that same configuration and user to use.
func NewGetter(cfg *rest.Config, namespace, impersonate string, shared ...*Discovery) *Getter {
	g := &Getter{config: withImpersonation(cfg, impersonate), namespace: namespace}
	if len(shared) > 0 && shared[0] != nil {
		g.discovery = shared[0]
	} else {
		g.discovery = &Discovery{config: g.config}
	}
	return g
}

// FieldValidationKinds is the set of kinds (schema.GroupVersionKind keys)
// the API server was found to validate fields of, shared by the getters
// of this discovery: Helm's validator checks a kind once per cluster, not
// once per release.
func (g *Getter) FieldValidationKinds() *sync.Map { return &g.discovery.fieldValidation }

// ServiceAccountUser is the user name of a service account, for impersonation.
func ServiceAccountUser(namespace, name string) string {
	return fmt.Sprintf("system:serviceaccount:%s:%s", namespace, name)
}

// Invalidate forgets the cached discovery and REST mappings.
func (g *Getter) Invalidate() { g.discovery.Invalidate() }

// ToRESTConfig implements genericclioptions.RESTClientGetter.
func (g *Getter) ToRESTConfig() (*rest.Config, error) { return rest.CopyConfig(g.config), nil }

// ToDiscoveryClient implements genericclioptions.RESTClientGetter.
func (g *Getter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	if err := g.discovery.init(); err != nil {
		return nil, err
	}
	return g.discovery.discovery, nil
}

// ToRESTMapper implements genericclioptions.RESTClientGetter.
func (g *Getter) ToRESTMapper() (meta.RESTMapper, error) {
	if err := g.discovery.init(); err != nil {
		return nil, err
	}
	return g.discovery.mapper, nil
}

// ToRawKubeConfigLoader implements genericclioptions.RESTClientGetter; only
// the namespace of the result is used by Helm.
func (g *Getter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["cluster"] = &clientcmdapi.Cluster{Server: g.config.Host}
	cfg.Contexts["context"] = &clientcmdapi.Context{Cluster: "cluster", Namespace: g.namespace}
	cfg.CurrentContext = "context"
	return clientcmd.NewDefaultClientConfig(*cfg, &clientcmd.ConfigOverrides{Context: clientcmdapi.Context{Namespace: g.namespace}})
}
