package values

import (
	"fmt"
	"testing"
)

// TestSensitivePaths: the paths of the sensitive strings lead back to them
// in the values Helm stores, where Read takes them from.
func TestSensitivePaths(t *testing.T) {
	values := map[string]any{
		"db":     map[string]any{"password": "pa55word!", "host": "db"},
		"tokens": []any{"plain", map[string]any{"key": "t0ken-value"}},
		"short":  "abc",
		"same":   "pa55word!",
	}
	sensitive := map[string]bool{"pa55word!": true, "t0ken-value": true}
	paths := SensitivePaths(values, sensitive)
	if got, want := fmt.Sprint(paths), "[[db password] [same] [tokens 1 key]]"; got != want {
		t.Errorf("paths %s, want %s", got, want)
	}
	// As Helm stores them (JSON): numbers float64, the same strings.
	stored := map[string]any{"db": map[string]any{"password": "pa55word!"}, "tokens": []any{"plain", map[string]any{"key": "t0ken-value"}}}
	if got := fmt.Sprint(StringsAt(stored, append(paths, []string{"tokens", "7"}, []string{"db", "password", "deeper"}))); got != "[pa55word! t0ken-value]" {
		t.Errorf("stringsAt %s, want the two secrets (paths that lead nowhere left out)", got)
	}
}
