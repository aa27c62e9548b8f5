package values

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// FuzzSetPath: a target path that validation accepts sets any value
// without panicking or hanging, as `helm --set` would.
func FuzzSetPath(f *testing.F) {
	for _, seed := range [][2]string{
		{"image.tag", "1.0"}, {"ingress.hosts[0].host", "web"}, {`annotations.example\.com/key`, `"quoted"`},
		{"list", "{a,b,c}"}, {"a", "b,c=d"}, {"a[65536]", "x"}, {"a[1].b[2].c", "true"}, {"", ""}, {"a", `'single'`},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, path, value string) {
		if ValidateTargetPath(path) != nil {
			return
		}
		m := map[string]any{"existing": map[string]any{"key": "v"}}
		_ = SetPath(m, path, value)
	})
}

// FuzzYAMLErrorScrubbing: wherever a secret sits in a values document,
// the error shown for it quotes none of it: a secret drawn anew for each
// input is planted between the fuzzed text before and after it, and no 8
// characters of it may show, nor anything in backquotes or a Go-syntax
// dump of a key.
func FuzzYAMLErrorScrubbing(f *testing.F) {
	for _, seed := range [][2]string{{"password: !!int ", ""}, {"a: [1, ", ""}, {"- ", ""}, {"a: b: ", ""}, {"{", ": x}: y"},
		{"\tpassword: ", ""}, {"[", "]: x"}, {"? [a, ", "]\n: x"}, {"{a: ", "}: {b: c}"}, {"{0`", "}:"}, {"*", ""}, {"a: *", "\n"}, {"&", " a: b\n&"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, before, after string) {
		secret := randomSecret(t)
		var v map[string]any
		err := yaml.Unmarshal([]byte(before+secret+after), &v)
		if err == nil {
			return
		}
		msg := scrubYAMLError(err)
		for _, leak := range []string{"`", "interface {}{", "interface {}("} {
			if strings.Contains(msg, leak) {
				t.Fatalf("scrubbed error still quotes the document (%q): %s", leak, msg)
			}
		}
		if part, ok := showsPart(msg, secret); ok {
			t.Fatalf("scrubbed error shows %q of the secret %q: %s", part, secret, msg)
		}
	})
}

// randomSecret is a secret no input can know in advance.
func randomSecret(t *testing.T) string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "s" + hex.EncodeToString(b)
}

// showsPart reports a part of secret, 8 characters long, that msg shows.
func showsPart(msg, secret string) (string, bool) {
	for i := 0; i+8 <= len(secret); i++ {
		if strings.Contains(msg, secret[i:i+8]) {
			return secret[i : i+8], true
		}
	}
	return "", false
}
