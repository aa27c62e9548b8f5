package manifest

import (
	"encoding/base64"
	"strings"
	"testing"
)

// TestMask: each form of a secret becomes its keyed hash; another
// secret gives another hash; short strings stay.
func TestMask(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	const secret, other = "hunter2-password", "second-secret"
	mask := Mask(key, []string{secret, other, "abc"})
	hash := Hash(key, []byte(secret))
	for _, tc := range []struct{ in, want string }{
		{secret, hash},
		{"postgres://u:" + secret + "@db", "postgres://u:" + hash + "@db"},
		{base64.StdEncoding.EncodeToString([]byte(secret)), hash},
		{"abc", "abc"},
		{other, Hash(key, []byte(other))},
	} {
		if got := mask(tc.in); got != tc.want {
			t.Errorf("mask(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if strings.Contains(hash, secret) || Hash(key, []byte(other)) == hash {
		t.Errorf("hash %q", hash)
	}
	if Mask(key, []string{"abc"}) != nil {
		t.Error("a mask for nothing to hide")
	}
}
