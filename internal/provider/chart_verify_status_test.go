package provider

import (
	"strings"
	"testing"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

// TestMarkSourceVerified: a chart the trust policy let through unverified
// is never SourceVerified True; one verified is, with its signer.
func TestMarkSourceVerified(t *testing.T) {
	for _, tc := range []struct {
		name     string
		verified *chartsource.Verified
		want     *reconcile.Condition // nil: no condition
		says     string
	}{
		{"verified", &chartsource.Verified{Provider: "notation", Digest: "sha256:abc", Signer: "CN=release-team"},
			&reconcile.Condition{Type: reconcile.ConditionSourceVerified, Status: true, Reason: "Succeeded"}, "signed by CN=release-team"},
		{"authenticity let through (audit)", &chartsource.Verified{Provider: "notation", Digest: "sha256:abc", Signer: "CN=someone", Ignored: true,
			Warning: "the trust policy's level audit let these checks fail: authenticity: untrusted"},
			&reconcile.Condition{Type: reconcile.ConditionSourceVerified, Status: false, Reason: reasonVerificationIgnored}, "authenticity: untrusted"},
		{"skip", &chartsource.Verified{Provider: "notation", Digest: "sha256:abc", Signer: "none", Ignored: true, Warning: "the trust policy's level is skip"},
			&reconcile.Condition{Type: reconcile.ConditionSourceVerified, Status: false, Reason: reasonVerificationIgnored}, "not verified"},
		{"no verification", nil, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &reconcile.Status{}
			st.SetCondition(reconcile.Condition{Type: reconcile.ConditionSourceVerified, Status: true, Reason: "Succeeded", Message: "from before"})
			markSourceVerified(st, tc.verified, "")
			got := st.Condition(reconcile.ConditionSourceVerified)
			switch {
			case tc.want == nil && got != nil:
				t.Fatalf("condition %+v, want none", got)
			case tc.want == nil:
				return
			case got == nil:
				t.Fatal("no SourceVerified condition")
			case got.Status != tc.want.Status || got.Reason != tc.want.Reason || !strings.Contains(got.Message, tc.says) || !strings.Contains(got.Message, "revision sha256:abc with notation:"):
				t.Errorf("condition %+v, want status %t reason %s saying %q", got, tc.want.Status, tc.want.Reason, tc.says)
			}
		})
	}
}
