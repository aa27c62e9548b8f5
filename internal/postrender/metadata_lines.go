package postrender

import (
	"bytes"
	"regexp"
	"slices"
	"strings"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// Setting labels and annotations by inserting lines.
//
// Helm hands a post-renderer the manifest as kyaml writes it (block style,
// two-space indentation) and parses what it returns with kyaml again before
// it writes the manifest. So an output that parses to the node tree kyaml's
// LabelSetter and AnnotationSetter would have made is stored byte for byte
// as their output would be. For a document of the usual shape (a block
// mapping with a block metadata mapping, no comments, anchors or quoted
// keys about it, none of the keys set yet) these lines are known without
// parsing it: each key appended, single-quoted, at the end of its mapping,
// the mapping appended at the end of metadata when it is missing. Any
// other document goes through kyaml (Metadata.setParsed).

// plainKey is a key that YAML writes plain.
var plainKey = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]*$`)

// insertion is what lines set a document's labels or annotations.
type insertion struct {
	// field is labels or annotations.
	field string
	keys  []string
	// entries are the lines of the keys, at the indentation of a
	// mapping in metadata.
	entries string
}

// insertions are the lines of m's keys (labels then annotations, each
// sorted), or ok false when one of them is not written as these lines
// write it (a key YAML quotes, a value that is not printable ASCII on one
// line).
func (m Metadata) insertions(labels, annotations []string) (ins []insertion, ok bool) {
	for _, f := range []struct {
		name string
		keys []string
		vals map[string]string
	}{{kyaml.LabelsField, labels, m.Labels}, {kyaml.AnnotationsField, annotations, m.Annotations}} {
		if len(f.keys) == 0 {
			continue
		}
		var b strings.Builder
		for _, k := range f.keys {
			if !plainKey.MatchString(k) || kyaml.IsValueNonString(k) || !printableLine(f.vals[k]) {
				return nil, false
			}
			b.WriteString("    " + k + ": '" + strings.ReplaceAll(f.vals[k], "'", "''") + "'\n")
		}
		ins = append(ins, insertion{field: f.name, keys: f.keys, entries: b.String()})
	}
	return ins, true
}

// printableLine reports whether s is printable ASCII, which YAML writes
// single-quoted on one line as it is (quotes doubled).
func printableLine(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// insertLines returns doc (one document, without its separator) with ins
// inserted, or ok false when doc is not of the shape described above.
func insertLines(doc []byte, ins []insertion) (out []byte, ok bool) {
	if bytes.Contains(doc, []byte(" &")) || bytes.Contains(doc, []byte(" *")) {
		return nil, false // anchors or aliases: one node may be in two places
	}
	lines := bytes.SplitAfter(doc, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 || !bytes.HasSuffix(lines[len(lines)-1], []byte("\n")) {
		return nil, false
	}
	// The metadata mapping: lines[start:end], its line at start-1.
	start, end := -1, -1
	for i, l := range lines {
		switch {
		case len(l) == 1: // an empty line, inside a block scalar
		case l[0] == ' ':
		case !topLevelKey(l):
			return nil, false
		case string(l) == "metadata:\n":
			if start >= 0 {
				return nil, false
			}
			start, end = i+1, len(lines)
		case start >= 0 && end == len(lines):
			end = i
		}
	}
	if start < 0 {
		return nil, false
	}
	if end == start {
		return nil, false
	}
	// Its fields: name, and the end of each field's lines.
	type field struct{ at, end int }
	fields := map[string]field{}
	last := ""
	for i := start; i < end; i++ {
		l := lines[i]
		if len(l) < 3 || l[0] != ' ' || l[1] != ' ' || bytes.Contains(l, []byte(" #")) {
			return nil, false
		}
		if l[2] == ' ' || l[2] == '-' {
			continue // inside the field above
		}
		name, rest, found := strings.Cut(string(l[2:]), ":")
		if !found || rest[0] != ' ' && rest[0] != '\n' || !plainKey.MatchString(name) {
			return nil, false
		}
		if _, dup := fields[name]; dup {
			return nil, false
		}
		if last != "" {
			fields[last] = field{fields[last].at, i}
		}
		fields[name], last = field{at: i}, name
	}
	if last == "" {
		return nil, false
	}
	fields[last] = field{fields[last].at, end}
	// Each insertion: after the field's entries, or a new field at the
	// end of metadata.
	type insert struct {
		at int
		// field: a new field, after the entries added to existing
		// fields at the same line.
		field bool
		text  string
	}
	var inserts []insert
	for _, in := range ins {
		f, exists := fields[in.field]
		if !exists {
			inserts = append(inserts, insert{end, true, "  " + in.field + ":\n" + in.entries})
			continue
		}
		if string(lines[f.at]) != "  "+in.field+":\n" || f.end == f.at+1 {
			return nil, false // a flow mapping, null, or empty
		}
		for i := f.at + 1; i < f.end; i++ {
			l := lines[i]
			if len(l) == 1 {
				return nil, false
			}
			if len(l) < 5 || string(l[:4]) != "    " || l[4] == ' ' || l[4] == '-' || l[4] == '"' || l[4] == '\'' || l[4] == '?' {
				return nil, false // a value over lines, or a key that is not plain
			}
			key, _, _ := strings.Cut(string(l[4:]), ":")
			for _, k := range in.keys {
				if key == k {
					return nil, false // set already: kyaml keeps its style
				}
			}
		}
		inserts = append(inserts, insert{f.end, false, in.entries})
	}
	// In the order of the lines; at the same line, entries before new
	// fields, and labels before annotations as kyaml sets them.
	slices.SortStableFunc(inserts, func(a, b insert) int {
		if a.at != b.at {
			return a.at - b.at
		}
		switch {
		case a.field == b.field:
			return 0
		case b.field:
			return -1
		}
		return 1
	})
	var b bytes.Buffer
	b.Grow(len(doc) + 256)
	next := 0
	for i, l := range lines {
		for next < len(inserts) && inserts[next].at == i {
			b.WriteString(inserts[next].text)
			next++
		}
		b.Write(l)
	}
	for ; next < len(inserts); next++ {
		b.WriteString(inserts[next].text)
	}
	return b.Bytes(), true
}

// topLevelKey reports whether l is a plain key of a document's mapping at
// column 0 (not a comment, a directive, a separator, a sequence, a flow
// collection, a quoted or complex key, an anchor or an alias).
func topLevelKey(l []byte) bool {
	switch l[0] {
	case '#', '%', '-', '.', '{', '[', '"', '\'', '?', '&', '*', '!', '|', '>':
		return false
	}
	return bytes.IndexByte(l, ':') > 0
}

// documents splits a stream into its documents, without their "---"
// separators, or ok false when it has anything else between documents.
func documents(in []byte) (docs [][]byte, ok bool) {
	if bytes.IndexByte(in, '\r') >= 0 {
		return nil, false // line ends kyaml writes otherwise
	}
	rest := in
	if bytes.HasPrefix(rest, []byte("---\n")) {
		rest = rest[4:]
	}
	for len(rest) > 0 {
		i := bytes.Index(rest, []byte("\n---"))
		if i < 0 {
			docs = append(docs, rest)
			break
		}
		docs = append(docs, rest[:i+1])
		rest = rest[i+4:]
		if len(rest) > 0 && rest[0] != '\n' {
			return nil, false // "---" followed by more on its line
		}
		if len(rest) > 0 {
			rest = rest[1:]
		}
	}
	for _, d := range docs {
		if len(bytes.TrimSpace(d)) == 0 {
			return nil, false
		}
	}
	return docs, true
}
