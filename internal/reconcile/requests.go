package reconcile

import "github.com/helmrelease/terraform-provider-helmrelease/internal/helm"

// Labels of a release's Helm storage by which the helmrelease_force and
// helmrelease_reset actions ask for what force_at and reset_at do, without
// the configuration: a token (when it was asked) that the next run handles
// once, as a new force_at or reset_at value.
const (
	ForceRequestLabel = "helmrelease.terraform.io/force-requested-at"
	ResetRequestLabel = "helmrelease.terraform.io/reset-requested-at"
)

// Requests are the tokens of ForceRequestLabel and ResetRequestLabel.
type Requests struct {
	Force string `json:"force,omitempty"`
	Reset string `json:"reset,omitempty"`
}

// RequestsOf reads the request labels of rel (nil: none).
func RequestsOf(rel *helm.Release) Requests {
	if rel == nil {
		return Requests{}
	}
	return Requests{Force: rel.Labels[ForceRequestLabel], Reset: rel.Labels[ResetRequestLabel]}
}

// Apply folds the requests into the force and reset tokens of s: a token
// changes when the configured one or the requested one does.
func (r Requests) Apply(s *Spec) {
	s.ForceAt = combineToken(s.ForceAt, r.Force)
	s.ResetAt = combineToken(s.ResetAt, r.Reset)
}

func combineToken(configured, requested string) string {
	if requested == "" {
		return configured
	}
	return configured + "|requested@" + requested
}
