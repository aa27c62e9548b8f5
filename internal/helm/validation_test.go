package helm

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	k8s "github.com/helmrelease/terraform-provider-helmrelease/internal/kube"
)

// TestBuiltinKindsValidateWithoutOpenAPI: Helm's validating Build of
// built-in kinds on a server that validates their fields reads no OpenAPI
// document (the core group's is a megabyte, read by every process before).
func TestBuiltinKindsValidateWithoutOpenAPI(t *testing.T) {
	t.Parallel()
	if testing.Short() || testRESTConfig == nil {
		t.Skip("needs a cluster")
	}
	cfg := rest.CopyConfig(testRESTConfig)
	var mu sync.Mutex
	var paths []string
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			paths = append(paths, r.URL.Path)
			mu.Unlock()
			return rt.RoundTrip(r)
		})
	})
	c, err := NewClient(ClientOptions{Getter: k8s.NewGetter(cfg, "default", ""), StorageNamespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.kube.Build(strings.NewReader(builtManifest), true); err != nil {
		t.Fatalf("validating Build: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	var openAPI []string
	for _, p := range paths {
		if strings.HasPrefix(p, "/openapi/") {
			openAPI = append(openAPI, p)
		}
	}
	if len(openAPI) > 0 {
		t.Errorf("a ConfigMap and a Deployment validated reading %v", openAPI)
	}
	if len(paths) == 0 {
		t.Error("the recorder saw no request: the test checks nothing")
	}
}

// countingVerifier answers unsupported and counts the kinds it is asked.
type countingVerifier struct{ asked *[]schema.GroupVersionKind }

func (v countingVerifier) HasSupport(gvk schema.GroupVersionKind) error {
	*v.asked = append(*v.asked, gvk)
	return errors.New("not supported")
}

func TestSupportCache(t *testing.T) {
	t.Parallel()
	configMap := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	widget := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	for _, tc := range []struct {
		name      string
		gvk       schema.GroupVersionKind
		builtin   bool
		supported bool
		asked     bool
	}{
		{"a built-in kind of a server that validates it", configMap, true, true, false},
		{"a built-in kind of an older server", configMap, false, false, true},
		{"a custom resource is asked for", widget, true, false, true},
		{"a List is asked for", schema.GroupVersionKind{Version: "v1", Kind: "List"}, true, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var asked []schema.GroupVersionKind
			c := supportCache{supported: &sync.Map{}, builtin: func() bool { return tc.builtin }, next: countingVerifier{&asked}}
			err := c.HasSupport(tc.gvk)
			if (err == nil) != tc.supported {
				t.Errorf("HasSupport(%v) = %v, want supported %t", tc.gvk, err, tc.supported)
			}
			if (len(asked) > 0) != tc.asked {
				t.Errorf("the OpenAPI verifier asked for %v, want asked %t", asked, tc.asked)
			}
		})
	}
}
