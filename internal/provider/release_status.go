package provider

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/tfvalue"
)

// statusModel is the status attribute: the reconciler's Status, whole, so that
// the next run goes on from it.
type statusModel struct {
	Ready                        bool             `tfsdk:"ready"`
	Reason                       string           `tfsdk:"reason"`
	Message                      string           `tfsdk:"message"`
	Conditions                   []conditionModel `tfsdk:"conditions"`
	Failures                     int64            `tfsdk:"failures"`
	InstallFailures              int64            `tfsdk:"install_failures"`
	UpgradeFailures              int64            `tfsdk:"upgrade_failures"`
	LastAttemptedRevision        string           `tfsdk:"last_attempted_revision"`
	LastAttemptedRevisionDigest  string           `tfsdk:"last_attempted_revision_digest"`
	LastAttemptedConfigDigest    string           `tfsdk:"last_attempted_config_digest"`
	LastAttemptedReleaseAction   string           `tfsdk:"last_attempted_release_action"`
	LastAppliedRevision          string           `tfsdk:"last_applied_revision"`
	ObservedPostRenderersDigest  string           `tfsdk:"observed_post_renderers_digest"`
	ObservedCommonMetadataDigest string           `tfsdk:"observed_common_metadata_digest"`
	LastHandledForceAt           string           `tfsdk:"last_handled_force_at"`
	LastHandledResetAt           string           `tfsdk:"last_handled_reset_at"`
	StorageNamespace             string           `tfsdk:"storage_namespace"`
	History                      []snapshotModel  `tfsdk:"history"`
}

type conditionModel struct {
	Type    string `tfsdk:"type"`
	Status  bool   `tfsdk:"status"`
	Reason  string `tfsdk:"reason"`
	Message string `tfsdk:"message"`
}

type snapshotModel struct {
	Name          string                   `tfsdk:"name"`
	Namespace     string                   `tfsdk:"namespace"`
	Version       int64                    `tfsdk:"version"`
	Status        string                   `tfsdk:"status"`
	Action        string                   `tfsdk:"action"`
	ChartName     string                   `tfsdk:"chart_name"`
	ChartVersion  string                   `tfsdk:"chart_version"`
	AppVersion    string                   `tfsdk:"app_version"`
	ConfigDigest  string                   `tfsdk:"config_digest"`
	Digest        string                   `tfsdk:"digest"`
	ChartDigest   string                   `tfsdk:"chart_digest"`
	FirstDeployed string                   `tfsdk:"first_deployed"`
	LastDeployed  string                   `tfsdk:"last_deployed"`
	Deleted       string                   `tfsdk:"deleted"`
	TestHooks     map[string]testHookModel `tfsdk:"test_hooks"`
}

type testHookModel struct {
	LastStarted   string `tfsdk:"last_started"`
	LastCompleted string `tfsdk:"last_completed"`
	Phase         string `tfsdk:"phase"`
}

// statusAttrTypes are the attribute types of status, from the schema, built
// once: every plan and apply of every release needs them.
var statusAttrTypes = sync.OnceValue(func() map[string]attr.Type {
	return statusAttribute().GetType().(basetypes.ObjectType).AttrTypes
})

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s) // written by formatTime
	return t
}

// statusObject is the status attribute of st.
func statusObject(ctx context.Context, st *reconcile.Status) (types.Object, diag.Diagnostics) {
	m := statusModel{
		Conditions:                   []conditionModel{},
		Failures:                     st.Failures,
		InstallFailures:              st.InstallFailures,
		UpgradeFailures:              st.UpgradeFailures,
		LastAttemptedRevision:        st.LastAttemptedRevision,
		LastAttemptedRevisionDigest:  st.LastAttemptedRevisionDigest,
		LastAttemptedConfigDigest:    st.LastAttemptedConfigDigest,
		LastAttemptedReleaseAction:   string(st.LastAttemptedReleaseAction),
		LastAppliedRevision:          st.LastAppliedRevision,
		ObservedPostRenderersDigest:  st.ObservedPostRenderersDigest,
		ObservedCommonMetadataDigest: st.ObservedOptionsDigest,
		LastHandledForceAt:           st.LastHandledForceAt,
		LastHandledResetAt:           st.LastHandledResetAt,
		StorageNamespace:             st.StorageNamespace,
		History:                      []snapshotModel{},
	}
	if c := st.Condition(reconcile.ConditionReady); c != nil {
		m.Ready, m.Reason, m.Message = c.Status, c.Reason, c.Message
	}
	for _, c := range st.Conditions {
		m.Conditions = append(m.Conditions, conditionModel{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message})
	}
	for _, s := range st.History {
		snap := snapshotModel{
			Name: s.Name, Namespace: s.Namespace, Version: int64(s.Version), Status: s.Status, Action: string(s.Action),
			ChartName: s.ChartName, ChartVersion: s.ChartVersion, AppVersion: s.AppVersion,
			ConfigDigest: s.ConfigDigest, Digest: s.Digest, ChartDigest: s.ChartDigest,
			FirstDeployed: formatTime(s.FirstDeployed), LastDeployed: formatTime(s.LastDeployed), Deleted: formatTime(s.Deleted),
		}
		if s.TestHooks != nil {
			snap.TestHooks = map[string]testHookModel{}
			for name, h := range s.TestHooks {
				snap.TestHooks[name] = testHookModel{LastStarted: formatTime(h.LastStarted), LastCompleted: formatTime(h.LastCompleted), Phase: h.Phase}
			}
		}
		m.History = append(m.History, snap)
	}
	return tfvalue.ObjectFrom(ctx, statusAttrTypes(), m)
}

// statusOf reads the status attribute; null (a new resource) is a new
// status.
func statusOf(ctx context.Context, o types.Object) (*reconcile.Status, diag.Diagnostics) {
	st := &reconcile.Status{}
	if o.IsNull() || o.IsUnknown() {
		return st, nil
	}
	var m statusModel
	diags := tfvalue.ObjectInto(ctx, o, &m)
	if diags.HasError() {
		return st, diags
	}
	*st = reconcile.Status{
		Failures:                    m.Failures,
		InstallFailures:             m.InstallFailures,
		UpgradeFailures:             m.UpgradeFailures,
		LastAttemptedRevision:       m.LastAttemptedRevision,
		LastAttemptedRevisionDigest: m.LastAttemptedRevisionDigest,
		LastAttemptedConfigDigest:   m.LastAttemptedConfigDigest,
		LastAttemptedReleaseAction:  reconcile.ReleaseAction(m.LastAttemptedReleaseAction),
		LastAppliedRevision:         m.LastAppliedRevision,
		ObservedPostRenderersDigest: m.ObservedPostRenderersDigest,
		ObservedOptionsDigest:       m.ObservedCommonMetadataDigest,
		LastHandledForceAt:          m.LastHandledForceAt,
		LastHandledResetAt:          m.LastHandledResetAt,
		StorageNamespace:            m.StorageNamespace,
	}
	for _, c := range m.Conditions {
		st.Conditions = append(st.Conditions, reconcile.Condition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message})
	}
	for _, s := range m.History {
		snap := reconcile.Snapshot{
			Name: s.Name, Namespace: s.Namespace, Version: int(s.Version), Status: s.Status, Action: reconcile.ReleaseAction(s.Action),
			ChartName: s.ChartName, ChartVersion: s.ChartVersion, AppVersion: s.AppVersion,
			ConfigDigest: s.ConfigDigest, Digest: s.Digest, ChartDigest: s.ChartDigest,
			FirstDeployed: parseTime(s.FirstDeployed), LastDeployed: parseTime(s.LastDeployed), Deleted: parseTime(s.Deleted),
		}
		if s.TestHooks != nil {
			snap.TestHooks = map[string]reconcile.TestHook{}
			for name, h := range s.TestHooks {
				snap.TestHooks[name] = reconcile.TestHook{LastStarted: parseTime(h.LastStarted), LastCompleted: parseTime(h.LastCompleted), Phase: h.Phase}
			}
		}
		st.History = append(st.History, snap)
	}
	return st, diags
}

// Ready reasons Read records for a release changed outside Terraform.
const (
	reasonUnmanaged = string(reconcile.StateUnmanaged)
	reasonLocked    = string(reconcile.StateLocked)
	// reasonChangedOutside: the HelmRelease of a release handed to Flux
	// was changed by someone else.
	reasonChangedOutside = "ChangedOutsideTerraform"
)
