package provider

import (
	"context"
	"encoding/json"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// The private state of a helmrelease_release: what one operation hands to
// the next and that the schema does not show. Keys defined elsewhere,
// next to their readers and writers: privateDriftChanges (plan_detail.go),
// privateInSync and privateValidated (release_in_sync.go),
// privateSecretHashKey (release_secret_key.go), privateSensitivePaths
// (resources_mask.go), privateChartPin (release_chart_pin.go).
const (
	// privateDrift: the desired YAML of the objects Read found drifted or
	// missing, so that the plan puts them back: {"<key>": "<yaml>"}.
	privateDrift = "drift"
	// privateRequests: the force and reset requests of the
	// helmrelease_force and helmrelease_reset actions Read found on the
	// release (reconcile.Requests as JSON), so that the plan and the apply
	// handle them.
	privateRequests = "requests"
	// privateFlux: what the last apply wrote to the cluster for Flux
	// (fluxWritten).
	privateFlux = "flux"
	// privateFluxRender: the fields helm-controller deployed otherwise
	// than planned (renderDifferences as JSON).
	privateFluxRender = "flux_render"
)

// privateGetter is the private state of a request.
type privateGetter interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

// privateSetter is resp.Private of Create, Update and Read.
type privateSetter interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

// requestsOf reads the requests Read kept; none when there is no private
// state.
func requestsOf(ctx context.Context, private privateGetter, diags *diag.Diagnostics) reconcile.Requests {
	var out reconcile.Requests
	if private == nil {
		return out
	}
	raw, d := private.GetKey(ctx, privateRequests)
	diags.Append(d...)
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &out) // written by Read
	}
	return out
}
