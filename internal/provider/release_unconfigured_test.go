package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/client-go/rest"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// TestReadWithoutACluster: a refresh never passes silently for a cluster
// it could not look at. Settings unknown until apply defer the refresh
// where Terraform can defer, and keep the state where it cannot; no
// settings at all are an error that says what to configure, and so is a
// cluster name the provider's clusters do not hold. The state is kept
// either way. Each case is tried on the default cluster and on a named one.
func TestReadWithoutACluster(t *testing.T) {
	for _, cluster := range []string{"", "east"} {
		t.Run("cluster "+cluster, func(t *testing.T) { testReadWithoutACluster(t, cluster) })
	}
}

func testReadWithoutACluster(t *testing.T, clusterName string) {
	ctx := context.Background()
	s := releaseSchema()
	m := nullReleaseModel()
	m.ID, m.Name, m.Namespace = types.StringValue(releaseID(clusterName, "apps", "web")), types.StringValue("web"), types.StringValue("apps")
	if clusterName != "" {
		m.Cluster = types.StringValue(clusterName)
	}
	m.ReleaseName, m.TargetNamespace, m.StorageNamespace = types.StringValue("web"), types.StringValue("apps"), types.StringValue("apps")
	st := &reconcile.Status{History: []reconcile.Snapshot{{Name: "web", Namespace: "apps", Version: 1, Status: "deployed"}}}
	status, d := statusObject(ctx, st)
	if d.HasError() {
		t.Fatal(d)
	}
	m.Status = status
	state := tfsdk.State{Schema: s}
	if d := state.Set(ctx, m); d.HasError() {
		t.Fatal(d)
	}
	for _, tc := range []struct {
		name     string
		err      error
		named    []string // the provider's clusters, each failing with err
		unknown  bool     // the provider's clusters are unknown
		deferral bool
		deferred bool
		errors   string
	}{
		{name: "settings unknown, deferral allowed", err: errConfigUnknown, named: []string{clusterName}, deferral: true, deferred: true},
		{name: "settings unknown, no deferral", err: errConfigUnknown, named: []string{clusterName}},
		{name: "nothing configured", err: kube.ErrNotConfigured, named: []string{clusterName}, deferral: true, errors: "Kubernetes cluster not configured"},
		{name: "clusters unknown", err: kube.ErrNotConfigured, unknown: true, deferral: true, deferred: clusterName != "", errors: map[bool]string{true: "Kubernetes cluster not configured"}[clusterName == ""]},
		{name: "cluster not in clusters", err: kube.ErrNotConfigured, named: []string{"west"}, deferral: true, errors: map[bool]string{true: "Kubernetes cluster not configured", false: "Cluster not configured"}[clusterName == ""]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fail := func() (*rest.Config, error) { return nil, tc.err }
			data := &providerData{defaultCluster: newCluster("", fail), clusters: map[string]*cluster{}, clustersUnknown: tc.unknown}
			for _, name := range tc.named {
				if name != "" {
					data.clusters[name] = newCluster(name, fail)
				}
			}
			r := &releaseResource{data: data}
			resp := &resource.ReadResponse{State: tfsdk.State{Schema: s, Raw: state.Raw.Copy()}}
			r.Read(ctx, resource.ReadRequest{State: state, ClientCapabilities: resource.ReadClientCapabilities{DeferralAllowed: tc.deferral}}, resp)
			if got := resp.Deferred != nil && resp.Deferred.Reason == resource.DeferredReasonProviderConfigUnknown; got != tc.deferred {
				t.Errorf("deferred = %v (%v), want %v", got, resp.Deferred, tc.deferred)
			}
			switch {
			case tc.errors == "" && resp.Diagnostics.HasError():
				t.Errorf("diagnostics %v", resp.Diagnostics)
			case tc.errors != "" && (!resp.Diagnostics.HasError() || resp.Diagnostics.Errors()[0].Summary() != tc.errors):
				t.Errorf("diagnostics %v, want the error %q", resp.Diagnostics, tc.errors)
			}
			if !resp.State.Raw.Equal(state.Raw) {
				t.Error("the state changed")
			}
		})
	}
}
