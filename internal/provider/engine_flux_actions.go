package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/action"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/flux"
)

// ask asks helm-controller, as `flux reconcile helmrelease --force`
// or `--reset` does (the HelmRelease's forceAt or resetAt annotation with
// a requestedAt of the same token), and waits for its outcome: the
// controller acts at once, so the request is done when the action ends,
// and nothing is left for the next apply. Helm storage, which the
// controller owns, is not written.
func (f fluxFound) ask(ctx context.Context, a *requestAction, _ *actionRelease, resp *action.InvokeResponse) {
	hr, fe := f.hr, f.client
	ref := hr.Namespace + "/" + hr.Name
	token := time.Now().UTC().Format(time.RFC3339Nano)
	since := time.Now()
	asked, err := fe.Ask(ctx, hr, flux.Request(a.kind), token)
	if err != nil {
		resp.Diagnostics.AddError("Request not sent", fmt.Sprintf("%s.\n\nThe provider's credentials must be allowed to patch HelmReleases in namespace %q.", err, hr.Namespace))
		return
	}
	resp.SendProgress(action.InvokeProgressEvent{Message: fmt.Sprintf("HelmRelease %s: %s requested from helm-controller (%s); waiting for its outcome", ref, a.kind, map[string]string{"force": flux.ForceAtAnnotation, "reset": flux.ResetAtAnnotation}[a.kind])})
	timeout := flux.RequestTimeout(asked)
	done, err := fe.Wait(ctx, hr.Namespace, hr.Name, flux.Want{Generation: asked.Generation, RequestedAt: token, Since: since}, timeout)
	if err != nil {
		resp.Diagnostics.AddError("Request not completed", fmt.Sprintf("HelmRelease %s: helm-controller took the %s request, but the release is not ready: %s\n\nFix the cause the conditions and events name, then run the action again or apply.", ref, a.kind, err))
		return
	}
	outcome := "the release is ready"
	if latest := done.Status.History.Latest(); latest != nil {
		outcome = fmt.Sprintf("revision %d of chart %s@%s is %s", latest.Version, latest.ChartName, latest.ChartVersion, latest.Status)
	}
	resp.SendProgress(action.InvokeProgressEvent{Message: fmt.Sprintf("HelmRelease %s: helm-controller handled the %s request: %s (failures: %d install, %d upgrade). The next refresh of its helmrelease_release shows it.", ref, a.kind, outcome, done.Status.InstallFailures, done.Status.UpgradeFailures)})
}
