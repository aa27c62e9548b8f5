package provider

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
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

// TestRedactorEscapedForms: a secret holding quotes, backslashes, <>& or
// several lines is redacted however an error prints it: quoted as Go (%q)
// or JSON (HTML-safe or not) does, quoted twice, in base64, or one line of
// it alone.
func TestRedactorEscapedForms(t *testing.T) {
	password := `pa"ss\word<&>'` + "\t!"
	key := "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\nq3mLzLk1RZ9iB0aM4tUo8ZHx3xYjKc9w2F5b\n-----END PRIVATE KEY-----\n"
	r := &redactor{}
	r.addValues("password: " + strconv.Quote(password) + "\ntls:\n  key: " + strconv.Quote(key) + "\n")
	jsonOf := func(v any, html bool) string {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		_ = enc.Encode(v)
		return b.String()
	}
	for _, secret := range []string{password, key} {
		lines := strings.Split(strings.TrimSpace(secret), "\n")
		for name, printed := range map[string]string{
			"as it is":               "error: " + secret,
			"%q":                     fmt.Sprintf("Invalid value: %q: must be a valid label", secret),
			"JSON":                   jsonOf(map[string]string{"message": secret}, true),
			"JSON, HTML not escaped": jsonOf(map[string]string{"message": secret}, false),
			"%q of %q":               fmt.Sprintf("failed: %q", fmt.Sprintf("Invalid value: %q", secret)),
			"JSON of %q":             jsonOf(fmt.Sprintf("Invalid value: %q", secret), true),
			"base64":                 "data: " + base64.StdEncoding.EncodeToString([]byte(secret)),
			"one line":               "line 2: " + lines[len(lines)/2] + " is not base64",
			"one line, %q":           fmt.Sprintf("%q is not valid", lines[len(lines)/2]),
		} {
			got := r.text(printed)
			if !strings.Contains(got, redactedText) {
				t.Errorf("%s: nothing redacted in %q", name, got)
			}
			for _, line := range lines {
				if len(line) >= minRedacted && strings.Contains(got, strings.TrimSpace(line)) && !strings.HasPrefix(line, "-----") {
					t.Errorf("%s: %q shows the line %q", name, got, line)
				}
			}
			for _, frag := range []string{`pa"ss`, `pa\"ss`, `pa\\\"ss`, "word\\u003c", "word<&>"} {
				if strings.Contains(got, frag) {
					t.Errorf("%s: %q shows %q of the password", name, got, frag)
				}
			}
		}
	}
}
