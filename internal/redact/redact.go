// Package redact replaces secrets in text the provider prints (errors,
// diagnostics, log lines, a command's standard error), in every form
// Kubernetes, Helm and Go print them.
package redact

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// Text replaces a secret wherever the provider prints.
const Text = "(sensitive value)"

// MinLength is the length of the shortest secret replaced: shorter strings
// ("true", "80") would garble every message they occur in and protect
// nothing.
const MinLength = 6

// Forms are the ways errors and logs print s: as it is; escaped as in a
// Go quoted string (%q: Kubernetes' field errors) or a JSON string
// (HTML-safe, as encoding/json writes "<" as \u003c, or not); escaped twice
// (an error quoting a quoted error); in base64 (Secret data); and, for a
// secret of several lines (a PEM key), each line in those forms, as an
// error may quote a part. Forms shorter than MinLength are left out.
func Forms(s string) []string {
	if len(s) < MinLength {
		return nil
	}
	forms := escapedForms(s)
	forms = append(forms, base64.StdEncoding.EncodeToString([]byte(s)))
	if strings.ContainsAny(s, "\r\n") {
		for _, line := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }) {
			if line = strings.TrimSpace(line); len(line) >= MinLength {
				forms = append(forms, escapedForms(line)...)
			}
		}
	}
	return slices.DeleteFunc(forms, func(f string) bool { return len(f) < MinLength })
}

// escapedForms are s and its escaped forms, once and twice, without the
// quotes around them.
func escapedForms(s string) []string {
	once := []string{s, goEscaped(s), jsonEscaped(s, true), jsonEscaped(s, false)}
	forms := slices.Clone(once)
	for _, e := range once[1:] {
		forms = append(forms, goEscaped(e), jsonEscaped(e, true), jsonEscaped(e, false))
	}
	slices.Sort(forms)
	return slices.Compact(forms)
}

func goEscaped(s string) string {
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

func jsonEscaped(s string, html bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	_ = enc.Encode(s) // a string: cannot fail
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

// Secrets replaces secrets in text. The zero value replaces nothing; it
// is not safe for concurrent use.
type Secrets struct {
	forms    []string
	replacer *strings.Replacer // of forms; nil until needed
}

// Add records secrets, in every form they may be printed in.
func (r *Secrets) Add(secrets ...string) {
	for _, s := range secrets {
		for _, form := range Forms(s) {
			if !slices.Contains(r.forms, form) {
				r.forms = append(r.forms, form)
				r.replacer = nil
			}
		}
	}
}

// AddForms records forms as they are (Forms of another Secrets).
func (r *Secrets) AddForms(forms ...string) {
	for _, form := range forms {
		if form != "" && !slices.Contains(r.forms, form) {
			r.forms = append(r.forms, form)
			r.replacer = nil
		}
	}
}

type formsKey struct{}

// WithForms is ctx carrying forms (Secrets.Forms), so that what runs under
// it redacts them from what it quotes before it cuts it (FormsFrom).
func WithForms(ctx context.Context, forms []string) context.Context {
	if len(forms) == 0 {
		return ctx
	}
	return context.WithValue(ctx, formsKey{}, slices.Clone(forms))
}

// FormsFrom are the forms ctx carries (WithForms).
func FormsFrom(ctx context.Context) []string {
	forms, _ := ctx.Value(formsKey{}).([]string)
	return forms
}

// Empty reports whether no secret is recorded.
func (r *Secrets) Empty() bool { return len(r.forms) == 0 }

// Forms are the strings replaced.
func (r *Secrets) Forms() []string { return r.forms }

// Longest is the length of the longest form of a secret recorded.
func (r *Secrets) Longest() int {
	n := 0
	for _, f := range r.forms {
		n = max(n, len(f))
	}
	return n
}

// Replace is s with every secret replaced by Text, longest first (a
// secret may hold another).
func (r *Secrets) Replace(s string) string {
	if len(r.forms) == 0 || s == "" {
		return s
	}
	if r.replacer == nil {
		sorted := slices.Clone(r.forms)
		slices.SortFunc(sorted, func(a, b string) int { return len(b) - len(a) })
		pairs := make([]string, 0, 2*len(sorted))
		for _, secret := range sorted {
			pairs = append(pairs, secret, Text)
		}
		r.replacer = strings.NewReplacer(pairs...)
	}
	return r.replacer.Replace(s)
}
