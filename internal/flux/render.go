package flux

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/manifest"
)

// helm-controller renders with its own Helm, whose version may render
// some objects otherwise than the provider's plan did (a block scalar's
// final newline, an empty map written as null). RenderDifferences name
// such fields, so that an apply can say so and later plans can show the
// controller's render of them.

// RenderDifference is a field the controller deployed otherwise than the
// plan rendered it, as the provider shows objects (JSON values;
// manifest.Absent where absent; Secret values hashed, sensitive strings
// hidden).
type RenderDifference struct {
	Planned  string `json:"planned"`
	Deployed string `json:"deployed"`
}

// RenderDifferences are the differences of a release: object key → JSON
// pointer → difference; the pointer "" stands for the whole object
// (planned and not deployed, or the other way round, or shown as digests).
type RenderDifferences map[string]map[string]RenderDifference

// wholeObject is how a difference of a whole object names it.
const wholeObject = "the object"

// RenderDifferencesOf compares the planned objects (as shown, the known
// ones) with the deployed ones. Fields the API server stores alike are
// not different (manifest.StoredLeaves).
func RenderDifferencesOf(planned, deployed map[string]string) RenderDifferences {
	out := RenderDifferences{}
	for key, p := range planned {
		d, found := deployed[key]
		switch {
		case !found:
			out.add(key, "", RenderDifference{Planned: wholeObject, Deployed: manifest.Absent})
		case manifest.IsDigest(p):
			if !manifest.IsDigest(d) {
				d = manifest.Digest(d)
			}
			if d != p {
				out.add(key, "", RenderDifference{Planned: p, Deployed: d})
			}
		case d != p:
			plannedLeaves, deployedLeaves := manifest.StoredLeaves(p), manifest.StoredLeaves(d)
			for ptr, pv := range plannedLeaves {
				if dv, ok := deployedLeaves[ptr]; !ok || dv != pv {
					out.add(key, ptr, RenderDifference{Planned: pv, Deployed: manifest.OrAbsent(dv, ok)})
				}
			}
			for ptr, dv := range deployedLeaves {
				if _, ok := plannedLeaves[ptr]; !ok {
					out.add(key, ptr, RenderDifference{Planned: manifest.Absent, Deployed: dv})
				}
			}
		}
	}
	for key := range deployed {
		if _, ok := planned[key]; !ok {
			out.add(key, "", RenderDifference{Planned: manifest.Absent, Deployed: wholeObject})
		}
	}
	return out
}

func (ds RenderDifferences) add(key, ptr string, d RenderDifference) {
	if ds[key] == nil {
		ds[key] = map[string]RenderDifference{}
	}
	ds[key][ptr] = d
}

// Lines lists the differences, one field a line, in order.
func (ds RenderDifferences) Lines() string {
	var b strings.Builder
	for _, key := range slices.Sorted(maps.Keys(ds)) {
		for _, ptr := range slices.Sorted(maps.Keys(ds[key])) {
			d := ds[key][ptr]
			field := ptr
			if field == "" {
				field = "(the object)"
			}
			fmt.Fprintf(&b, "- %s %s: planned %s, deployed %s\n", key, field, d.Planned, d.Deployed)
		}
	}
	return b.String()
}

// AsDeployed is the object shown (planned under key) with each field the
// controller is known to deploy otherwise set as it deploys it, where the
// render still gives it the value it gave when the controller deployed it
// otherwise: what the controller will deploy. Other changes stay; an
// object shown as a digest, and differences of whole objects, are left as
// rendered. false when nothing is set.
func (ds RenderDifferences) AsDeployed(key, shown string) (string, bool) {
	if ds[key] == nil || manifest.IsDigest(shown) {
		return "", false
	}
	from, to := map[string]string{}, map[string]string{}
	for ptr, d := range ds[key] {
		from[ptr], to[ptr] = d.Planned, d.Deployed
	}
	return manifest.WithFields(shown, from, to)
}
