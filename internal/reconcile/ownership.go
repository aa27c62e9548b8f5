package reconcile

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/postrender"
)

// ErrNotOwned: a release exists under the name that this resource did not
// make. It is never taken over silently (the v1 safeguard).
var ErrNotOwned = errors.New("release owned by something else")

// OwnershipError refuses a release this resource did not make; it is
// ErrNotOwned.
type OwnershipError struct {
	// Release is <namespace>/<name>.v<revision>.
	Release string
	// Owners are the <namespace>/<name> of the other helmrelease_release
	// resources whose origin labels the objects carry; empty when nothing
	// of ours made it (helm, another tool).
	Owners []string
	// Unrecorded: the objects carry this resource's own origin labels, but
	// it is being created, so the release is not in its state: another
	// state declares the same resource, or this one lost it.
	Unrecorded bool
}

func (e *OwnershipError) Error() string {
	if e.Unrecorded {
		return fmt.Sprintf("%s: release %s is managed by helmrelease_release %s in another Terraform state (or one that lost it); import it (terraform import) to manage it from this state, or give this resource another release_name",
			ErrNotOwned, e.Release, strings.Join(e.Owners, ", "))
	}
	if len(e.Owners) > 0 {
		return fmt.Sprintf("%s: release %s is managed by helmrelease_release %s; give this resource another release_name, or remove the other resource first",
			ErrNotOwned, e.Release, strings.Join(e.Owners, ", "))
	}
	return fmt.Sprintf("%s: release %s exists and was not made by a helmrelease_release; import it (terraform import) to adopt it, or choose another release_name",
		ErrNotOwned, e.Release)
}

func (e *OwnershipError) Unwrap() error { return ErrNotOwned }

// CheckOwnership allows acting on a release this resource has no record of
// only when its objects carry this resource's origin labels (the state was
// lost), or when the spec adopts it. Objects labelled for another
// helmrelease_release always refuse.
func CheckOwnership(rel *helm.Release, s *Spec) error {
	owners := origins(rel.Manifest)
	mine := s.Namespace + "/" + s.Name
	var others []string
	for o := range owners {
		if o != mine {
			others = append(others, o)
		}
	}
	sort.Strings(others)
	switch {
	case len(others) > 0:
		return &OwnershipError{Release: describe(rel), Owners: others}
	case owners[mine] || s.Adopt:
		return nil
	default:
		return &OwnershipError{Release: describe(rel)}
	}
}

// CheckCreate allows a create to act on the release of its name only when
// there is none (or one uninstalled), or it is left pending by an
// interrupted install of the same resource, which the create completes:
// one deployed or failed is the release of another state declaring the
// same resource (or of this one, which lost it), never taken over
// silently; import adopts it. A spec that adopts allows a release without
// other owners.
func CheckCreate(rel *helm.Release, s *Spec) error {
	if rel == nil || rel.Info.Status == helm.StatusUninstalled {
		return nil
	}
	if err := CheckOwnership(rel, s); err != nil || rel.Info.Status.IsPending() || s.Adopt {
		return err
	}
	return &OwnershipError{Release: describe(rel), Owners: []string{s.Namespace + "/" + s.Name}, Unrecorded: true}
}

// LockHolder says who runs the pending operation of rel, from the origin
// labels of its objects: a helmrelease_release, Flux's helm-controller for
// a HelmRelease, or another Helm client.
func LockHolder(rel *helm.Release) string {
	if owners := slices.Sorted(maps.Keys(origins(rel.Manifest))); len(owners) > 0 {
		return "helmrelease_release " + strings.Join(owners, ", ")
	}
	if owners := slices.Sorted(maps.Keys(originsOf(rel.Manifest, postrender.FluxOriginGroup))); len(owners) > 0 {
		return "Flux's helm-controller, for HelmRelease " + strings.Join(owners, ", ")
	}
	return "another Helm client (the helm CLI, or a tool built on Helm)"
}

// origins returns the <namespace>/<name> of the origin labels in manifest.
func origins(manifest string) map[string]bool {
	return originsOf(manifest, postrender.OriginGroup)
}

// originsOf returns the <namespace>/<name> of the origin labels of group.
func originsOf(manifest, group string) map[string]bool {
	out := map[string]bool{}
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifest), 4096)
	for {
		var obj struct {
			Metadata struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
		}
		if err := dec.Decode(&obj); err != nil {
			// io.EOF, or a manifest Helm would not have stored.
			return out
		}
		name, ns := obj.Metadata.Labels[group+"/name"], obj.Metadata.Labels[group+"/namespace"]
		if name != "" {
			out[ns+"/"+name] = true
		}
	}
}
