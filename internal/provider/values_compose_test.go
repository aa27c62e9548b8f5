package provider

import (
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

// FuzzSensitiveValues: whatever sensitive_values holds, reading it neither
// panics nor says what it holds.
func FuzzSensitiveValues(f *testing.F) {
	for _, seed := range []string{"password: !!int hunter2", "password: [hunter2", "hunter2", "{\"a\": 1}", "a:\n  b: c", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		_, err := parseSensitiveValues(doc)
		if err != nil && len(strings.TrimSpace(doc)) >= 4 && strings.Contains(err.Error(), strings.TrimSpace(doc)) {
			t.Fatalf("the error shows the document: %v", err)
		}
	})
}
