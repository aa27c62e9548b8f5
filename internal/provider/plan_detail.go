package provider

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// objectDigestPrefix starts what plan_detail = "names" shows of an object;
// no object's YAML starts so.
const objectDigestPrefix = "sha256:"

// showsNames reports whether m shows objects as digests.
func (m *releaseModel) showsNames() bool { return m.PlanDetail.ValueString() == planDetailNames }

// applyPlanDetail turns the objects m shows into digests when its
// plan_detail asks for names. Values already digests, unknown and null
// ones stay as they are.
func (m *releaseModel) applyPlanDetail() {
	if !m.showsNames() {
		return
	}
	m.Resources = objectDigests(m.Resources)
	m.PlannedHooks = objectDigests(m.PlannedHooks)
	m.PlannedCRDs = objectDigests(m.PlannedCRDs)
}

func objectDigests(objects types.Map) types.Map {
	if objects.IsNull() || objects.IsUnknown() {
		return objects
	}
	elems := make(map[string]attr.Value, len(objects.Elements()))
	for k, v := range objects.Elements() {
		s, ok := v.(types.String)
		if ok && !s.IsNull() && !s.IsUnknown() && !strings.HasPrefix(s.ValueString(), objectDigestPrefix) {
			sum := sha256.Sum256([]byte(s.ValueString()))
			v = types.StringValue(objectDigestPrefix + hex.EncodeToString(sum[:]))
		}
		elems[k] = v
	}
	return types.MapValueMust(types.StringType, elems)
}

// showsDigests reports whether some known object of objects is a digest:
// a plan that shows the objects again in full cannot expand them.
func showsDigests(objects types.Map) bool {
	if objects.IsNull() || objects.IsUnknown() {
		return false
	}
	for _, v := range objects.Elements() {
		if s, ok := v.(types.String); ok && strings.HasPrefix(s.ValueString(), objectDigestPrefix) {
			return true
		}
	}
	return false
}
