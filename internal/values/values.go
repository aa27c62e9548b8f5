// Package values composes the values of a release the way HelmRelease v2
// does: ConfigMap and Secret references in order, inline values over them,
// then the references with a target path over everything.
package values

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
)

// Kinds a reference may name.
const (
	KindConfigMap = "ConfigMap"
	KindSecret    = "Secret"
)

// DefaultValuesKey is the data key read when a reference names none.
const DefaultValuesKey = "values.yaml"

// Reference is one entry of values_from (spec.valuesFrom).
type Reference struct {
	Kind       string
	Name       string
	ValuesKey  string
	TargetPath string
	Optional   bool
	// Literal sets the value at TargetPath verbatim, as helm --set-literal
	// does: commas, brackets, braces, quotes and backslashes are part of
	// it (HelmRelease v2 valuesFrom[].literal, helm-controller v1.6).
	Literal bool
}

func (r Reference) key() string {
	if r.ValuesKey == "" {
		return DefaultValuesKey
	}
	return r.ValuesKey
}

// Input is what Compose merges.
type Input struct {
	// Namespace holds the referenced ConfigMaps and Secrets.
	Namespace  string
	References []Reference
	// Values are the inline values (spec.values).
	Values map[string]any
	// SensitiveValues are merged right after Values.
	SensitiveValues map[string]any
	// Sensitive, when set, receives every string of SensitiveValues and of
	// the data read from Secrets (the leaves of a mapping, the data itself
	// for a target path), so that the caller can keep them out of what it
	// prints.
	Sensitive func(s string)
	// Observe, when set, receives what each reference read, in order:
	// the object (nil when it does not exist) and the data under its key
	// (found false when an optional reference found neither).
	Observe func(ref Reference, obj metav1.Object, data []byte, found bool)
}

// Reason classifies a ReferenceError.
type Reason string

// Reasons of a ReferenceError.
const (
	ReasonNotFound    Reason = "NotFound"
	ReasonKeyNotFound Reason = "KeyNotFound"
	ReasonInvalidYAML Reason = "InvalidYAML"
	ReasonTargetPath  Reason = "TargetPath"
	ReasonRead        Reason = "Read"
)

// ReferenceError is a failure to use References[Index]. Its message never
// contains the referenced data.
type ReferenceError struct {
	Index  int
	Ref    Reference
	Reason Reason
	Err    error
}

func (e *ReferenceError) Error() string {
	switch e.Reason {
	case ReasonNotFound:
		return fmt.Sprintf("%s %q not found", e.Ref.Kind, e.Ref.Name)
	case ReasonKeyNotFound:
		return fmt.Sprintf("%s %q has no key %q", e.Ref.Kind, e.Ref.Name, e.Ref.key())
	case ReasonInvalidYAML:
		return fmt.Sprintf("key %q of %s %q is not a valid YAML values document: %v", e.Ref.key(), e.Ref.Kind, e.Ref.Name, e.Err)
	case ReasonTargetPath:
		return fmt.Sprintf("setting target path %q from key %q of %s %q: %v", e.Ref.TargetPath, e.Ref.key(), e.Ref.Kind, e.Ref.Name, e.Err)
	default:
		return fmt.Sprintf("reading %s %q: %v", e.Ref.Kind, e.Ref.Name, e.Err)
	}
}

func (e *ReferenceError) Unwrap() error { return e.Err }

// Compose returns the composed values. References without a target path are
// merged in order, inline values and then sensitive values over them, and
// finally the references with a target path are set in order, overwriting
// everything before them (HelmRelease v2 "Values references"). The client
// may be nil when there are no references.
func Compose(ctx context.Context, client kubernetes.Interface, in Input) (map[string]any, error) {
	result := map[string]any{}
	type pathValue struct {
		index int
		ref   Reference
		value string
	}
	var targeted []pathValue
	for i, ref := range in.References {
		obj, data, found, err := read(ctx, client, in.Namespace, ref)
		if err != nil {
			return nil, &ReferenceError{Index: i, Ref: ref, Reason: reasonOf(err), Err: err}
		}
		if in.Observe != nil {
			in.Observe(ref, obj, data, found)
		}
		if !found {
			continue
		}
		secret := ref.Kind == KindSecret && in.Sensitive != nil
		if ref.TargetPath != "" {
			if secret {
				in.Sensitive(string(data))
			}
			targeted = append(targeted, pathValue{i, ref, string(data)})
			continue
		}
		parsed := map[string]any{}
		if err := yaml.Unmarshal(data, &parsed); err != nil {
			return nil, &ReferenceError{Index: i, Ref: ref, Reason: ReasonInvalidYAML, Err: errors.New(scrubYAMLError(err))}
		}
		if secret {
			Strings(parsed, in.Sensitive)
		}
		result = Merge(result, parsed)
	}
	if in.Sensitive != nil {
		Strings(in.SensitiveValues, in.Sensitive)
	}
	// Copies: the target paths below set values inside the maps merged.
	result = Merge(result, deepCopy(in.Values))
	result = Merge(result, deepCopy(in.SensitiveValues))
	for _, t := range targeted {
		set := SetPath
		if t.ref.Literal {
			set = SetLiteral
		}
		if err := set(result, t.ref.TargetPath, t.value); err != nil {
			return nil, &ReferenceError{Index: t.index, Ref: t.ref, Reason: ReasonTargetPath, Err: err}
		}
	}
	return result, nil
}

// deepCopy copies the maps and lists of values.
func deepCopy[T any](v T) T {
	var walk func(any) any
	walk = func(v any) any {
		switch t := v.(type) {
		case map[string]any:
			out := make(map[string]any, len(t))
			for k, e := range t {
				out[k] = walk(e)
			}
			return out
		case []any:
			out := make([]any, len(t))
			for i, e := range t {
				out[i] = walk(e)
			}
			return out
		}
		return v
	}
	out, _ := walk(v).(T)
	return out
}

type notFoundError struct{ reason Reason }

func (e notFoundError) Error() string { return string(e.reason) }

func reasonOf(err error) Reason {
	var nf notFoundError
	if errors.As(err, &nf) {
		return nf.reason
	}
	return ReasonRead
}

// Read reads what each of refs names in namespace, as Compose does,
// passing it to observe; it composes nothing. The first reference that
// fails stops it, with a ReferenceError.
func Read(ctx context.Context, client kubernetes.Interface, namespace string, refs []Reference, observe func(ref Reference, obj metav1.Object, data []byte, found bool)) error {
	for i, ref := range refs {
		obj, data, found, err := read(ctx, client, namespace, ref)
		if err != nil {
			return &ReferenceError{Index: i, Ref: ref, Reason: reasonOf(err), Err: err}
		}
		observe(ref, obj, data, found)
	}
	return nil
}

// read returns the referenced object and data; found is false for an
// optional reference whose object or key is missing (obj is nil when the
// object is).
func read(ctx context.Context, client kubernetes.Interface, namespace string, ref Reference) (obj metav1.Object, data []byte, found bool, err error) {
	if client == nil {
		return nil, nil, false, errors.New("no Kubernetes cluster is configured to read it from")
	}
	key := ref.key()
	var ok bool
	switch ref.Kind {
	case KindConfigMap:
		cm, err := client.CoreV1().ConfigMaps(namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil, false, missing(ref, ReasonNotFound)
		}
		if err != nil {
			return nil, nil, false, err
		}
		obj = cm
		var s string
		s, ok = cm.Data[key]
		data = []byte(s)
		if !ok {
			data, ok = cm.BinaryData[key]
		}
	case KindSecret:
		sec, err := client.CoreV1().Secrets(namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil, false, missing(ref, ReasonNotFound)
		}
		if err != nil {
			return nil, nil, false, err
		}
		obj = sec
		data, ok = sec.Data[key]
	default:
		return nil, nil, false, fmt.Errorf("unsupported kind %q", ref.Kind)
	}
	if !ok {
		return obj, nil, false, missing(ref, ReasonKeyNotFound)
	}
	return obj, data, true, nil
}

// missing is an error unless the reference is optional. As in Flux, an
// optional reference tolerates only "not found", of the object or its key.
func missing(ref Reference, reason Reason) error {
	if ref.Optional {
		return nil
	}
	return notFoundError{reason}
}

// SetPath sets value at path with Helm's --set syntax. A value in single or
// double quotes is set as a string (--set-string), as Flux does.
func SetPath(values map[string]any, path, value string) error {
	for _, q := range []string{`"`, `'`} {
		if len(value) >= 2 && strings.HasPrefix(value, q) && strings.HasSuffix(value, q) {
			return helm.ParseSetString(path+"="+value[1:len(value)-1], values)
		}
	}
	return helm.ParseSet(path+"="+value, values)
}

// literalEscaper escapes what the --set parser reads as syntax in a value,
// the backslash first so that its own escapes are not escaped again.
var literalEscaper = strings.NewReplacer(`\`, `\\`, `,`, `\,`, `[`, `\[`, `]`, `\]`, `{`, `\{`, `}`, `\}`)

// SetLiteral sets value at path as a string, verbatim (helm --set-literal),
// while the path keeps the --set syntax and its "\." escapes, as Flux's
// valuesFrom[].literal does: the value is escaped for the string parser.
func SetLiteral(values map[string]any, path, value string) error {
	return helm.ParseSetString(path+"="+literalEscaper.Replace(value), values)
}

// ValidateTargetPath reports whether path is usable as a --set path.
func ValidateTargetPath(path string) error {
	if strings.ContainsAny(path, "=") {
		return errors.New("a target path must not contain '='")
	}
	probe := map[string]any{}
	if err := helm.ParseSet(path+"=x", probe); err != nil {
		return err
	}
	if len(probe) == 0 {
		// Helm 4's parser drops a key whose '[' is never closed.
		return errors.New("it sets no value: a '[' without its ']'")
	}
	return nil
}

// Merge deep-merges b into a copy of a: maps merge key by key, any other
// value of b replaces that of a.
func Merge(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if bm, ok := v.(map[string]any); ok {
			if am, ok := out[k].(map[string]any); ok {
				out[k] = Merge(am, bm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// What YAML errors quote of the document: values in backquotes, names in
// single quotes (an anchor: "unknown anchor 'x' referenced"; the expected
// tokens are single characters, kept: "did not find expected ','"), and a
// key that is a mapping or a list printed whole in Go syntax, to the end
// of the message ("invalid map key: map[interface {}]interface {}{...}",
// and the JSON conversion's "unsupported map key of type: T, key: ...,
// value: ...").
var (
	// A scalar that does not decode as its tag or type is quoted whole
	// (and may itself hold backquotes) before " as a !!tag" (once per
	// message) or, truncated, before " into T" (once per line).
	yamlTagged   = regexp.MustCompile("(?s)`.*` as a !!")
	yamlInto     = regexp.MustCompile("`[^\n]*` into ")
	yamlQuoted   = regexp.MustCompile("`[^`]*`|'[^']{2,}'")
	yamlKeyDumps = regexp.MustCompile(`(?s)(invalid map key:|unsupported map key of type: \S+?,) .*`)
)

// scrubYAMLError keeps the position and kind of a YAML error and drops the
// document content it quotes, which may be a secret.
func scrubYAMLError(err error) string {
	msg := yamlKeyDumps.ReplaceAllString(err.Error(), "$1 (content not shown)")
	msg = yamlTagged.ReplaceAllString(msg, "(content not shown) as a !!")
	msg = yamlInto.ReplaceAllString(msg, "(content not shown) into ")
	return yamlQuoted.ReplaceAllString(msg, "(content not shown)")
}

// Strings calls f with every string in v, a value decoded from YAML or
// JSON (mappings and lists walked).
func Strings(v any, f func(string)) {
	switch t := v.(type) {
	case string:
		f(t)
	case map[string]any:
		for _, e := range t {
			Strings(e, f)
		}
	case []any:
		for _, e := range t {
			Strings(e, f)
		}
	}
}
