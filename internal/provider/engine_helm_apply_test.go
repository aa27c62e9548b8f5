package provider

import (
	"testing"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
)

// TestRenderedAsPlanned: an install's release is taken as planned only
// where its manifest and hooks are the bytes this process's newest plan of
// the same release rendered; anything else is compared object by object.
func TestRenderedAsPlanned(t *testing.T) {
	t.Parallel()
	const id = "apps/rendered-as-planned"
	hook := &helm.Hook{Name: "migrate", Manifest: "kind: Job\nmetadata:\n  name: migrate\n"}
	rememberRender(id, "kind: ConfigMap\ndata:\n  color: green\n", []*helm.Hook{hook})
	for _, tc := range []struct {
		name   string
		id     string
		latest *helm.Release
		want   bool
	}{
		{"the bytes planned", id, &helm.Release{Manifest: "kind: ConfigMap\ndata:\n  color: green\n", Hooks: []*helm.Hook{hook}}, true},
		{"another manifest", id, &helm.Release{Manifest: "kind: ConfigMap\ndata:\n  color: none\n", Hooks: []*helm.Hook{hook}}, false},
		{"a hook the plan lacked", id, &helm.Release{Manifest: "kind: ConfigMap\ndata:\n  color: green\n"}, false},
		{"a release no plan of this process rendered", "apps/other", &helm.Release{Manifest: "kind: ConfigMap\ndata:\n  color: green\n", Hooks: []*helm.Hook{hook}}, false},
		{"nothing deployed", id, nil, false},
	} {
		if got := renderedAsPlanned(tc.id, tc.latest); got != tc.want {
			t.Errorf("%s: as planned %v, want %v", tc.name, got, tc.want)
		}
	}
}
