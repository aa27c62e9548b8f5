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
