package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/manifest"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// kindsWait is how long an apply waits for the kinds its plan rendered
// before the cluster served them: a CRD created by the release applied
// before is served within seconds, once established.
const kindsWait = time.Minute

// unservedKinds reports the objects the plan rendered of kinds the
// cluster does not serve yet (and the chart's CRDs do not define): they
// are shown, validated at apply; without a release planned before that
// brings their CRDs, their scope is unknown, so the objects are known
// after apply. The apply waits for the kinds (waitForKinds).
func (p *releasePlan) unservedKinds(e *reconcile.Reconciler) {
	kinds := e.UnservedKinds()
	if len(kinds) == 0 {
		return
	}
	id := p.m.ID.ValueString()
	gvks := make([]schema.GroupVersionKind, 0, len(kinds))
	var lines []string
	unknownScope := false
	for _, k := range kinds {
		gvks = append(gvks, k.GroupVersionKind)
		line := fmt.Sprintf("- %s %s (%s): ", k.GroupVersion(), k.Kind, strings.Join(k.Objects, ", "))
		switch {
		case k.Planned == "":
			unknownScope = true
			line += "no release planned before this one defines it"
		case k.Planned == p.spec.ReleaseRef():
			line += "defined by a CRD among this release's own templates, which Helm cannot install with objects of its kind: move the CRD to the chart's crds/ directory, or to a release of its own"
		default:
			line += "defined by the CRDs of release " + k.Planned + ", planned before this one"
		}
		lines = append(lines, line)
	}
	p.cluster.unserved.Store(id, gvks)
	detail := fmt.Sprintf("helmrelease_release %s renders objects of kinds the cluster does not serve yet:\n%s\n\n"+
		"They are shown as rendered; the API server validates them at apply, once the kinds are served. The apply waits up to %s for them and fails, writing nothing, if they are still not served.", id, strings.Join(lines, "\n"), kindsWait)
	if unknownScope {
		// Namespaced or not decides an object's key: not known yet.
		p.out.resources = types.MapUnknown(types.StringType)
		p.out.changes = types.MapUnknown(types.StringType)
		detail += " Whether such objects are namespaced is not known before their CRD is, so resources is known after apply."
	}
	p.diags.AddAttributeWarning(path.Root("chart"), "Objects validated at apply", detail+
		"\n\nThe release that brings their CRDs must be applied first: give this one depends_on = [helmrelease_release.<that release>], so that it is planned and applied after it.")
}

// waitForKinds waits, before an apply with a Helm action, until the
// cluster serves the kinds of the objects planned (those its plan saw
// unserved among them: CRDs an earlier release of the apply created),
// and refuses the apply, naming them, when it still does not.
func (r *releaseResource) waitForKinds(ctx context.Context, m *releaseModel, diags *diag.Diagnostics) bool {
	if m.PlannedAction.IsNull() || m.PlannedAction.IsUnknown() || m.kubeConfigRef(ctx, diags) != nil {
		return true
	}
	c := r.clusterOf(m, diags)
	if c == nil || !c.known() {
		return true // the engine says why
	}
	var gvks []schema.GroupVersionKind
	if v, ok := c.unserved.LoadAndDelete(m.ID.ValueString()); ok {
		gvks = append(gvks, v.([]schema.GroupVersionKind)...)
	}
	if !m.Resources.IsUnknown() {
		// The chart's own CRDs (planned_crds, named <plural>.<group>)
		// are created by the action itself.
		own := map[string]bool{}
		for key := range m.PlannedCRDs.Elements() {
			if _, name, ok := strings.Cut(key[strings.LastIndex(key, "/")+1:], "."); ok {
				own[name] = true
			}
		}
		for key := range m.Resources.Elements() {
			if gvk, ok := manifest.KindOfKey(key); ok && !own[gvk.Group] && !slices.Contains(gvks, gvk) {
				gvks = append(gvks, gvk)
			}
		}
	}
	cfg, err := c.clients.RESTConfig()
	if err != nil || len(gvks) == 0 {
		return true
	}
	g := kube.NewGetter(cfg, m.Namespace.ValueString(), "", c.discovery(cfg, ""))
	mapper, err := g.ToRESTMapper()
	if err != nil {
		return true
	}
	unserved := kube.Unserved(mapper, gvks)
	if len(unserved) == 0 {
		return true
	}
	// What discovery cached before the CRDs were made: every identity's.
	c.discoveries.Range(func(_, d any) bool {
		d.(*kube.Discovery).Invalidate()
		return true
	})
	missing, err := g.WaitForKinds(ctx, unserved, kindsWait)
	if len(missing) == 0 {
		return true
	}
	names := make([]string, len(missing))
	for i, k := range missing {
		names[i] = k.GroupVersion().String() + " " + k.Kind
	}
	why := ""
	if err != nil {
		why = " (" + err.Error() + ")"
	}
	attrError(diags, path.Root("chart"), "Kinds not served",
		fmt.Sprintf("helmrelease_release %s: the cluster does not serve %s after %s%s, so the release's objects of those kinds cannot be applied. Nothing was written.", m.ID.ValueString(), strings.Join(names, ", "), kindsWait, why),
		"Apply the release (or other resource) that installs their CustomResourceDefinitions first: give this release depends_on = [<that resource>], so that it is planned and applied after it; or install the CRDs before this apply.")
	return false
}
