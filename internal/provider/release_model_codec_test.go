package provider

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/tfvalue"
)

// The model conversions agree with the framework's reflection, which they
// stand in for, in both directions.
func TestModelConversionsMatchTheFramework(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)
	st := &reconcile.Status{
		Failures: 2, InstallFailures: 1, LastAttemptedRevision: "1.2.3", LastAttemptedReleaseAction: reconcile.ActionUpgrade,
		Conditions: []reconcile.Condition{{Type: "Ready", Status: true, Reason: "UpgradeSucceeded", Message: "done"}},
		History: []reconcile.Snapshot{
			{Name: "a", Namespace: "ns", Version: 2, Status: "deployed", FirstDeployed: now, LastDeployed: now,
				TestHooks: map[string]reconcile.TestHook{"t": {LastStarted: now, LastCompleted: now, Phase: "Succeeded"}}},
			{Name: "a", Namespace: "ns", Version: 1, Status: "superseded"},
		},
	}
	ours, d := statusObject(ctx, st)
	if d.HasError() {
		t.Fatal(d)
	}
	var m statusModel
	if d := ours.As(ctx, &m, basetypes.ObjectAsOptions{}); d.HasError() {
		t.Fatal(d)
	}
	theirs, d := types.ObjectValueFrom(ctx, statusAttrTypes(), m)
	if d.HasError() {
		t.Fatal(d)
	}
	if !ours.Equal(theirs) {
		t.Errorf("status object differs from the framework's:\nours   %s\ntheirs %s", ours, theirs)
	}
	back, d := statusOf(ctx, theirs)
	if d.HasError() {
		t.Fatal(d)
	}
	if !reflect.DeepEqual(st, back) {
		t.Errorf("status read back differs:\nwritten %+v\nread    %+v", st, back)
	}

	// The whole resource, written by the framework: nested objects, a
	// pointer to a struct, an embedded struct, a dynamic value, null and
	// unknown attributes.
	verifyTypes := releaseObjectType().AttrTypes["chart"].(basetypes.ObjectType).AttrTypes["verify"].(basetypes.ObjectType).AttrTypes
	chart, d := types.ObjectValueFrom(ctx, releaseObjectType().AttrTypes["chart"].(basetypes.ObjectType).AttrTypes, releaseChartModel{
		chartModel: chartModel{
			Name: types.StringValue("podinfo"), Repository: types.StringValue("https://charts.example"), Version: types.StringUnknown(),
			Git:         types.ObjectNull(releaseObjectType().AttrTypes["chart"].(basetypes.ObjectType).AttrTypes["git"].(basetypes.ObjectType).AttrTypes),
			Bucket:      types.ObjectNull(releaseObjectType().AttrTypes["chart"].(basetypes.ObjectType).AttrTypes["bucket"].(basetypes.ObjectType).AttrTypes),
			ValuesFiles: types.ListNull(types.StringType), IgnoreMissing: types.BoolNull(), ReconcileStrategy: types.StringValue("ChartVersion"),
			Username: types.StringNull(), Password: types.StringValue("p"), CAFile: types.StringNull(), CertFile: types.StringNull(), KeyFile: types.StringNull(),
			InsecureSkipTLSVerify: types.BoolNull(), PassCredentials: types.BoolNull(), Verify: &chartVerifyModel{
				Provider: types.StringNull(), Keyring: types.StringValue("k"), PublicKeys: types.ListNull(types.StringType),
				SecretRef:         types.ObjectNull(verifyTypes["secret_ref"].(basetypes.ObjectType).AttrTypes),
				MatchOIDCIdentity: types.ListNull(verifyTypes["match_oidc_identity"].(basetypes.ListType).ElemType),
				TrustedRoot:       types.StringNull(), TrustPolicy: types.StringNull(),
			},
		},
		PasswordWO: types.StringNull(), PasswordWOVersion: types.Int64Value(3),
	})
	if d.HasError() {
		t.Fatal(d)
	}
	values, d := types.ObjectValue(map[string]attr.Type{"replicas": types.NumberType}, map[string]attr.Value{"replicas": types.NumberNull()})
	if d.HasError() {
		t.Fatal(d)
	}
	state := tfsdk.State{Schema: releaseSchema(), Raw: tftypes.NewValue(releaseObjectType().TerraformType(ctx), nil)}
	for p, v := range map[string]any{
		"name": types.StringValue("a"), "chart": chart, "values": types.DynamicValue(values), "status": ours, "max_history": types.Int64Value(5),
		"resources":     types.MapValueMust(types.StringType, map[string]attr.Value{"v1/ConfigMap/ns/a": types.StringValue("kind: ConfigMap")}),
		"chart_version": types.StringUnknown(),
	} {
		if d := state.SetAttribute(ctx, path.Root(p), v); d.HasError() {
			t.Fatal(d)
		}
	}
	var want, got releaseModel
	if d := state.Get(ctx, &want); d.HasError() {
		t.Fatal(d)
	}
	if d := releaseModelOf(ctx, state.Raw, &got); d.HasError() {
		t.Fatal(d)
	}
	wv, gv := reflect.ValueOf(want), reflect.ValueOf(got)
	for _, f := range reflect.VisibleFields(wv.Type()) {
		name := f.Tag.Get("tfsdk")
		if name == "" {
			continue
		}
		w, g := wv.FieldByIndex(f.Index).Interface().(attr.Value), gv.FieldByIndex(f.Index).Interface().(attr.Value)
		if !w.Equal(g) {
			t.Errorf("%s read as %s, the framework reads %s", name, g, w)
		}
	}
	var written tftypes.Value
	if d := setRelease(ctx, &written, &got); d.HasError() {
		t.Fatal(d)
	}
	if !written.Equal(state.Raw) {
		t.Errorf("release written differs from the framework's:\nours   %s\ntheirs %s", written, state.Raw)
	}
	var c releaseChartModel
	if d := tfvalue.ObjectInto(ctx, got.Chart, &c); d.HasError() || c.Verify == nil || c.Verify.Keyring.ValueString() != "k" || c.PasswordWOVersion.ValueInt64() != 3 || !c.Version.IsUnknown() {
		t.Errorf("chart read as %+v (%v)", c, d)
	}
}

// BenchmarkReleaseModel reads a release's state into its model and writes
// it back, as each plan and refresh does several times: with this
// package's conversions and with the framework's reflection.
func BenchmarkReleaseModel(b *testing.B) {
	ctx := context.Background()
	st := &reconcile.Status{Conditions: []reconcile.Condition{{Type: "Ready", Status: true}, {Type: "Released", Status: true}},
		History: []reconcile.Snapshot{{Name: "a", Namespace: "ns", Version: 1, Status: "deployed"}}}
	status, _ := statusObject(ctx, st)
	state := tfsdk.State{Schema: releaseSchema(), Raw: tftypes.NewValue(releaseObjectType().TerraformType(ctx), nil)}
	state.SetAttribute(ctx, path.Root("name"), "a")
	state.SetAttribute(ctx, path.Root("status"), status)
	b.Run("provider", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m releaseModel
			releaseModelOf(ctx, state.Raw, &m)
			statusOf(ctx, m.Status)
			setRelease(ctx, &state.Raw, &m)
		}
	})
	b.Run("framework", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m releaseModel
			state.Get(ctx, &m)
			var sm statusModel
			m.Status.As(ctx, &sm, basetypes.ObjectAsOptions{})
			state.Set(ctx, &m)
		}
	})
}
