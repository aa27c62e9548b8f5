package values

import (
	"regexp"
	"slices"
)

// SecretName matches a values key that holds a secret by its name. Values
// of such keys, and everything under them, are sensitive; so are lists
// that mention one (an env list with a DB_PASSWORD entry).
var SecretName = regexp.MustCompile(`(?i)(pass(word|wd|phrase)?|pwd|secret|token|credential|private|(api|access|secret|private|client|signing|encryption)[-_]?key|auth|cert(ificate)?|tls|ssh|salt|cookie|dsn|connection[-_]?string)`)

// SplitSensitive parts values into the values whose key path names no
// secret and those that do (SecretName), as a release taken over is
// configured: the second in sensitive values.
func SplitSensitive(values map[string]any) (plain, sensitive map[string]any) {
	plain, sensitive = map[string]any{}, map[string]any{}
	for k, v := range values {
		if SecretName.MatchString(k) {
			sensitive[k] = v
			continue
		}
		if l, ok := v.([]any); ok && mentionsSecret(l) {
			sensitive[k] = v
			continue
		}
		if sub, ok := v.(map[string]any); ok {
			p, s := SplitSensitive(sub)
			if len(p) > 0 || len(s) == 0 {
				plain[k] = p
			}
			if len(s) > 0 {
				sensitive[k] = s
			}
			continue
		}
		plain[k] = v
	}
	return plain, sensitive
}

// mentionsSecret reports whether v holds a key or a string that names a
// secret.
func mentionsSecret(v any) bool {
	switch t := v.(type) {
	case string:
		return SecretName.MatchString(t)
	case []any:
		return slices.ContainsFunc(t, mentionsSecret)
	case map[string]any:
		for k, e := range t {
			if SecretName.MatchString(k) || mentionsSecret(e) {
				return true
			}
		}
	}
	return false
}
