package redact

import (
	"encoding/base64"
	"strings"
	"testing"
)

// TestSecrets: a secret is replaced in each form errors print it, the
// longest first; strings shorter than MinLength are left.
func TestSecrets(t *testing.T) {
	var r Secrets
	r.Add("hunter2<pass>", "abc", "line-one-secret\nline-two-secret")
	if r.Empty() {
		t.Fatal("no secret recorded")
	}
	for _, text := range []string{
		"as is: hunter2<pass>",
		`quoted: "hunter2\u003cpass\u003e"`,
		"base64: " + base64.StdEncoding.EncodeToString([]byte("hunter2<pass>")),
		"one line of several: line-two-secret",
	} {
		got := r.Replace(text)
		if !strings.Contains(got, Text) || strings.Contains(got, "hunter2") || strings.Contains(got, "line-two-secret") {
			t.Errorf("%q became %q", text, got)
		}
	}
	if got := r.Replace("abc stays"); got != "abc stays" {
		t.Errorf("a string shorter than MinLength was replaced: %q", got)
	}
}
