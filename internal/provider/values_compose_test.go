package provider

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"
)

// TestParseSensitiveValuesHidesContent: errors say what is wrong with the
// document's shape, never what it holds, even where YAML's own error would
// quote it.
func TestParseSensitiveValuesHidesContent(t *testing.T) {
	for _, doc := range []string{"password: !!int hunter2", "password: [hunter2", "hunter2", "- hunter2"} {
		_, err := parseSensitiveValues(doc)
		if err == nil {
			t.Errorf("%q accepted", doc)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: error shows the content: %v", doc, err)
		}
	}
}

// FuzzSensitiveValues: wherever a secret sits in sensitive_values, reading
// it neither panics nor says what it holds: a secret drawn anew for each
// input is planted between the fuzzed text before and after it, and no 8
// characters of it may show in the error.
func FuzzSensitiveValues(f *testing.F) {
	for _, seed := range [][2]string{{"password: !!int ", ""}, {"password: [", ""}, {"", ""}, {"- ", ""}, {"{\"a\": ", "}"}, {"a:\n  b: ", ""}, {"a: *", ""}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, before, after string) {
		b := make([]byte, 12)
		if _, err := rand.Read(b); err != nil {
			t.Fatal(err)
		}
		secret := "s" + hex.EncodeToString(b)
		_, err := parseSensitiveValues(before + secret + after)
		if err == nil {
			return
		}
		for i := 0; i+8 <= len(secret); i++ {
			if strings.Contains(err.Error(), secret[i:i+8]) {
				t.Fatalf("the error shows %q of the secret %q: %v", secret[i:i+8], secret, err)
			}
		}
	})
}
