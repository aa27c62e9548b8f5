package helm

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"sync"

	"helm.sh/helm/v4/pkg/kube"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"
)

// builtLimit is how many bytes of manifests builtManifests keeps decoded.
const builtLimit = 32 << 20

// builtManifests are the objects Helm's Build decoded from the manifests
// most recently built in this process, so that the same manifest is
// decoded once: the plan Terraform makes while applying and the apply
// render the same release, and an upgrade builds its new manifest twice
// (to validate it, then to apply it). Nothing is kept across processes.
var builtManifests = &builtCache{entries: map[builtKey]*builtEntry{}}

// builtKey names a manifest built for one cluster and namespace, with or
// without client-side validation.
type builtKey [sha256.Size]byte

// builtObject is what Build made of one object, but its REST client,
// which each Build takes from its own client's factory (credentials and
// impersonation of the action at hand).
type builtObject struct {
	mapping                          *meta.RESTMapping
	namespace, name, resourceVersion string
	object                           runtime.Object
}

type builtEntry struct {
	key     builtKey
	size    int
	objects []builtObject
}

// builtCache is a small cache of built manifests, the oldest dropped first
// once their bytes exceed builtLimit.
type builtCache struct {
	mu      sync.Mutex
	entries map[builtKey]*builtEntry
	order   []builtKey
	size    int
}

func (c *builtCache) get(k builtKey) *builtEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries[k]
}

func (c *builtCache) put(e *builtEntry) {
	if e.size > builtLimit {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[e.key]; ok {
		return
	}
	c.entries[e.key] = e
	c.order = append(c.order, e.key)
	c.size += e.size
	for c.size > builtLimit {
		oldest := c.entries[c.order[0]]
		delete(c.entries, oldest.key)
		c.order = c.order[1:]
		c.size -= oldest.size
	}
}

// Build is Helm's, decoding a manifest once per process: a manifest built
// before for the same cluster and namespace is returned as copies of the
// objects decoded then, with this client's REST clients. Objects are
// decoded again only when the manifest differs by a byte.
func (k *kubeClient) Build(r io.Reader, validate bool) (kube.ResourceList, error) {
	manifest, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading the manifest to build: %w", err)
	}
	key, keyed := k.builtKey(manifest, validate)
	if keyed {
		if e := builtManifests.get(key); e != nil {
			if list, err := k.fromBuilt(e); err == nil {
				return list, nil
			}
		}
	}
	list, err := k.Client.Build(bytes.NewReader(manifest), validate)
	if err != nil || !keyed {
		return list, err
	}
	e := &builtEntry{key: key, size: len(manifest), objects: make([]builtObject, len(list))}
	for i, info := range list {
		e.objects[i] = builtObject{mapping: info.Mapping, namespace: info.Namespace, name: info.Name, resourceVersion: info.ResourceVersion, object: info.Object.DeepCopyObject()}
	}
	builtManifests.put(e)
	return list, nil
}

// unstructuredClients is a factory that makes the REST clients of Build's
// objects (kubectl's).
type unstructuredClients interface {
	UnstructuredClientForMapping(*meta.RESTMapping) (resource.RESTClient, error)
}

// builtKey is the key of manifest built by k; keyed false when k's cluster
// cannot be told or its factory makes no clients for copies.
func (k *kubeClient) builtKey(manifest []byte, validate bool) (builtKey, bool) {
	if _, ok := k.Factory.(unstructuredClients); !ok {
		return builtKey{}, false
	}
	cfg, err := k.Factory.ToRESTConfig()
	if err != nil {
		return builtKey{}, false
	}
	ns := k.Namespace
	if ns == "" {
		if ns, _, err = k.Factory.ToRawKubeConfigLoader().Namespace(); err != nil {
			return builtKey{}, false
		}
	}
	h := sha256.New()
	// The cluster (its mappings) and the namespace Build defaults to.
	fmt.Fprintf(h, "%q %q %q %t\n", cfg.Host, cfg.APIPath, ns, validate)
	h.Write(manifest)
	var key builtKey
	h.Sum(key[:0])
	return key, true
}

// fromBuilt is e's objects, copied, with k's REST clients.
func (k *kubeClient) fromBuilt(e *builtEntry) (kube.ResourceList, error) {
	// One client per group-version, as Build's: making one reads the
	// credentials' files.
	clients := map[schema.GroupVersion]resource.RESTClient{}
	list := make(kube.ResourceList, len(e.objects))
	for i, o := range e.objects {
		gv := o.mapping.GroupVersionKind.GroupVersion()
		client, ok := clients[gv]
		if !ok {
			var err error
			if client, err = k.Factory.(unstructuredClients).UnstructuredClientForMapping(o.mapping); err != nil {
				return nil, fmt.Errorf("creating a client for %s: %w", o.mapping.GroupVersionKind, err)
			}
			clients[gv] = client
		}
		list[i] = &resource.Info{
			Client:          client,
			Mapping:         o.mapping,
			Namespace:       o.namespace,
			Name:            o.name,
			ResourceVersion: o.resourceVersion,
			Object:          o.object.DeepCopyObject(),
		}
	}
	return list, nil
}
