package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
)

func TestRedactor(t *testing.T) {
	r := &redactor{}
	r.addValues("password: hunter22\nnested:\n  list: [s3cr3t-token, short]\nport: 5432\n")
	r.add("hunter22-suffix")
	r.add("")

	for _, tc := range []struct{ in, want string }{
		{`Invalid value: "hunter22"`, `Invalid value: "(sensitive value)"`},
		// The longer secret first: no half of it is left.
		{"hunter22-suffix and s3cr3t-token", "(sensitive value) and (sensitive value)"},
		// Short strings and numbers are not secrets worth garbling for.
		{"short port 5432", "short port 5432"},
	} {
		if got := r.text(tc.in); got != tc.want {
			t.Errorf("text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}

	var diags diag.Diagnostics
	diags.AddAttributeError(path.Root("chart"), "Release does not render", "ConfigMap is invalid: hunter22")
	diags.AddWarning("Release remediated", "upgrade failed: s3cr3t-token")
	diags.AddError("Untouched", "nothing secret")
	out := r.diagnostics(diags)
	if len(out) != 3 {
		t.Fatalf("%d diagnostics, want 3", len(out))
	}
	for _, d := range out {
		if strings.Contains(d.Detail(), "hunter22") || strings.Contains(d.Detail(), "s3cr3t-token") {
			t.Errorf("%s: %q", d.Summary(), d.Detail())
		}
	}
	if p, ok := out[0].(diag.DiagnosticWithPath); !ok || !p.Path().Equal(path.Root("chart")) || out[0].Severity() != diag.SeverityError {
		t.Errorf("the first diagnostic lost its path or severity: %#v", out[0])
	}
	if out[1].Severity() != diag.SeverityWarning || out[2] != diags[2] {
		t.Errorf("severity or untouched diagnostic changed: %#v", out)
	}

	st := &reconcile.Status{Conditions: []reconcile.Condition{{Type: "Ready", Message: "upgrade failed: hunter22"}}}
	r.status(st)
	if st.Conditions[0].Message != "upgrade failed: (sensitive value)" {
		t.Errorf("condition message %q", st.Conditions[0].Message)
	}
}
