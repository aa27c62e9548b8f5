package manifest

import (
	"crypto/sha256"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/bytecache"
)

// decoded keeps the objects of the manifests most recently parsed in this
// process (up to 8 MB of manifests, some 40 MB decoded), so that a
// manifest is decoded once however many readers it has: a plan validates
// and shows the same manifest; an install checks its post-rendered stream
// for hooks, then validates it. Each Parse gets copies. Nothing is kept
// across processes.
var decoded = bytecache.New[[]*unstructured.Unstructured](8 << 20)

// decodeOnce is decode(manifest), copied from decoded when it was decoded
// before.
func decodeOnce(manifest string) ([]*unstructured.Unstructured, error) {
	key := bytecache.Key(sha256.Sum256([]byte(manifest)))
	kept, ok := decoded.Get(key)
	if !ok {
		objs, err := decode(manifest)
		if err != nil {
			return nil, err
		}
		decoded.Add(key, len(manifest), copies(objs))
		return objs, nil
	}
	return copies(kept), nil
}

func copies(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		out[i] = o.DeepCopy()
	}
	return out
}
