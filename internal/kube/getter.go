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

// Getter serves Helm the clients of one REST configuration and namespace,
// without any kubeconfig file. Discovery and the REST mapper are built once
// and shared by the actions of a release (persistent client).
type Getter struct {
	config    *rest.Config
	namespace string

	once      sync.Once
	err       error
	discovery discovery.CachedDiscoveryInterface
	mapper    meta.RESTMapper
}

var _ genericclioptions.RESTClientGetter = (*Getter)(nil)

// NewGetter returns a getter for cfg whose default namespace is namespace.
// impersonate, when not empty, is the user the requests act as.
func NewGetter(cfg *rest.Config, namespace, impersonate string) *Getter {
	cfg = rest.CopyConfig(cfg)
	if impersonate != "" {
		cfg.Impersonate = rest.ImpersonationConfig{UserName: impersonate}
	}
	return &Getter{config: cfg, namespace: namespace}
}

// ServiceAccountUser is the user name of a service account, for impersonation.
func ServiceAccountUser(namespace, name string) string {
	return fmt.Sprintf("system:serviceaccount:%s:%s", namespace, name)
}

func (g *Getter) init() error {
	g.once.Do(func() {
		dc, err := discovery.NewDiscoveryClientForConfig(g.config)
		if err != nil {
			g.err = fmt.Errorf("creating discovery client: %w", err)
			return
		}
		g.discovery = memory.NewMemCacheClient(dc)
		g.mapper = restmapper.NewDeferredDiscoveryRESTMapper(g.discovery)
	})
	return g.err
}

// Invalidate forgets the cached discovery and REST mappings.
func (g *Getter) Invalidate() {
	if g.init() != nil {
		return
	}
	g.discovery.Invalidate()
	if r, ok := g.mapper.(meta.ResettableRESTMapper); ok {
		r.Reset()
	}
}

// ToRESTConfig implements genericclioptions.RESTClientGetter.
func (g *Getter) ToRESTConfig() (*rest.Config, error) { return rest.CopyConfig(g.config), nil }

// ToDiscoveryClient implements genericclioptions.RESTClientGetter.
func (g *Getter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	if err := g.init(); err != nil {
		return nil, err
	}
	return g.discovery, nil
}

// ToRESTMapper implements genericclioptions.RESTClientGetter.
func (g *Getter) ToRESTMapper() (meta.RESTMapper, error) {
	if err := g.init(); err != nil {
		return nil, err
	}
	return g.mapper, nil
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
