package kube

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Clients are the Kubernetes clients of one provider configuration. They are
// built on first use and then shared: every method is safe for concurrent use.
type Clients struct {
	restConfig func() (*rest.Config, error)

	once      sync.Once
	err       error
	config    *rest.Config
	clientset kubernetes.Interface
	discovery discovery.CachedDiscoveryInterface
	mapper    *restmapper.DeferredDiscoveryRESTMapper
}

// NewClients returns clients that resolve their configuration lazily with
// restConfig, so that a provider whose cluster does not exist yet can still
// plan what needs no cluster.
func NewClients(restConfig func() (*rest.Config, error)) *Clients {
	return &Clients{restConfig: restConfig}
}

func (c *Clients) init() error {
	c.once.Do(func() {
		cfg, err := c.restConfig()
		if err != nil {
			c.err = err
			return
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			c.err = fmt.Errorf("creating Kubernetes client: %w", err)
			return
		}
		dc, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			c.err = fmt.Errorf("creating discovery client: %w", err)
			return
		}
		if l, ok := cfg.RateLimiter.(*serverThrottled); ok {
			go probeAPF(cfg, l)
		}
		c.config = cfg
		c.clientset = cs
		c.discovery = memory.NewMemCacheClient(dc)
		c.mapper = restmapper.NewDeferredDiscoveryRESTMapper(c.discovery)
	})
	return c.err
}

// RESTConfig returns a copy of the REST configuration.
func (c *Clients) RESTConfig() (*rest.Config, error) {
	if err := c.init(); err != nil {
		return nil, err
	}
	return rest.CopyConfig(c.config), nil
}

// Clientset returns the typed client.
func (c *Clients) Clientset() (kubernetes.Interface, error) {
	if err := c.init(); err != nil {
		return nil, err
	}
	return c.clientset, nil
}

// Discovery returns the shared, memory-cached discovery client.
func (c *Clients) Discovery() (discovery.CachedDiscoveryInterface, error) {
	if err := c.init(); err != nil {
		return nil, err
	}
	return c.discovery, nil
}

// RESTMapper returns the shared mapper; it refreshes discovery when asked
// for a kind it does not know (a CRD installed meanwhile).
func (c *Clients) RESTMapper() (meta.ResettableRESTMapper, error) {
	if err := c.init(); err != nil {
		return nil, err
	}
	return c.mapper, nil
}
