package provider

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// errorText matches a diagnostic's text however Terraform wraps its lines.
func errorText(text string) *regexp.Regexp {
	words := strings.Fields(text)
	for i, w := range words {
		words[i] = regexp.QuoteMeta(w)
	}
	return regexp.MustCompile(strings.Join(words, `\s+`))
}

// objectField checks one field of an object shown as YAML in resources.
func objectField(want any, fields ...string) knownvalue.Check {
	return knownvalue.StringFunc(func(s string) error {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(s), &obj); err != nil {
			return fmt.Errorf("object is not YAML: %w", err)
		}
		got, found, err := unstructured.NestedFieldNoCopy(obj, fields...)
		if err != nil || !found {
			return fmt.Errorf("field %s not found in:\n%s", strings.Join(fields, "."), s)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("field %s is %v, want %v", strings.Join(fields, "."), got, want)
		}
		return nil
	})
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
