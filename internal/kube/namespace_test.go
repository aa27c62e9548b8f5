package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testcluster"
)

// TestKeptObjects: an owned object goes with the namespace only when every
// owner is of a namespaced kind and gone or going itself.
func TestKeptObjects(t *testing.T) {
	namespaced := map[schema.GroupKind]bool{{Group: "apps", Kind: "Deployment"}: true, {Kind: "ConfigMap"}: true, {Group: "apps", Kind: "ReplicaSet"}: true}
	owner := func(apiVersion, kind, uid string) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: "o", UID: types.UID(uid)}
	}
	obj := func(name, uid string, owners ...metav1.OwnerReference) namespacedObject {
		return namespacedObject{name: name, meta: metav1.ObjectMeta{Name: name, UID: types.UID(uid), OwnerReferences: owners}}
	}
	now := metav1.Now()
	deleting := obj("ConfigMap/deleting", "d")
	deleting.meta.DeletionTimestamp = &now
	for _, tc := range []struct {
		name string
		objs []namespacedObject
		kept []string
	}{
		{"no owner", []namespacedObject{obj("ConfigMap/user", "1")}, []string{"ConfigMap/user"}},
		{"being deleted", []namespacedObject{deleting}, nil},
		{"owner gone (uninstalled)", []namespacedObject{obj("ReplicaSet.apps/web", "1", owner("apps/v1", "Deployment", "gone"))}, nil},
		{"owner in the namespace, going", []namespacedObject{
			obj("ReplicaSet.apps/web", "1", owner("apps/v1", "Deployment", "2")),
			func() namespacedObject {
				o := obj("Deployment.apps/web", "2")
				o.meta.DeletionTimestamp = &now
				return o
			}(),
		}, nil},
		{"owner in the namespace, staying", []namespacedObject{
			obj("ConfigMap/derived", "1", owner("v1", "ConfigMap", "2")),
			obj("ConfigMap/user", "2"),
		}, []string{"ConfigMap/derived", "ConfigMap/user"}},
		{"owner of a cluster-scoped kind", []namespacedObject{obj("ConfigMap/bound", "1", owner("rbac.authorization.k8s.io/v1", "ClusterRole", "9"))}, []string{"ConfigMap/bound"}},
		{"owner of an unknown kind", []namespacedObject{obj("ConfigMap/bound", "1", owner("example.com/v1", "Gone", "9"))}, []string{"ConfigMap/bound"}},
		{"one owner of two outside", []namespacedObject{obj("ConfigMap/bound", "1", owner("apps/v1", "Deployment", "gone"), owner("rbac.authorization.k8s.io/v1", "ClusterRole", "9"))}, []string{"ConfigMap/bound"}},
		{"a cycle of owners", []namespacedObject{
			obj("ConfigMap/a", "1", owner("v1", "ConfigMap", "2")),
			obj("ConfigMap/b", "2", owner("v1", "ConfigMap", "1")),
		}, []string{"ConfigMap/a", "ConfigMap/b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := keptObjects(tc.objs, namespaced)
			slices.Sort(got)
			if !slices.Equal(got, tc.kept) {
				t.Errorf("kept %v, want %v", got, tc.kept)
			}
		})
	}
}

// TestDeleteCreatedNamespaceReadsItWhole: a namespace is deleted only when
// every kind it may hold was listed. A custom resource that cannot be
// listed (its conversion webhook is down) keeps it, named; so does an
// object owned by a cluster-scoped object, which the garbage collector
// does not delete with the namespace's contents.
func TestDeleteCreatedNamespaceReadsItWhole(t *testing.T) {
	if testKubeconfig == "" {
		t.Skip("needs the test cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg, err := Config{ConfigPath: testKubeconfig}.RESTConfig(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)
	g := NewGetter(cfg, "", "")
	suffix := strings.ToLower(fmt.Sprint(time.Now().UnixNano() % 1e9))
	const createdFor = "apps/web"

	// Owned by a ClusterRole: kept, named.
	owned := "owned-" + suffix
	if _, err := g.CreateNamespace(ctx, owned, "test", createdFor); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), owned, metav1.DeleteOptions{}) })
	role, err := dyn.Resource(schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}).Create(ctx,
		&unstructured.Unstructured{Object: map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": "owner-" + suffix}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = dyn.Resource(schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}).Delete(context.Background(), role.GetName(), metav1.DeleteOptions{})
	})
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "bound",
		"ownerReferences": []any{map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "name": role.GetName(), "uid": string(role.GetUID())}}}}}
	if _, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(owned).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	done, err := g.DeleteCreatedNamespace(ctx, NamespaceDeletion{Name: owned, CreatedFor: createdFor, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if done.Deleted || !slices.Contains(done.Left, "ConfigMap/bound") {
		t.Errorf("namespace with a ConfigMap owned by a ClusterRole: %+v, want kept naming ConfigMap/bound", done)
	}

	// A custom resource that cannot be listed: kept, its kind named.
	unlisted := "unlisted-" + suffix
	if _, err := g.CreateNamespace(ctx, unlisted, "test", createdFor); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), unlisted, metav1.DeleteOptions{}) })
	group := "t" + suffix + ".example.com"
	crd := unlistableCRD(group)
	crds := dyn.Resource(apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions"))
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Without the webhook first: the CRD's finalizer lists its objects.
		ctx := context.Background()
		_, _ = crds.Patch(ctx, crd.GetName(), types.MergePatchType, []byte(`{"spec":{"conversion":{"strategy":"None","webhook":null}}}`), metav1.PatchOptions{})
		_ = crds.Delete(ctx, crd.GetName(), metav1.DeleteOptions{})
	})
	widgets := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := dyn.Resource(widgets).Namespace(unlisted).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": group + "/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"}}}, metav1.CreateOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("creating a Widget: %v", err)
	}
	// The API server serves a new CRD before its discovery names it (the
	// discovery controller catches up in the background, slower on a busy
	// machine); the deletion reads discovery.
	dc := discovery.NewDiscoveryClientForConfigOrDie(cfg)
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		_, err := dc.ServerResourcesForGroupVersion(group + "/v2")
		return err == nil, nil
	}); err != nil {
		t.Fatalf("discovery of %s/v2: %v", group, err)
	}
	done, err = g.DeleteCreatedNamespace(ctx, NamespaceDeletion{Name: unlisted, CreatedFor: createdFor, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if done.Deleted || len(done.Unread) != 1 || !strings.Contains(done.Unread[0], "widgets."+group) {
		t.Errorf("namespace with a kind that cannot be listed: %+v, want kept naming widgets.%s", done, group)
	}
	if ns, err := cs.CoreV1().Namespaces().Get(ctx, unlisted, metav1.GetOptions{}); err != nil || ns.DeletionTimestamp != nil {
		t.Errorf("namespace %s: %v, want kept", unlisted, err)
	}
}

// unlistableCRD is a CRD of Widgets stored as v1 and served as v2 too,
// the preferred version, through a conversion webhook that is not
// there: a Widget can be created as v1, and no list of v2 succeeds.
func unlistableCRD(group string) *unstructured.Unstructured {
	port := int32(443)
	schemaProps := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr(true)}}
	crd := &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: "widgets." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true, Schema: schemaProps},
				{Name: "v2", Served: true, Schema: schemaProps},
			},
			Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter, Webhook: &apiextensionsv1.WebhookConversion{
				ConversionReviewVersions: []string{"v1"},
				ClientConfig:             &apiextensionsv1.WebhookClientConfig{Service: &apiextensionsv1.ServiceReference{Namespace: "default", Name: "no-such-converter", Port: &port}},
			}},
		},
	}
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	if err != nil {
		panic(err) // a typed object: cannot fail
	}
	return &unstructured.Unstructured{Object: raw}
}

// TestDeleteCreatedNamespaceDiscoveryFailed: an API group whose discovery
// fails (an aggregated API whose service is gone) keeps the namespace,
// named: what the namespace holds of it was never listed. On a cluster of
// its own, as a broken API service slows every namespace deletion of its
// cluster.
func TestDeleteCreatedNamespaceDiscoveryFailed(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a cluster of its own")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := testcluster.Build(ctx, testcluster.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := testcluster.Start(ctx, testcluster.Options{BinDir: bin, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Stop() }()
	cfg, err := Config{ConfigPath: c.Kubeconfig}.RESTConfig(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	g := NewGetter(cfg, "", "")
	if _, err := g.CreateNamespace(ctx, "created", "test", "apps/web"); err != nil {
		t.Fatal(err)
	}
	apiServices := schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	broken := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": map[string]any{"name": "v1.broken.example.com"},
		"spec": map[string]any{"group": "broken.example.com", "version": "v1", "groupPriorityMinimum": 100, "versionPriority": 100, "insecureSkipTLSVerify": true,
			"service": map[string]any{"namespace": "default", "name": "no-such-service", "port": 443}},
	}}
	if _, err := dynamic.NewForConfigOrDie(cfg).Resource(apiServices).Create(ctx, broken, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Until the aggregator reports the group unavailable, discovery does
	// not name it at all.
	dc := discovery.NewDiscoveryClientForConfigOrDie(cfg)
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		_, err := discovery.ServerPreferredNamespacedResources(dc)
		var failed *discovery.ErrGroupDiscoveryFailed
		return errors.As(err, &failed), nil
	})
	if err != nil {
		t.Fatalf("discovery never failed for broken.example.com: %v", err)
	}
	done, err := g.DeleteCreatedNamespace(ctx, NamespaceDeletion{Name: "created", CreatedFor: "apps/web", Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if done.Deleted || len(done.Unread) != 1 || !strings.Contains(done.Unread[0], "broken.example.com/v1") {
		t.Errorf("namespace with an API group whose discovery fails: %+v, want kept naming broken.example.com/v1", done)
	}
}
