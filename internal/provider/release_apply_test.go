package provider

import (
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// TestReportRun: a remediation during an apply is a warning listing each
// failure and remediation, even when a retry then succeeded; the final
// error's remedy depends on the case.
func TestReportRun(t *testing.T) {
	hookFailed := errors.New("Helm upgrade failed: pre-upgrade hooks failed:\n\t* job web-hook failed\n\nLast Helm log lines:\n  creating 1 resource(s)")
	var diags diag.Diagnostics
	reportRun(&diags, "apps/web", []reconcile.ActionRecord{
		{Name: "upgrade", Type: reconcile.TypeRelease, Err: hookFailed},
		{Name: "rollback", Type: reconcile.TypeRemediate},
		{Name: "upgrade", Type: reconcile.TypeRelease},
	}, nil, runUpdated, false)
	if diags.HasError() || len(diags) != 1 || diags[0].Summary() != "Release remediated" {
		t.Fatalf("diagnostics %v", diags)
	}
	want := "- upgrade failed: Helm upgrade failed: pre-upgrade hooks failed: * job web-hook failed\n- rollback succeeded\n- upgrade succeeded\n\nThe release is in sync now."
	if d := diags[0].Detail(); !strings.Contains(d, want) || strings.Contains(d, "Last Helm log lines") {
		t.Errorf("warning:\n%s\nwant it to hold:\n%s", d, want)
	}

	diags = nil
	reportRun(&diags, "apps/web", []reconcile.ActionRecord{{Name: "upgrade", Type: reconcile.TypeRelease, Err: hookFailed}}, hookFailed, runUpdated, false)
	if len(diags) != 1 || diags[0].Summary() != "Release failed" || !strings.Contains(diags[0].Detail(), "Last Helm log lines") {
		t.Errorf("a failure without remediation: %v", diags)
	}

	diags = nil
	exhausted := errors.Join(reconcile.ErrRetriesExhausted, hookFailed)
	reportRun(&diags, "apps/web", nil, exhausted, runUpdated, false)
	if len(diags) != 1 || !strings.Contains(diags[0].Detail(), "set reset_at to a new value") {
		t.Errorf("retries exhausted: %v", diags)
	}
	diags = nil
	reportRun(&diags, "apps/web", nil, exhausted, runCreated, false)
	if len(diags) != 1 || !strings.Contains(diags[0].Detail(), "installs the release afresh") {
		t.Errorf("a failed create: %v", diags)
	}
	diags = nil
	reportRun(&diags, "apps/web", nil, &reconcile.OwnershipError{Release: "apps/web.v1", Owners: []string{"apps/other"}}, runCreated, false)
	if len(diags) != 1 || !strings.Contains(diags[0].Detail(), "cannot share a release") {
		t.Errorf("another resource's release: %v", diags)
	}
}
