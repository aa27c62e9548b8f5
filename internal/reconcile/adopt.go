package reconcile

import (
	"fmt"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
)

// ReasonAdopted is the Ready reason of a release taken over by import.
const ReasonAdopted = "Adopted"

// AdoptedStatus is the status of a release taken over as it is (terraform
// import): its latest revision recorded as if this resource had made it,
// with no post-renderers and no common metadata, so that the next run
// upgrades it only where the configuration differs. Without a key in d
// (a list result, which has no private state to keep one in), the status
// records no digest of values or of the release.
func AdoptedStatus(rel *helm.Release, storageNamespace string, d Digests) (*Status, error) {
	snap := describeRevision(rel)
	if len(d.Key) > 0 {
		var err error
		if snap, err = d.snapshotOf(rel); err != nil {
			return nil, fmt.Errorf("adopting release %s: %w", describe(rel), err)
		}
	}
	st := &Status{
		LastAttemptedRevision:       snap.ChartVersion,
		LastAttemptedConfigDigest:   snap.ConfigDigest,
		LastAttemptedReleaseAction:  ActionUpgrade,
		LastAppliedRevision:         snap.ChartVersion,
		ObservedPostRenderersDigest: d.PostRenderers(&Spec{}),
		ObservedOptionsDigest:       OptionsDigest(&Spec{}),
		StorageNamespace:            storageNamespace,
		History:                     []Snapshot{snap},
	}
	st.SetCondition(Condition{Type: ConditionReady, Status: rel.Info.Status == helm.StatusDeployed, Reason: ReasonAdopted,
		Message: fmt.Sprintf("release %s (%s) adopted", describe(rel), rel.Info.Status)})
	return st, nil
}
