package provider

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"sigs.k8s.io/yaml"
)

// errorText matches a diagnostic's text however Terraform wraps its lines;
// " … " stands for the lines Terraform adds (file, line, source).
func errorText(text string) *regexp.Regexp {
	parts := strings.Split(text, " … ")
	for i, part := range parts {
		words := strings.Fields(part)
		for j, w := range words {
			words[j] = regexp.QuoteMeta(w)
		}
		parts[i] = strings.Join(words, `\s+`)
	}
	return regexp.MustCompile(strings.Join(parts, `[\s\S]*?`))
}

// objectField checks one field of an object shown as YAML in resources.
func objectField(want any, fields ...string) knownvalue.Check {
	return knownvalue.StringFunc(func(s string) error {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(s), &obj); err != nil {
			return fmt.Errorf("object is not YAML: %w", err)
		}
		got, found := field(obj, fields...)
		if !found {
			return fmt.Errorf("field %s not found in:\n%s", strings.Join(fields, "."), s)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("field %s is %v, want %v", strings.Join(fields, "."), got, want)
		}
		return nil
	})
}

// field walks maps by key and lists by index.
func field(v any, fields ...string) (any, bool) {
	for _, f := range fields {
		switch t := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = t[f]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(f)
			if err != nil || i < 0 || i >= len(t) {
				return nil, false
			}
			v = t[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// notContaining checks that a string holds none of the given substrings.
func notContaining(secrets ...string) knownvalue.Check {
	return knownvalue.StringFunc(func(s string) error {
		for _, secret := range secrets {
			if strings.Contains(s, secret) {
				return fmt.Errorf("value shows %q:\n%s", secret, s)
			}
		}
		return nil
	})
}

// all combines string checks.
func all(checks ...knownvalue.Check) knownvalue.Check {
	return knownvalue.StringFunc(func(s string) error {
		for _, c := range checks {
			if err := c.CheckValue(s); err != nil {
				return err
			}
		}
		return nil
	})
}
