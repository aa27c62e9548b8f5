package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/manifest"
)

// PlannedKinds are the kinds that the CustomResourceDefinitions of the
// releases planned so far on one cluster define: what a release planned
// after them (its dependencies planned first) may use before the cluster
// serves those kinds, because the apply creates the CRDs first. Safe for
// concurrent use.
type PlannedKinds struct {
	mu    sync.Mutex
	kinds map[schema.GroupKind]PlannedKind
}

// PlannedKind is a kind a planned CRD defines.
type PlannedKind struct {
	// Namespaced is the CRD's scope.
	Namespaced bool
	// Versions are the versions it serves.
	Versions []string
	// By names the release whose plan has the CRD.
	By string
}

// Record keeps the kinds of the CRDs among the objects of manifests, as
// planned by the release by.
func (p *PlannedKinds) Record(by string, manifests ...string) {
	if p == nil {
		return
	}
	for _, m := range manifests {
		if !strings.Contains(m, "CustomResourceDefinition") {
			continue // most releases: nothing to parse
		}
		objs, err := manifest.Parse(m, "", nil)
		if err != nil {
			continue // a manifest the render refuses
		}
		for _, o := range objs {
			u := o.Object
			if u.GetKind() != "CustomResourceDefinition" || u.GroupVersionKind().Group != "apiextensions.k8s.io" {
				continue
			}
			group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
			scope, _, _ := unstructured.NestedString(u.Object, "spec", "scope")
			versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
			if group == "" || kind == "" {
				continue
			}
			k := PlannedKind{Namespaced: scope != "Cluster", By: by}
			for _, v := range versions {
				if vm, ok := v.(map[string]any); ok {
					if name, _ := vm["name"].(string); name != "" && vm["served"] != false {
						k.Versions = append(k.Versions, name)
					}
				}
			}
			p.mu.Lock()
			if p.kinds == nil {
				p.kinds = map[schema.GroupKind]PlannedKind{}
			}
			p.kinds[schema.GroupKind{Group: group, Kind: kind}] = k
			p.mu.Unlock()
		}
	}
}

// Lookup returns the planned kind gvk names, if a planned CRD defines it
// at that version.
func (p *PlannedKinds) Lookup(gvk schema.GroupVersionKind) (PlannedKind, bool) {
	if p == nil {
		return PlannedKind{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	k, ok := p.kinds[gvk.GroupKind()]
	if !ok || !slices.Contains(k.Versions, gvk.Version) {
		return PlannedKind{}, false
	}
	return k, true
}

// All returns every version of every planned kind.
func (p *PlannedKinds) All() []schema.GroupVersionKind {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []schema.GroupVersionKind
	for gk, k := range p.kinds {
		for _, v := range k.Versions {
			out = append(out, gk.WithVersion(v))
		}
	}
	slices.SortFunc(out, func(a, b schema.GroupVersionKind) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// Unserved returns the kinds of gvks that mapper does not map.
func Unserved(mapper meta.RESTMapper, gvks []schema.GroupVersionKind) []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for _, gvk := range gvks {
		if _, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); meta.IsNoMatchError(err) {
			out = append(out, gvk)
		}
	}
	return out
}

// WaitForKinds waits until the cluster serves every kind of gvks, asking
// discovery again each second, for at most timeout; it returns those it
// still does not serve. A CRD is served some moments after it is created
// (once established), and discovery caches what it saw before.
func (g *Getter) WaitForKinds(ctx context.Context, gvks []schema.GroupVersionKind, timeout time.Duration) ([]schema.GroupVersionKind, error) {
	missing := gvks
	var discoveryErr error
	_ = wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(context.Context) (bool, error) {
		g.Invalidate()
		mapper, err := g.ToRESTMapper()
		if err != nil {
			discoveryErr = err
			return false, nil // asked again
		}
		missing, discoveryErr = Unserved(mapper, gvks), nil
		return len(missing) == 0, nil
	})
	if discoveryErr != nil {
		return missing, fmt.Errorf("discovering the cluster's kinds: %w", discoveryErr)
	}
	return missing, nil
}
