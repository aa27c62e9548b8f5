package helm

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"

	"helm.sh/helm/v4/pkg/kube"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/bytecache"
)

// builtManifests are the objects Helm's Build decoded from the manifests
// most recently built in this process (up to 8 MB of manifests, some 40 MB
// decoded), so that the same manifest is decoded once: the plan Terraform
// makes while applying and the apply render the same release, and an
// upgrade builds its new manifest twice (to validate it, then to apply
// it). Nothing is kept across processes.
var builtManifests = bytecache.New[[]builtObject](8 << 20)

// builtObject is what Build made of one object, but its REST client,
// which each Build takes from its own client's factory (credentials and
// impersonation of the action at hand).
type builtObject struct {
	mapping                          *meta.RESTMapping
	namespace, name, resourceVersion string
	object                           runtime.Object
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
		if objects, ok := builtManifests.Get(key); ok {
			if list, err := k.fromBuilt(objects); err == nil {
				k.reads.built(list)
				return list, nil
			}
		}
	}
	list, err := k.Client.Build(bytes.NewReader(manifest), validate)
	if err != nil {
		return list, err
	}
	k.reads.built(list)
	if !keyed {
		return list, nil
	}
	objects := make([]builtObject, len(list))
	for i, info := range list {
		objects[i] = builtObject{mapping: info.Mapping, namespace: info.Namespace, name: info.Name, resourceVersion: info.ResourceVersion, object: info.Object.DeepCopyObject()}
	}
	builtManifests.Add(key, len(manifest), objects)
	return list, nil
}

// unstructuredClients is a factory that makes the REST clients of Build's
// objects (kubectl's).
type unstructuredClients interface {
	UnstructuredClientForMapping(*meta.RESTMapping) (resource.RESTClient, error)
}

// builtKey is the key of manifest built by k; keyed false when k's cluster
// cannot be told or its factory makes no clients for copies.
func (k *kubeClient) builtKey(manifest []byte, validate bool) (bytecache.Key, bool) {
	if _, ok := k.Factory.(unstructuredClients); !ok {
		return bytecache.Key{}, false
	}
	cfg, err := k.Factory.ToRESTConfig()
	if err != nil {
		return bytecache.Key{}, false
	}
	ns := k.Namespace
	if ns == "" {
		if ns, _, err = k.Factory.ToRawKubeConfigLoader().Namespace(); err != nil {
			return bytecache.Key{}, false
		}
	}
	h := sha256.New()
	// The cluster (its mappings) and the namespace Build defaults to.
	fmt.Fprintf(h, "%q %q %q %t\n", cfg.Host, cfg.APIPath, ns, validate)
	h.Write(manifest)
	var key bytecache.Key
	h.Sum(key[:0])
	return key, true
}

// fromBuilt is objects, copied, with k's REST clients.
func (k *kubeClient) fromBuilt(objects []builtObject) (kube.ResourceList, error) {
	// One client per group-version, as Build's: making one reads the
	// credentials' files.
	clients := map[schema.GroupVersion]resource.RESTClient{}
	list := make(kube.ResourceList, len(objects))
	for i, o := range objects {
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
