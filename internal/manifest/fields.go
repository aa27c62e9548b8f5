package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// DigestPrefix starts an object shown as its digest (Digest); no
// object's YAML starts so.
const DigestPrefix = "sha256:"

// Digest is the digest an object shown as YAML is shown as when only its
// name and whether it changes are shown.
func Digest(shown string) string {
	sum := sha256.Sum256([]byte(shown))
	return DigestPrefix + hex.EncodeToString(sum[:])
}

// IsDigest reports whether shown is an object shown as its digest.
func IsDigest(shown string) bool { return strings.HasPrefix(shown, DigestPrefix) }

// Absent is how a field missing on one side of a change is shown.
const Absent = "(none)"

// FieldChanges compares two objects shown as YAML leaf by leaf: JSON
// pointer → "<before> → <after>" (JSON values; Absent where missing). Two
// objects with the same fields written otherwise (their keys' order) have
// the one change "" → "formatting only".
func FieldChanges(before, after string) map[string]string {
	oldLeaves, newLeaves := Leaves(before), Leaves(after)
	out := map[string]string{}
	for ptr, v := range newLeaves {
		if old, ok := oldLeaves[ptr]; !ok || old != v {
			out[ptr] = OrAbsent(old, ok) + " → " + v
		}
	}
	for ptr, old := range oldLeaves {
		if _, ok := newLeaves[ptr]; !ok {
			out[ptr] = old + " → " + Absent
		}
	}
	if len(out) == 0 && before != after {
		out[""] = "formatting only"
	}
	return out
}

// OrAbsent is s, or Absent when it is not there (ok false).
func OrAbsent(s string, ok bool) string {
	if !ok {
		return Absent
	}
	return s
}

// Leaves maps the JSON pointer of every leaf of a YAML object (scalars,
// empty maps and lists) to its value as JSON; nothing when y is not YAML.
func Leaves(y string) map[string]string {
	var obj any
	if err := yaml.Unmarshal([]byte(y), &obj); err != nil {
		return map[string]string{}
	}
	return LeavesOf(obj)
}

// StoredLeaves is Leaves of an object shown as YAML as the API server
// stores it: a map entry set to null, an empty map or an empty list is no
// entry (one Helm writes podinfo's resources.limits as null where another
// leaves it out; Helm 3.19 writes an empty annotations as null; a chart's
// `annotations: {}` is kept by one render and left out by another, and the
// API server stores none of them), so that two renders the API server
// stores alike have the same leaves.
func StoredLeaves(y string) map[string]string {
	var obj any
	if err := yaml.Unmarshal([]byte(y), &obj); err != nil {
		return map[string]string{}
	}
	return LeavesOf(withoutEmpty(obj))
}

// withoutEmpty is v without its maps' null, empty-map and empty-list
// entries, walked through lists; a map left empty is null too. That
// forgets an `emptyDir: {}` the other render lacks, a difference no two
// Helm renders of one chart make, to never name one that the API server
// stores alike.
func withoutEmpty(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			if e = withoutEmpty(e); e != nil {
				out[k] = e
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		if len(t) == 0 {
			return nil
		}
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = withoutEmpty(e)
		}
		return out
	}
	return v
}

// LeavesOf is Leaves of a decoded object.
func LeavesOf(obj any) map[string]string {
	out := map[string]string{}
	var walk func(ptr string, v any)
	walk = func(ptr string, v any) {
		switch t := v.(type) {
		case map[string]any:
			if len(t) == 0 {
				out[ptr] = "{}"
			}
			for k, e := range t {
				walk(ptr+"/"+pointerEscaper.Replace(k), e)
			}
		case []any:
			if len(t) == 0 {
				out[ptr] = "[]"
			}
			for i, e := range t {
				walk(ptr+"/"+strconv.Itoa(i), e)
			}
		default:
			b, _ := json.Marshal(t) // a decoded YAML scalar
			out[ptr] = string(b)
		}
	}
	walk("", obj)
	return out
}

// pointerEscaper escapes a key in a JSON pointer (RFC 6901);
// pointerUnescaper undoes it.
var (
	pointerEscaper   = strings.NewReplacer("~", "~0", "/", "~1")
	pointerUnescaper = strings.NewReplacer("~1", "/", "~0", "~")
)

// WithFields is the object shown as YAML with the field at each JSON
// pointer of fields set from JSON (Absent: removed) where its value is
// still the JSON of from[pointer], written as Display writes objects;
// false when no field was set. A list keeps its length.
func WithFields(shown string, from, fields map[string]string) (string, bool) {
	var obj any
	useNumber := func(d *json.Decoder) *json.Decoder { d.UseNumber(); return d }
	if err := yaml.Unmarshal([]byte(shown), &obj, useNumber); err != nil {
		return "", false
	}
	root, ok := obj.(map[string]any)
	if !ok {
		return "", false
	}
	changed := false
	for ptr, to := range fields {
		if ptr == "" {
			continue
		}
		tokens := strings.Split(ptr, "/")[1:]
		for i := range tokens {
			tokens[i] = pointerUnescaper.Replace(tokens[i])
		}
		parent, last := containerAt(root, tokens)
		cur, present := childOf(parent, last)
		curJSON := Absent
		if present {
			b, err := json.Marshal(cur)
			if err != nil {
				continue
			}
			curJSON = string(b)
		}
		if curJSON != from[ptr] {
			continue
		}
		var v any
		if to != Absent {
			dec := json.NewDecoder(strings.NewReader(to))
			dec.UseNumber()
			if dec.Decode(&v) != nil {
				continue
			}
		}
		if setChild(parent, last, v, to == Absent) {
			changed = true
		}
	}
	if !changed {
		return "", false
	}
	b, err := yaml.Marshal(root)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// containerAt is the map or list holding the last of a JSON pointer's
// tokens, and that token; nil when the path is not in v.
func containerAt(v any, tokens []string) (any, string) {
	if len(tokens) == 0 {
		return nil, ""
	}
	for _, t := range tokens[:len(tokens)-1] {
		var ok bool
		if v, ok = childOf(v, t); !ok {
			return nil, ""
		}
	}
	return v, tokens[len(tokens)-1]
}

// childOf is the element token names of a map or list.
func childOf(container any, token string) (any, bool) {
	switch c := container.(type) {
	case map[string]any:
		v, ok := c[token]
		return v, ok
	case []any:
		i, err := strconv.Atoi(token)
		if err != nil || i < 0 || i >= len(c) {
			return nil, false
		}
		return c[i], true
	}
	return nil, false
}

// setChild sets (or, with remove, deletes) the element token names of a
// map, or sets an existing element of a list (whose length it keeps);
// false when it cannot.
func setChild(container any, token string, v any, remove bool) bool {
	switch c := container.(type) {
	case map[string]any:
		if remove {
			delete(c, token)
		} else {
			c[token] = v
		}
		return true
	case []any:
		i, err := strconv.Atoi(token)
		if remove || err != nil || i < 0 || i >= len(c) {
			return false
		}
		c[i] = v
		return true
	}
	return false
}
