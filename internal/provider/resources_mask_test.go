package provider

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/manifest"
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
	paths := sensitivePaths(values, sensitive)
	if got, want := fmt.Sprint(paths), "[[db password] [same] [tokens 1 key]]"; got != want {
		t.Errorf("paths %s, want %s", got, want)
	}
	// As Helm stores them (JSON): numbers float64, the same strings.
	stored := map[string]any{"db": map[string]any{"password": "pa55word!"}, "tokens": []any{"plain", map[string]any{"key": "t0ken-value"}}}
	if got := fmt.Sprint(stringsAt(stored, append(paths, []string{"tokens", "7"}, []string{"db", "password", "deeper"}))); got != "[pa55word! t0ken-value]" {
		t.Errorf("stringsAt %s, want the two secrets (paths that lead nowhere left out)", got)
	}
}

// TestResourceMask: each form of a secret becomes its keyed hash; another
// secret gives another hash; short strings stay.
func TestResourceMask(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	const secret, other = "hunter2-password", "second-secret"
	mask := resourceMask(key, []string{secret, other, "abc"})
	hash := manifest.Hash(key, []byte(secret))
	for _, tc := range []struct{ in, want string }{
		{secret, hash},
		{"postgres://u:" + secret + "@db", "postgres://u:" + hash + "@db"},
		{base64.StdEncoding.EncodeToString([]byte(secret)), hash},
		{"abc", "abc"},
		{other, manifest.Hash(key, []byte(other))},
	} {
		if got := mask(tc.in); got != tc.want {
			t.Errorf("mask(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if strings.Contains(hash, secret) || manifest.Hash(key, []byte(other)) == hash {
		t.Errorf("hash %q", hash)
	}
	if resourceMask(key, []string{"abc"}) != nil {
		t.Error("a mask for nothing to hide")
	}
}
