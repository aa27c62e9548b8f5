package helm

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sync"
	"text/template"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/engine"
	"k8s.io/client-go/rest"
)

// LookupCall is one call of the template function lookup: an object by
// name, or a list when Name is empty.
type LookupCall struct {
	APIVersion, Kind, Namespace, Name string
}

func (c LookupCall) String() string {
	what := c.Kind + " " + c.Namespace + "/" + c.Name
	if c.Name == "" {
		what = "every " + c.Kind + " in " + c.Namespace
		if c.Namespace == "" {
			what = "every " + c.Kind
		}
	}
	return c.APIVersion + " " + what
}

// LookupRead is what a lookup call read: the SHA-256 of its result
// (LookupDigest), and whether it found anything.
type LookupRead struct {
	Sum   [sha256.Size]byte
	Found bool
}

// Lookups records the lookup calls of a render and what each read, so
// that a later render can be checked against them. Safe for concurrent
// use.
type Lookups struct {
	mu    sync.Mutex
	reads map[LookupCall]LookupRead
}

// Reads are the calls recorded so far.
func (l *Lookups) Reads() map[LookupCall]LookupRead {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.reads)
}

// wrap is Helm's lookup of config, recording each call's result (none
// when l is nil).
func (l *Lookups) wrap(config *rest.Config) func(apiVersion, kind, namespace, name string) (map[string]any, error) {
	lookup := engine.NewLookupFunction(config)
	if l == nil {
		return lookup
	}
	return func(apiVersion, kind, namespace, name string) (map[string]any, error) {
		out, err := lookup(apiVersion, kind, namespace, name)
		if err != nil {
			return out, err
		}
		read, err := lookupRead(out)
		if err != nil {
			return out, err
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.reads == nil {
			l.reads = map[LookupCall]LookupRead{}
		}
		l.reads[LookupCall{APIVersion: apiVersion, Kind: kind, Namespace: namespace, Name: name}] = read
		return out, nil
	}
}

// lookupTimeout bounds each request of Lookup whose config sets none:
// Helm's lookup takes no context.
const lookupTimeout = 30 * time.Second

// Lookup reads call as a render's lookup does, with config's client.
func Lookup(config *rest.Config, call LookupCall) (LookupRead, error) {
	if config.Timeout == 0 {
		config = rest.CopyConfig(config)
		config.Timeout = lookupTimeout
	}
	out, err := engine.NewLookupFunction(config)(call.APIVersion, call.Kind, call.Namespace, call.Name)
	if err != nil {
		return LookupRead{}, fmt.Errorf("lookup of %s: %w", call, err)
	}
	return lookupRead(out)
}

// lookupRead digests a lookup's result without what every write of an
// object changes whatever it writes (resourceVersion, managedFields): an
// object written again with the same content reads the same.
func lookupRead(result map[string]any) (LookupRead, error) {
	if len(result) == 0 {
		return LookupRead{}, nil
	}
	stripped := maps.Clone(result)
	stripped["metadata"] = withoutWriteFields(result["metadata"])
	if items, ok := result["items"].([]any); ok {
		out := make([]any, len(items))
		for i, item := range items {
			if obj, ok := item.(map[string]any); ok {
				obj = maps.Clone(obj)
				obj["metadata"] = withoutWriteFields(obj["metadata"])
				item = obj
			}
			out[i] = item
		}
		stripped["items"] = out
	}
	b, err := json.Marshal(stripped) // map keys sorted: one encoding per content
	if err != nil {
		return LookupRead{}, fmt.Errorf("lookup result: %w", err)
	}
	return LookupRead{Sum: sha256.Sum256(b), Found: true}, nil
}

func withoutWriteFields(metadata any) any {
	m, ok := metadata.(map[string]any)
	if !ok {
		return metadata
	}
	m = maps.Clone(m)
	delete(m, "resourceVersion")
	delete(m, "managedFields")
	return m
}

// withLookups is cfg with lookup recorded into l; cfg when l is nil.
func (c *Client) withLookups(cfg *action.Configuration, l *Lookups) (*action.Configuration, error) {
	if l == nil {
		return cfg, nil
	}
	config, err := cfg.RESTClientGetter.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("lookup client: %w", err)
	}
	out := action.NewConfiguration(action.ConfigurationSetLogger(c.logs))
	out.RESTClientGetter, out.Releases, out.Capabilities, out.KubeClient = cfg.RESTClientGetter, cfg.Releases, cfg.Capabilities, cfg.KubeClient
	out.RegistryClient, out.HookOutputFunc = cfg.RegistryClient, cfg.HookOutputFunc
	out.CustomTemplateFuncs = template.FuncMap{}
	maps.Copy(out.CustomTemplateFuncs, cfg.CustomTemplateFuncs)
	out.CustomTemplateFuncs["lookup"] = l.wrap(config)
	return out, nil
}

// lookupCall finds a call of the template function lookup.
var lookupCall = regexp.MustCompile(`\blookup\b`)

// UsesLookup reports whether a template of c or of its subcharts, or a
// string of values (which tpl may render), names the function lookup, so
// that only such releases' renders are recorded.
func UsesLookup(c *Chart, values map[string]any) bool {
	return chartUsesLookup(c) || valueUsesLookup(values)
}

func chartUsesLookup(c *Chart) bool {
	if c == nil {
		return false
	}
	for _, t := range c.Templates {
		if lookupCall.Match(t.Data) {
			return true
		}
	}
	return slices.ContainsFunc(c.Dependencies(), chartUsesLookup)
}

func valueUsesLookup(v any) bool {
	switch v := v.(type) {
	case string:
		return lookupCall.MatchString(v)
	case map[string]any:
		for _, e := range v {
			if valueUsesLookup(e) {
				return true
			}
		}
	case []any:
		return slices.ContainsFunc(v, valueUsesLookup)
	}
	return false
}
