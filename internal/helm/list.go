package helm

import (
	"context"
	"fmt"
	"slices"
	"strings"

	releasecommon "helm.sh/helm/v4/pkg/release/common"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/metadata"
)

// StoredRelease is the latest revision of a release and the namespace of
// its Helm storage.
type StoredRelease struct {
	StorageNamespace string
	Release          *Release
}

// ListReleases returns the latest revision of every release stored in
// namespace (every namespace when empty) whose storage Secrets carry labels
// matching selector (Helm's system labels and the release's own labels,
// `helm install --labels`), sorted by namespace and name. Releases
// uninstalled with their history kept are left out. It reads the storage
// Secrets' metadata once, then the latest revision of each release.
func ListReleases(ctx context.Context, getter genericclioptions.RESTClientGetter, namespace, selector string) ([]StoredRelease, error) {
	user, err := labels.Parse(selector)
	if err != nil {
		return nil, fmt.Errorf("label selector %q: %w", selector, err)
	}
	cfg, err := getter.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the cluster's configuration: %w", err)
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating a metadata client: %w", err)
	}
	// The latest revision of a release is never superseded.
	sel := "owner=helm,status!=superseded"
	if s := user.String(); s != "" {
		sel += "," + s
	}
	list, err := mc.Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}).Namespace(namespace).
		List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("listing Helm storage Secrets: %w", err)
	}
	type key struct{ namespace, name string }
	seen := map[key]bool{}
	for _, item := range list.Items {
		if name := item.Labels["name"]; name != "" {
			seen[key{item.Namespace, name}] = true
		}
	}
	keys := make([]key, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := strings.Compare(a.namespace, b.namespace); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	clients := map[string]*Client{}
	var out []StoredRelease
	for _, k := range keys {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("listing releases: %w", err)
		}
		c := clients[k.namespace]
		if c == nil {
			if c, err = NewClient(ClientOptions{Getter: getter, StorageNamespace: k.namespace}); err != nil {
				return nil, err
			}
			clients[k.namespace] = c
		}
		rel, err := c.LastRelease(k.name)
		if err != nil {
			return nil, err
		}
		if rel == nil || rel.Info == nil || rel.Info.Status == releasecommon.StatusUninstalled {
			continue
		}
		out = append(out, StoredRelease{StorageNamespace: k.namespace, Release: rel})
	}
	return out, nil
}
