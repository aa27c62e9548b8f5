package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
)

// actionData is the provider data of an action, set by Configure.
type actionData struct {
	data *providerData
}

func (a *actionData) Configure(_ context.Context, req action.ConfigureRequest, resp *action.ConfigureResponse) {
	data, err := configureData(req.ProviderData)
	if err != nil {
		resp.Diagnostics.AddError("Provider not configured", err.Error())
		return
	}
	a.data = data
}

// actionRelease is the release an action names by its identity, with a
// Helm client of its storage.
type actionRelease struct {
	ref string
	// namespace is the namespace of the release's Helm storage.
	namespace string
	cluster   *cluster
	client    *helm.Client
	// latest is the newest revision in storage; nil when there is none.
	latest *helm.Release
}

// openRelease reads the latest revision of release name in the Helm
// storage of namespace on the cluster clusterName names, with Helm's log
// lines going to logs (nil: discarded); nil with a diagnostic when it
// cannot.
func (a *actionData) openRelease(clusterName, namespace, name types.String, logs *helm.LogBuffer, diags *diag.Diagnostics) *actionRelease {
	if a.data == nil {
		diags.AddError("Provider not configured", "The helmrelease provider was not configured before the action ran.")
		return nil
	}
	ns := namespace.ValueString()
	r := &actionRelease{ref: releaseID(clusterName.ValueString(), ns, name.ValueString()), namespace: ns}
	var err error
	if r.cluster, err = a.data.cluster(clusterName); err != nil {
		clusterNotConfigured(diags, "Release "+r.ref, err)
		return nil
	}
	restConfig, err := r.cluster.clients.RESTConfig()
	if err != nil {
		clusterUnavailable(diags, path.Root("namespace"), err)
		return nil
	}
	if r.client, err = helm.NewClient(helm.ClientOptions{Getter: kube.NewGetter(restConfig, ns, ""), StorageNamespace: ns, Log: logs}); err != nil {
		diags.AddError("Release not reachable", fmt.Sprintf("Release %s: %s.", r.ref, err))
		return nil
	}
	if r.latest, err = r.client.LastRelease(name.ValueString()); err != nil {
		diags.AddError("Release not readable", fmt.Sprintf("Reading release %s from Helm storage: %s.\n\nCheck that the cluster is reachable and the provider's credentials may read and update Secrets in namespace %q.", r.ref, err, ns))
		return nil
	}
	return r
}
