package helmstate

import (
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
)

// State is what helmrelease_release takes of a helm_release
// state (schema versions 1, helm provider v2.x, and 2, v3.x: they differ in
// blocks against attributes, which JSON does not show, and in metadata,
// unused here).
type State struct {
	Name                     string     `json:"name"`
	Namespace                string     `json:"namespace"`
	Chart                    string     `json:"chart"`
	Repository               *string    `json:"repository"`
	Version                  *string    `json:"version"`
	Devel                    *bool      `json:"devel"`
	RepositoryUsername       *string    `json:"repository_username"`
	RepositoryPassword       *string    `json:"repository_password"`
	RepositoryCAFile         *string    `json:"repository_ca_file"`
	RepositoryCertFile       *string    `json:"repository_cert_file"`
	RepositoryKeyFile        *string    `json:"repository_key_file"`
	PassCredentials          bool       `json:"pass_credentials"`
	Verify                   bool       `json:"verify"`
	Keyring                  *string    `json:"keyring"`
	Values                   []string   `json:"values"`
	Set                      []SetValue `json:"set"`
	SetList                  []SetList  `json:"set_list"`
	SetSensitive             []SetValue `json:"set_sensitive"`
	CreateNamespace          bool       `json:"create_namespace"`
	Atomic                   bool       `json:"atomic"`
	Wait                     *bool      `json:"wait"`
	Timeout                  int64      `json:"timeout"`
	MaxHistory               int64      `json:"max_history"`
	DisableWebhooks          bool       `json:"disable_webhooks"`
	DisableOpenAPIValidation bool       `json:"disable_openapi_validation"`
	SkipCRDs                 bool       `json:"skip_crds"`
	ForceUpdate              bool       `json:"force_update"`
	CleanupOnFail            bool       `json:"cleanup_on_fail"`
	ReuseValues              bool       `json:"reuse_values"`
	Replace                  bool       `json:"replace"`
	RecreatePods             bool       `json:"recreate_pods"`
	DependencyUpdate         bool       `json:"dependency_update"`
	Postrender               any        `json:"postrender"`
}

// SetValue is an entry of set or set_sensitive.
type SetValue struct {
	Name  string  `json:"name"`
	Value *string `json:"value"`
	Type  *string `json:"type"`
}

// SetList is an entry of set_list.
type SetList struct {
	Name  string   `json:"name"`
	Value []string `json:"value"`
}

// DefaultTimeout is the helm provider's timeout, in seconds.
const DefaultTimeout = 300

// Composed is the values of the helm_release, composed as the helm
// provider does: the values documents merged in order, then set, set_list
// and set_sensitive with Helm's --set syntax. The set_sensitive entries
// come back apart (sensitive), as they were applied over the rest.
func (src *State) Composed() (values, sensitive map[string]any, err error) {
	values = map[string]any{}
	for i, doc := range src.Values {
		current, err := helm.ReadValues([]byte(doc))
		if err != nil {
			return nil, nil, fmt.Errorf("values[%d] is not a YAML mapping: %w", i, err)
		}
		values = helm.MergeTables(current, values)
	}
	// As the helm provider composes them: auto and string in --set
	// syntax; a literal as the YAML value of a top-level key named by the
	// whole name, dots included ("a.b" stays one key, "1,2" a string).
	set := func(into map[string]any, s SetValue) error {
		value := Deref(s.Value)
		switch Deref(s.Type) {
		case "auto", "":
			return helm.ParseSet(s.Name+"="+value, into)
		case "string":
			return helm.ParseSetString(s.Name+"="+value, into)
		case "literal":
			var literal any
			if err := yaml.Unmarshal([]byte(s.Name+": "+value), &literal); err != nil {
				return errors.New("not a YAML value")
			}
			if m, ok := literal.(map[string]any); ok {
				into[s.Name] = m[s.Name]
			} else {
				into[s.Name] = literal
			}
			return nil
		default:
			return fmt.Errorf("type %q is none of auto, string and literal", Deref(s.Type))
		}
	}
	for _, s := range src.Set {
		if err := set(values, s); err != nil {
			return nil, nil, fmt.Errorf("set %q: %w", s.Name, err)
		}
	}
	for _, s := range src.SetList {
		if err := helm.ParseSet(s.Name+"={"+strings.Join(s.Value, ",")+"}", values); err != nil {
			return nil, nil, fmt.Errorf("set_list %q: %w", s.Name, err)
		}
	}
	sensitive = map[string]any{}
	for _, s := range src.SetSensitive {
		if err := set(sensitive, s); err != nil {
			// The value is sensitive: the name and type alone.
			return nil, nil, fmt.Errorf("set_sensitive %q of type %q cannot be composed", s.Name, Deref(s.Type))
		}
	}
	return values, sensitive, nil
}

// Deref is what p points to, the zero value for nil.
func Deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
