package helm

import (
	"fmt"
	"sync"

	"helm.sh/helm/v4/pkg/kube"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes/scheme"
	cachedopenapi "k8s.io/client-go/openapi/cached"
	"k8s.io/kubectl/pkg/util/openapi"
	"k8s.io/kubectl/pkg/validation"
)

// fieldValidationKinds is a getter that keeps, for its cluster, the kinds
// whose API server validates fields itself (the fieldValidation query
// parameter): kube.Getter.
type fieldValidationKinds interface {
	FieldValidationKinds() *sync.Map
}

// sharedValidation is Helm's factory with a Validator that learns once per
// cluster which kinds the API server validates. kubectl's Validator is
// made anew for every Build, and its first check of a kind parses the
// group-version's OpenAPI document: for a fleet, every release parsed
// the same documents again (18% of a 100-release install's CPU). What is
// learnt is only that a kind is supported, which stays true; anything
// else (a kind not served yet, a failed read) is asked again next time.
type sharedValidation struct {
	kube.Factory
	getter genericclioptions.RESTClientGetter
	kinds  *sync.Map
}

// withSharedValidation wraps f when the getter keeps what is learnt and f
// can read OpenAPI schemas (for the client-side validation of a server
// without field validation), else keeps it.
func withSharedValidation(f kube.Factory, getter genericclioptions.RESTClientGetter) kube.Factory {
	kinds, ok := getter.(fieldValidationKinds)
	if _, reads := f.(openapi.OpenAPIResourcesGetter); !ok || !reads {
		return f
	}
	return sharedValidation{Factory: f, getter: getter, kinds: kinds.FieldValidationKinds()}
}

// UnstructuredClientForMapping is the wrapped factory's (Build's clients).
func (f sharedValidation) UnstructuredClientForMapping(m *meta.RESTMapping) (resource.RESTClient, error) {
	u, ok := f.Factory.(unstructuredClients)
	if !ok {
		return nil, fmt.Errorf("the factory makes no client for %s", m.GroupVersionKind)
	}
	return u.UnstructuredClientForMapping(m)
}

// Validator is kubectl's (cmd/util's factory) with the verifier shared.
func (f sharedValidation) Validator(directive string) (validation.Schema, error) {
	if directive == metav1.FieldValidationIgnore {
		return validation.NullSchema{}, nil
	}
	dyn, err := f.DynamicClient()
	if err != nil {
		return nil, fmt.Errorf("creating the validator: %w", err)
	}
	disc, err := f.getter.ToDiscoveryClient()
	if err != nil {
		return nil, fmt.Errorf("creating the validator: %w", err)
	}
	verifier := supportCache{
		supported: f.kinds,
		builtin:   func() bool { return validatesBuiltinKinds(disc, f.kinds) },
		next: resource.NewFallbackQueryParamVerifier(
			resource.NewQueryParamVerifierV3(dyn, cachedopenapi.NewClient(disc.OpenAPIV3()), resource.QueryParamFieldValidation),
			resource.NewQueryParamVerifier(dyn, disc, resource.QueryParamFieldValidation)),
	}
	local := validation.ConjunctiveSchema{validation.NewSchemaValidation(f.Factory.(openapi.OpenAPIResourcesGetter)), validation.NoDoubleKeySchema{}}
	return validation.NewParamVerifyingSchema(local, verifier, directive), nil
}

// supportCache answers from supported, then for a built-in kind of a
// server that validates every built-in kind, and asks next for any other.
type supportCache struct {
	supported *sync.Map
	// builtin says whether the server validates the fields of every kind
	// Kubernetes itself serves.
	builtin func() bool
	next    resource.Verifier
}

func (c supportCache) HasSupport(gvk schema.GroupVersionKind) error {
	if _, ok := c.supported.Load(gvk); ok {
		return nil
	}
	// A List is no kind the server validates: kubectl's verifier says
	// so, and its items are validated locally.
	if gvk.Kind != "List" && scheme.Scheme.Recognizes(gvk) && c.builtin != nil && c.builtin() {
		c.supported.Store(gvk, struct{}{})
		return nil
	}
	err := c.next.HasSupport(gvk)
	if err == nil {
		c.supported.Store(gvk, struct{}{})
	}
	return err
}

// fieldValidationGA is the Kubernetes release whose API server validates
// the fields of every kind it serves itself (server-side field validation,
// GA in 1.27).
var fieldValidationGA = version.MajorMinor(1, 27)

// builtinValidationKey is the key under which the kinds' map keeps whether
// the server is fieldValidationGA or later.
type builtinValidationKey struct{}

// validatesBuiltinKinds says whether the server's version is
// fieldValidationGA or later, asked once per cluster. Then the API server
// validates the fields of each built-in kind, which kubectl's verifier
// would learn by reading the group-version's OpenAPI document: a megabyte
// for the core group, parsed in every process (each terraform command
// starts one). A kind the server does not serve itself (a custom resource,
// an aggregated API) is still checked against its document.
func validatesBuiltinKinds(disc discovery.DiscoveryInterface, kinds *sync.Map) bool {
	if v, ok := kinds.Load(builtinValidationKey{}); ok {
		return v.(bool)
	}
	info, err := disc.ServerVersion()
	if err != nil {
		// Asked again next time; the OpenAPI document answers now.
		return false
	}
	v, err := version.ParseGeneric(info.GitVersion)
	validates := err == nil && v.AtLeast(fieldValidationGA)
	kinds.Store(builtinValidationKey{}, validates)
	return validates
}
