package provider

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/values"
)

// privateInputs: what the refresh read of the inputs a render reads
// besides the chart (renderInputs), so that the apply's own plan, which
// reads them again, can tell that one changed since the plan. Terraform
// hands that plan the refreshed private state, never the first plan's:
// without the record, an input changed between the two (a values_from
// Secret another pipeline edits, or that a resource of the same run
// writes; a post-renderer's script edited) ends the apply in Terraform's
// "inconsistent final plan". The chart itself is pinned apart
// (privateChartPin), a local chart's files included.
const privateInputs = "inputs"

// renderInputs is what privateInputs holds: digests, never data, keyed
// with the resource's key (privateSecretHashKey), so that the private
// state of a plan file confirms no guess of a Secret's values.
type renderInputs struct {
	// ReadAt is when the refresh read them.
	ReadAt time.Time `json:"read_at"`
	// ValuesFrom are the data of values_from as the state configures it,
	// by valuesFromKey: a keyed digest, or absentInput.
	ValuesFrom map[string]string `json:"values_from,omitempty"`
	// PostRenderers is the state's post-renderers' digest with their
	// programs (reconcile.Digests.PostRenderers), and Settings without
	// (PostRenderersBeforePrograms): a plan of the same settings whose
	// programs digest otherwise reads other programs.
	PostRenderers string `json:"post_renderers,omitempty"`
	Settings      string `json:"post_renderer_settings,omitempty"`
	// Lookups are what the lookup calls of the last plan applied
	// (privateLookups) read, by lookupKey: a keyed digest, or absentInput.
	Lookups map[string]string `json:"lookups,omitempty"`
}

// privateLookups: the lookup calls the render of the plan applied made
// (a JSON list of helm.LookupCall), for the refreshes after it to read
// again. A plan that renders writes it; Terraform keeps a plan's private
// state through the apply.
const privateLookups = "lookups"

// lookupKey names a lookup call in renderInputs.Lookups.
func lookupKey(c helm.LookupCall) string {
	return strings.Join([]string{c.APIVersion, c.Kind, c.Namespace, c.Name}, "/")
}

// lookupDigest is the keyed digest of what a lookup call read.
func lookupDigest(key []byte, read helm.LookupRead) string {
	return inputDigest(key, read.Sum[:], read.Found)
}

// saveLookupCalls keeps the lookup calls of a plan's render for the
// refreshes after its apply; none when the chart calls no lookup.
func saveLookupCalls(ctx context.Context, set privateSetter, l *helm.Lookups, diags *diag.Diagnostics) {
	var raw []byte
	if l != nil {
		if reads := l.Reads(); len(reads) > 0 {
			calls := slices.SortedFunc(maps.Keys(reads), func(a, b helm.LookupCall) int { return strings.Compare(lookupKey(a), lookupKey(b)) })
			raw, _ = json.Marshal(calls) // strings
		}
	}
	diags.Append(set.SetKey(ctx, privateLookups, raw)...)
}

// readLookups reads again the lookup calls the plan applied last made,
// as the render does, by lookupKey; calls that fail are left out (the
// plan reports what fails).
func readLookups(ctx context.Context, private privateGetter, clusterOf func() *cluster, key []byte, diags *diag.Diagnostics) map[string]string {
	if private == nil {
		return nil
	}
	raw, d := private.GetKey(ctx, privateLookups)
	diags.Append(d...)
	var calls []helm.LookupCall
	if len(raw) == 0 || json.Unmarshal(raw, &calls) != nil || len(calls) == 0 {
		return nil
	}
	c := clusterOf()
	if c == nil {
		return nil
	}
	config, err := c.clients.RESTConfig()
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for _, call := range calls {
		if read, err := helm.Lookup(config, call); err == nil {
			out[lookupKey(call)] = lookupDigest(key, read)
		}
	}
	return out
}

// absentInput is the digest of what an optional reference did not find.
const absentInput = "absent"

// valuesFromKey names a reference's data: kind, name and key.
func valuesFromKey(ref values.Reference) string {
	key := ref.ValuesKey
	if key == "" {
		key = values.DefaultValuesKey
	}
	return ref.Kind + "/" + ref.Name + "/" + key
}

// inputDigest is the keyed digest of what a reference read.
func inputDigest(key, data []byte, found bool) string {
	if !found {
		return absentInput
	}
	mac := hmac.New(sha256.New, key)
	mac.Write(data)
	return "hmac-sha256:" + hex.EncodeToString(mac.Sum(nil))
}

// recordInputs reads the inputs of the release m as its state configures
// them and keeps their digests for the plans that follow; nothing when
// they cannot be read (the plan then reads them without a record), or
// when the resource has no key yet.
func (r *releaseResource) recordInputs(ctx context.Context, m *releaseModel, spec *reconcile.Spec, private privateGetter, set privateSetter, diags *diag.Diagnostics) {
	drop := func() { diags.Append(set.SetKey(ctx, privateInputs, nil)...) }
	key := secretHashKeyOf(ctx, private, set, diags)
	if len(key) == 0 || spec == nil {
		drop()
		return
	}
	in := renderInputs{ReadAt: time.Now().UTC().Truncate(time.Second)}
	var refs []valuesFromModel
	if !m.ValuesFrom.IsNull() && !m.ValuesFrom.IsUnknown() {
		var scratch diag.Diagnostics
		scratch.Append(m.ValuesFrom.ElementsAs(ctx, &refs, false)...)
		if scratch.HasError() {
			drop()
			return
		}
	}
	if len(refs) > 0 {
		c := r.clusterOf(m, diags)
		if c == nil {
			drop()
			return
		}
		client, err := c.clients.Clientset()
		if err != nil {
			drop()
			return
		}
		in.ValuesFrom = map[string]string{}
		err = values.Read(ctx, client, m.Namespace.ValueString(), valuesReferences(refs), func(ref values.Reference, _ metav1.Object, data []byte, found bool) {
			in.ValuesFrom[valuesFromKey(ref)] = inputDigest(key, data, found)
		})
		if err != nil {
			// The plan reports it; a record of what could not be read
			// would check nothing.
			drop()
			return
		}
	}
	in.Lookups = readLookups(ctx, private, func() *cluster { return r.clusterOf(m, diags) }, key, diags)
	if len(spec.PostRenderers) > 0 {
		d := reconcile.Digests{Key: key}
		in.PostRenderers, in.Settings = d.PostRenderers(spec), d.PostRenderersBeforePrograms(spec)
	}
	raw, err := json.Marshal(in)
	if err != nil {
		drop()
		return
	}
	diags.Append(set.SetKey(ctx, privateInputs, raw)...)
}

// recordedInputs is what the refresh recorded; nil when nothing.
func recordedInputs(ctx context.Context, private privateGetter, diags *diag.Diagnostics) *renderInputs {
	if private == nil {
		return nil
	}
	raw, d := private.GetKey(ctx, privateInputs)
	diags.Append(d...)
	var in renderInputs
	if len(raw) == 0 || json.Unmarshal(raw, &in) != nil {
		return nil
	}
	return &in
}

// valuesRead is what a plan's values_from read, to check against the
// refresh's record.
type valuesRead struct {
	index int
	ref   values.Reference
	obj   metav1.Object
	data  []byte
	found bool
}

// observer collects what Compose reads into *reads.
func observer(reads *[]valuesRead) func(values.Reference, metav1.Object, []byte, bool) {
	return func(ref values.Reference, obj metav1.Object, data []byte, found bool) {
		*reads = append(*reads, valuesRead{index: len(*reads), ref: ref, obj: obj, data: data, found: found})
	}
}

// checkInputs fails the plan when an input it read differs from what the
// refresh recorded of the same input: the plan Terraform applies was made
// from what the refresh read (a saved plan; the plan before an apply's
// prompt), and this plan, made as it applies it, would render otherwise.
// Nothing is deployed; planning again reads everything anew.
func (p *releasePlan) checkInputs(ctx context.Context, reads []valuesRead) {
	if p.state == nil || len(p.key) == 0 {
		return
	}
	rec := recordedInputs(ctx, p.req.Private, p.diags)
	if rec == nil {
		return
	}
	id := p.m.ID.ValueString()
	refreshed := rec.ReadAt.Format(time.RFC3339)
	for _, r := range reads {
		was, ok := rec.ValuesFrom[valuesFromKey(r.ref)]
		now := inputDigest(p.key, r.data, r.found)
		if !ok || was == now {
			continue
		}
		what := fmt.Sprintf("%s %q (key %q)", r.ref.Kind, r.ref.Name, keyOrDefault(r.ref.ValuesKey))
		sentence := fmt.Sprintf("helmrelease_release %s: values_from[%d] reads %s, which holds other data than the refresh of this plan read at %s (%s then, %s now).", id, r.index, what, refreshed, shortDigest(was), shortDigest(now))
		if at, manager := lastWrite(r.obj); !at.IsZero() && !at.Before(rec.ReadAt) {
			sentence += fmt.Sprintf(" It was written at %s by %q, after that refresh: by another pipeline, or by a resource of this configuration applied before this release in the same run.", at.UTC().Format(time.RFC3339), manager)
		}
		sentence += " Nothing was deployed."
		attrError(p.diags, path.Root("values_from").AtListIndex(r.index), "Values changed since the plan", sentence,
			"Run terraform plan again to review the values it reads now, and apply that plan. If a resource of this configuration writes the object in the same apply (a kubernetes_secret this release depends on), pass its value through values or sensitive_values from that resource's attributes instead (e.g. sensitive_values = kubernetes_secret.x.data[\"values.yaml\"]): Terraform then knows it when it plans, and one apply deploys it.")
	}
	if rec.PostRenderers != "" && len(p.spec.PostRenderers) > 0 {
		d := reconcile.Digests{Key: p.key}
		if d.PostRenderersBeforePrograms(p.spec) == rec.Settings && d.PostRenderers(p.spec) != rec.PostRenderers {
			attrError(p.diags, path.Root("post_renderers"), "Post-renderer program changed since the plan",
				fmt.Sprintf("helmrelease_release %s: the program of a post_renderers exec command, or a file its arguments name, has other content than the refresh of this plan read at %s. Nothing was deployed.", id, refreshed),
				"Run terraform plan again to review what the program renders now, and apply that plan; keep the program unchanged between a plan and its apply.")
		}
	}
}

// checkLookups fails the plan when a lookup call of its render read other
// than the refresh recorded of the same call (see checkInputs). Calls the
// refresh did not record (a create's, a call new to this chart) are read
// by the plan alone.
func (p *releasePlan) checkLookups(ctx context.Context, l *helm.Lookups) {
	if l == nil || p.state == nil || len(p.key) == 0 {
		return
	}
	rec := recordedInputs(ctx, p.req.Private, p.diags)
	if rec == nil || len(rec.Lookups) == 0 {
		return
	}
	reads := l.Reads()
	for _, call := range slices.SortedFunc(maps.Keys(reads), func(a, b helm.LookupCall) int { return strings.Compare(lookupKey(a), lookupKey(b)) }) {
		was, ok := rec.Lookups[lookupKey(call)]
		now := lookupDigest(p.key, reads[call])
		if !ok || was == now {
			continue
		}
		attrError(p.diags, path.Root("chart"), "Object read by lookup changed since the plan",
			fmt.Sprintf("helmrelease_release %s: the chart's lookup of %s reads other than the refresh of this plan read at %s (%s then, %s now), so the release would render otherwise than planned. Nothing was deployed.", p.m.ID.ValueString(), call, rec.ReadAt.Format(time.RFC3339), shortDigest(was), shortDigest(now)),
			"Run terraform plan again to review what the chart renders from the cluster now, and apply that plan.")
	}
}

func keyOrDefault(k string) string {
	if k == "" {
		return values.DefaultValuesKey
	}
	return k
}

// shortDigest names a digest in messages by its first 12 hex digits.
func shortDigest(d string) string {
	_, h, ok := strings.Cut(d, ":")
	if !ok {
		return d
	}
	if len(h) > 12 {
		h = h[:12]
	}
	return "digest " + h + "…"
}

// lastWrite is when obj was last written and by which field manager,
// from its managedFields; zero when it says nothing.
func lastWrite(obj metav1.Object) (time.Time, string) {
	var at time.Time
	manager := ""
	if obj == nil {
		return at, manager
	}
	for _, f := range obj.GetManagedFields() {
		if f.Time != nil && f.Time.After(at) {
			at, manager = f.Time.Time, f.Manager
		}
	}
	return at, manager
}
