package reconcile

import (
	"fmt"
	"strings"

	ssajsondiff "github.com/fluxcd/pkg/ssa/jsondiff"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// DriftReport is the result of comparing a release manifest with the
// cluster: the objects that are missing or whose fields differ.
type DriftReport struct {
	Objects []ObjectDrift

	// diffs are what correcting the drift applies.
	diffs []*ssajsondiff.Diff
}

// ObjectDrift is one drifted object.
type ObjectDrift struct {
	// Key is the object's resources key (<group>/<version>/<Kind>/<namespace>/<name>).
	Key string
	// Missing is true when the object does not exist in the cluster.
	Missing bool
	// Changes are the fields whose live value differs, when not Missing.
	Changes []FieldChange
	// Observed is the desired object with the drifted fields set to their
	// live values (removed where the live object lacks them), when not
	// Missing: compared with the desired object, it shows just the drift.
	Observed *unstructured.Unstructured
}

// FieldChange is one drifted field; values of Secrets are masked.
type FieldChange struct {
	// Path is a JSON pointer.
	Path string
	// Desired and Live are the values, as YAML; empty when absent.
	Desired string
	Live    string
}

// HasChanges reports whether any object drifted.
func (r *DriftReport) HasChanges() bool { return r != nil && len(r.Objects) > 0 }

// Summary says in one line what drifted.
func (r *DriftReport) Summary() string {
	if !r.HasChanges() {
		return "no drift"
	}
	var missing, changed []string
	for _, o := range r.Objects {
		if o.Missing {
			missing = append(missing, o.Key)
		} else {
			changed = append(changed, o.Key)
		}
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, fmt.Sprintf("%d missing (%s)", len(missing), strings.Join(missing, ", ")))
	}
	if len(changed) > 0 {
		parts = append(parts, fmt.Sprintf("%d changed (%s)", len(changed), strings.Join(changed, ", ")))
	}
	return "cluster drifted: " + strings.Join(parts, ", ")
}
