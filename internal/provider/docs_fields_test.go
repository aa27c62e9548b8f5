package provider

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
)

// missingFieldsHeading heads the provider page's list of the HelmRelease
// fields that have no attribute.
const missingFieldsHeading = "## HelmRelease fields without an attribute"

// TestDocsMissingFields: no field the provider page's list of HelmRelease
// fields without an attribute has one. A field `spec.a.bC` names the attribute a.b_c, at the
// resource's top level or in its flux block; the chart template's
// `chart.spec.` is the attribute chart.
func TestDocsMissingFields(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "templates", "index.md.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, found := strings.Cut(string(b), missingFieldsHeading)
	if !found {
		t.Fatalf("templates/index.md.tmpl has no %q section", missingFieldsHeading)
	}
	// The list: its items and their continuation lines.
	var list strings.Builder
	for _, line := range strings.Split(strings.TrimLeft(section, "\n"), "\n") {
		if !strings.HasPrefix(line, "- ") && !strings.HasPrefix(line, "  ") {
			break
		}
		list.WriteString(line + "\n")
	}
	var resp resource.SchemaResponse
	NewReleaseResource().Schema(context.Background(), resource.SchemaRequest{}, &resp)
	fields := regexp.MustCompile("`(spec\\.[A-Za-z.]+)`").FindAllStringSubmatch(list.String(), -1)
	if len(fields) == 0 {
		t.Fatal("the section lists no spec field")
	}
	for _, m := range fields {
		if attr, ok := attributeOfField(resp.Schema.Attributes, m[1]); ok {
			t.Errorf("templates/index.md.tmpl lists %s as without an attribute, but the resource has %s: take it out of %q", m[1], attr, missingFieldsHeading)
		}
	}
}

// attributeOfField is the attribute path that HelmRelease field maps to,
// if the schema has it.
func attributeOfField(attrs map[string]rschema.Attribute, field string) (string, bool) {
	field = strings.Replace(strings.TrimPrefix(field, "spec."), "chart.spec.", "chart.", 1)
	var segments []string
	for _, s := range strings.Split(strings.Trim(field, "."), ".") {
		segments = append(segments, snakeCase(s))
	}
	for _, prefix := range [][]string{nil, {"flux"}} {
		path := append(append([]string{}, prefix...), segments...)
		if hasAttribute(attrs, path) {
			return strings.Join(path, "."), true
		}
	}
	return "", false
}

func hasAttribute(attrs map[string]rschema.Attribute, path []string) bool {
	a, ok := attrs[path[0]]
	if !ok {
		return false
	}
	if len(path) == 1 {
		return true
	}
	switch n := a.(type) {
	case rschema.SingleNestedAttribute:
		return hasAttribute(n.Attributes, path[1:])
	case rschema.ListNestedAttribute:
		return hasAttribute(n.NestedObject.Attributes, path[1:])
	case rschema.MapNestedAttribute:
		return hasAttribute(n.NestedObject.Attributes, path[1:])
	}
	return false
}

// snakeCase turns a HelmRelease field name (camelCase) into an attribute
// name.
func snakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TestDocsNameExistingTests: every test the docs and the README cite as
// evidence exists.
func TestDocsNameExistingTests(t *testing.T) {
	root := filepath.Join("..", "..")
	var cited []string
	for _, pattern := range []string{"README.md", "templates/*.tmpl", "templates/*/*.tmpl"} {
		files, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range regexp.MustCompile("`(Test[A-Za-z0-9_]+)`").FindAllStringSubmatch(string(b), -1) {
				cited = append(cited, m[1]+" ("+filepath.ToSlash(strings.TrimPrefix(f, root+string(filepath.Separator)))+")")
			}
		}
	}
	defined := map[string]bool{}
	err := filepath.WalkDir(filepath.Join(root, "internal"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range regexp.MustCompile(`(?m)^func (Test[A-Za-z0-9_]+)\(`).FindAllStringSubmatch(string(b), -1) {
			defined[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(cited) == 0 {
		t.Fatal("the docs cite no test")
	}
	for _, c := range cited {
		if name, _, _ := strings.Cut(c, " "); !defined[name] {
			t.Errorf("%s is cited but no such test exists", c)
		}
	}
}
