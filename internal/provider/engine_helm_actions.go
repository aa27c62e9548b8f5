package provider

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/action"
)

// ask records the request as a label of the release's latest revision in
// its Helm storage: the next refresh of the helmrelease_release that
// manages it sees it, its plan shows the action it calls for, and its
// apply runs it once.
func (helmFound) ask(_ context.Context, a *requestAction, rel *actionRelease, resp *action.InvokeResponse) {
	ref, client, latest := rel.ref, rel.client, rel.latest
	token := strconv.FormatInt(time.Now().UnixNano(), 10)
	if latest.Labels == nil {
		latest.Labels = map[string]string{}
	}
	latest.Labels[a.label] = token
	if err := client.UpdateRelease(latest); err != nil {
		resp.Diagnostics.AddError("Request not recorded", fmt.Sprintf("Recording the %s request on release %s: %s.\n\nThe provider's credentials must be allowed to update Secrets in namespace %q.", a.kind, ref, err, rel.namespace))
		return
	}
	resp.SendProgress(action.InvokeProgressEvent{Message: fmt.Sprintf("Release %s (revision %d): %s requested; the next plan of its helmrelease_release shows it, its apply runs it", ref, latest.Version, a.kind)})
}
