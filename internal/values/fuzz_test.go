package values

import (
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

// FuzzYAMLErrorScrubbing: whatever a values document holds, the error
// shown for it quotes none of it: nothing in backquotes, no Go-syntax dump
// of a key, and none of the seeds' secret.
func FuzzYAMLErrorScrubbing(f *testing.F) {
	for _, seed := range []string{"password: !!int hunter2", "a: [1, 2", "- hunter2", "a: b: c", "{hunter2: x}: y", "\tpassword: x",
		"[hunter2]: x", "? [a, hunter2]\n: x", "{a: hunter2}: {b: c}", "{0`}:"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		var v map[string]any
		err := yaml.Unmarshal([]byte(doc), &v)
		if err == nil {
			return
		}
		msg := scrubYAMLError(err)
		for _, leak := range []string{"`", "interface {}{", "interface {}(", "hunter2"} {
			if strings.Contains(msg, leak) {
				t.Fatalf("scrubbed error still quotes the document (%q): %s", leak, msg)
			}
		}
	})
}
