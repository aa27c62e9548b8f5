package provider

import (
	"context"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/manifest"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/postrender"
)

const tmpl = "data.helmrelease_template.t"

func testChartDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("testdata/charts/app")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func resourceAt(key string) tfjsonpath.Path { return tfjsonpath.New("resources").AtMapKey(key) }

func TestAccTemplate_localChart(t *testing.T) {
	t.Parallel()
	chart := testChartDir(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: providerConfig() + fmt.Sprintf(`
data "helmrelease_template" "t" {
  name      = "web"
  namespace = "apps"
  chart     = { name = %q, version = "~1.2" }
  values = {
    replicaCount = 3
    image        = { tag = "2.0" }
  }
  sensitive_values = yamlencode({ password = "s3cr3t-value" })
}
`, chart),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(tmpl, tfjsonpath.New("id"), knownvalue.StringExact("apps/web")),
				statecheck.ExpectKnownValue(tmpl, tfjsonpath.New("release_name"), knownvalue.StringExact("web")),
				statecheck.ExpectKnownValue(tmpl, tfjsonpath.New("target_namespace"), knownvalue.StringExact("apps")),
				statecheck.ExpectKnownValue(tmpl, tfjsonpath.New("chart_version"), knownvalue.StringRegexp(localRevision("1.2.3"))),
				statecheck.ExpectKnownValue(tmpl, tfjsonpath.New("app_version"), knownvalue.StringExact("4.5.6")),
				statecheck.ExpectKnownValue(tmpl, tfjsonpath.New("notes"), knownvalue.StringExact("web runs 3 replica(s) in apps.\n")),
				statecheck.ExpectKnownValue(tmpl, tfjsonpath.New("resources"), knownvalue.MapSizeExact(5)),
				statecheck.ExpectKnownValue(tmpl, resourceAt("apps/v1/Deployment/apps/web"), all(
					objectField(3, "spec", "replicas"),
					objectField("apps", "metadata", "namespace"),
					objectField("web", "metadata", "labels", postrender.OriginNameLabel),
					objectField("apps", "metadata", "labels", postrender.OriginNamespaceLabel),
				)),
				statecheck.ExpectKnownValue(tmpl, resourceAt("v1/ConfigMap/apps/web-config"), objectField("hello", "data", "message")),
				statecheck.ExpectKnownValue(tmpl, resourceAt("rbac.authorization.k8s.io/v1/ClusterRole/web-reader"), objectField("web", "metadata", "labels", postrender.OriginNameLabel)),
				statecheck.ExpectKnownValue(tmpl, resourceAt("apiextensions.k8s.io/v1/CustomResourceDefinition/widgets.example.com"), objectField("example.com", "spec", "group")),
				// Secret data is never shown: a data source keeps no key to hash it with.
				statecheck.ExpectKnownValue(tmpl, resourceAt("v1/Secret/apps/web-secret"), all(
					objectField(manifest.MaskedPrefix, "data", "password"),
					objectField(manifest.MaskedPrefix, "stringData", "token"),
					notContaining("s3cr3t-value", base64.StdEncoding.EncodeToString([]byte("s3cr3t-value"))),
				)),
				statecheck.ExpectSensitiveValue(tmpl, tfjsonpath.New("sensitive_values")),
			},
		}},
	})
}

func TestAccTemplate_packagedChartAndTargetNamespace(t *testing.T) {
	t.Parallel()
	c, err := loader.Load(testChartDir(t))
	if err != nil {
		t.Fatal(err)
	}
	tgz, err := chartutil.Save(c, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: providerConfig() + fmt.Sprintf(`
data "helmrelease_template" "t" {
  name             = "web"
  target_namespace = "prod"
  chart            = { name = %q }
}
`, tgz),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(tmpl, tfjsonpath.New("namespace"), knownvalue.StringExact("default")),
				statecheck.ExpectKnownValue(tmpl, tfjsonpath.New("release_name"), knownvalue.StringExact("prod-web")),
				// The ID a helmrelease_release of the same inputs has.
				statecheck.ExpectKnownValue(tmpl, tfjsonpath.New("id"), knownvalue.StringExact("default/prod-web")),
				statecheck.ExpectKnownValue(tmpl, resourceAt("apps/v1/Deployment/prod/prod-web"), all(
					objectField(1, "spec", "replicas"),
					objectField("default", "metadata", "labels", postrender.OriginNamespaceLabel),
				)),
			},
		}},
	})
}

// createValuesObjects creates the ConfigMaps and Secrets of a test in a
// namespace of its own.
func createValuesObjects(t *testing.T, namespace string, objs ...any) {
	t.Helper()
	ctx := context.Background()
	cs := testClient(t)
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.ConfigMap:
			o.Namespace = namespace
			_ = cs.CoreV1().ConfigMaps(namespace).Delete(ctx, o.Name, metav1.DeleteOptions{})
			_, err = cs.CoreV1().ConfigMaps(namespace).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.Secret:
			o.Namespace = namespace
			_ = cs.CoreV1().Secrets(namespace).Delete(ctx, o.Name, metav1.DeleteOptions{})
			_, err = cs.CoreV1().Secrets(namespace).Create(ctx, o, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestAccTemplate_valuesFrom(t *testing.T) {
	t.Parallel()
	chart := testChartDir(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			PreConfig: func() {
				createValuesObjects(t, "values-from",
					&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "base"}, Data: map[string]string{
						"values.yaml": "replicaCount: 2\nmessage: from-configmap\nextra:\n  a: from-configmap\n  b: from-configmap\n",
					}},
					&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "override"}, Data: map[string][]byte{
						"custom.yaml": []byte("extra:\n  b: from-secret\nmessage: from-secret\n"),
					}},
					&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tag"}, Data: map[string][]byte{"tag": []byte("9.9")}},
					&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "quoted"}, Data: map[string]string{"count": `"5"`}},
				)
			},
			Config: providerConfig() + fmt.Sprintf(`
data "helmrelease_template" "t" {
  name      = "web"
  namespace = "values-from"
  chart     = { name = %q }
  values = {
    message = "inline"
    image   = { tag = "inline" }
  }
  values_from = [
    { kind = "ConfigMap", name = "base" },
    { kind = "Secret", name = "override", values_key = "custom.yaml" },
    { kind = "Secret", name = "tag", values_key = "tag", target_path = "image.tag" },
    { kind = "ConfigMap", name = "quoted", values_key = "count", target_path = "extra.count" },
    { kind = "ConfigMap", name = "absent", optional = true },
    { kind = "Secret", name = "override", values_key = "absent-key", optional = true },
  ]
}
`, chart),
			ConfigStateChecks: []statecheck.StateCheck{
				// From the ConfigMap, not overridden.
				statecheck.ExpectKnownValue(tmpl, resourceAt("apps/v1/Deployment/values-from/web"), all(
					objectField(2, "spec", "replicas"),
					// A target path overwrites even inline values.
					objectField("example.com/app:9.9", "spec", "template", "spec", "containers", "0", "image"),
				)),
				statecheck.ExpectKnownValue(tmpl, resourceAt("v1/ConfigMap/values-from/web-config"), all(
					// Inline values overwrite the references.
					objectField("inline", "data", "message"),
					objectField("from-configmap", "data", "a"),
					// Later references overwrite earlier ones: the
					// Secret's value, which the chart copies into its
					// ConfigMap, hidden there.
					objectField("(sensitive value)", "data", "b"),
					// A quoted value is set as a string.
					objectField("5", "data", "count"),
				)),
			},
		}},
	})
}

func TestAccTemplate_postRenderers(t *testing.T) {
	t.Parallel()
	chart := testChartDir(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: providerConfig() + fmt.Sprintf(`
data "helmrelease_template" "t" {
  name  = "web"
  chart = { name = %q }
  common_metadata = {
    labels      = { team = "platform" }
    annotations = { "example.com/owner" = "platform" }
  }
  post_renderers = [
    {
      kustomize = {
        patches = [
          {
            target = { kind = "Deployment", name = "web" }
            patch  = jsonencode([{ op = "replace", path = "/spec/replicas", value = 4 }])
          },
          {
            patch = <<-YAML
              apiVersion: v1
              kind: ConfigMap
              metadata:
                name: web-config
                labels:
                  %s: someone-else
              data:
                patched: "yes"
            YAML
          },
        ]
        images = [{ name = "example.com/app", new_name = "registry.example.com/app", new_tag = "3.0" }]
      }
    },
    {
      kustomize = {
        patches_json6902 = [{
          target = { kind = "ConfigMap" }
          patch  = "[{\"op\": \"add\", \"path\": \"/data/second\", \"value\": \"applied after the first\"}]"
        }]
        patches_strategic_merge = [<<-YAML
          apiVersion: apps/v1
          kind: Deployment
          metadata:
            name: web
            annotations:
              strategic: merge
        YAML
        ]
      }
    },
  ]
}
`, chart, postrender.OriginNameLabel),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(tmpl, resourceAt("apps/v1/Deployment/default/web"), all(
					objectField(4, "spec", "replicas"),
					objectField("registry.example.com/app:3.0", "spec", "template", "spec", "containers", "0", "image"),
					objectField("merge", "metadata", "annotations", "strategic"),
					objectField("platform", "metadata", "labels", "team"),
					objectField("platform", "metadata", "annotations", "example.com/owner"),
				)),
				statecheck.ExpectKnownValue(tmpl, resourceAt("v1/ConfigMap/default/web-config"), all(
					objectField("yes", "data", "patched"),
					objectField("applied after the first", "data", "second"),
					// Origin labels are set last: a patch cannot change them.
					objectField("web", "metadata", "labels", postrender.OriginNameLabel),
				)),
			},
		}},
	})
}

func TestAccTemplate_badInput(t *testing.T) {
	t.Parallel()
	chart := testChartDir(t)
	config := func(body string) string {
		return providerConfig() + fmt.Sprintf(`
data "helmrelease_template" "t" {
  name      = "web"
  namespace = "bad-input"
  chart     = { name = %q }
  %s
}
`, chart, body)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					createValuesObjects(t, "bad-input",
						&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "broken"}, Data: map[string]string{"values.yaml": "replicaCount: 1\nsecret: !!int hunter2"}},
						&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "scalar"}, Data: map[string]string{"v": "a: b: c"}},
					)
				},
				Config:      config(`values_from = [{ kind = "ConfigMap", name = "broken" }]`),
				ExpectError: errorText(`Error: Values reference failed with data.helmrelease_template.t … key "values.yaml" of ConfigMap "broken" is not a valid YAML values document: error converting YAML to JSON: yaml: cannot decode !!str (content not shown) as a !!int. Store a YAML mapping of values under that key, or set target_path to set the data as a single value.`),
			},
			{
				Config:      config(`values_from = [{ kind = "ConfigMap", name = "absent" }]`),
				ExpectError: errorText(`ConfigMap "absent" not found. Create the ConfigMap in namespace "bad-input", or set optional = true if the release may do without it.`),
			},
			{
				Config:      config(`values_from = [{ kind = "Secret", name = "absent", values_key = "x", optional = false }]`),
				ExpectError: errorText(`Secret "absent" not found. Create the Secret in namespace "bad-input", or set optional = true if the release may do without it.`),
			},
			{
				Config:      config(`values_from = [{ kind = "ConfigMap", name = "broken", values_key = "missing" }]`),
				ExpectError: errorText(`ConfigMap "broken" has no key "missing". Set values_key to a key present in the object (default values.yaml), or set optional = true.`),
			},
			{
				Config:      config(`values_from = [{ kind = "ConfigMap", name = "broken", target_path = "image[tag" }]`),
				ExpectError: errorText("Error: Invalid target path … The target path at values_from[0].target_path is not valid: it sets no value: a '[' without its ']'. Write the path as for `helm --set`, e.g. `image.tag`, `ingress.hosts[0].host` or `annotations.example\\.com/key`."),
			},
			{
				Config:      config(`values_from = [{ kind = "Deployment", name = "x" }]`),
				ExpectError: errorText(`Attribute values_from[0].kind value must be one of: ["ConfigMap" "Secret"], got: "Deployment"`),
			},
			{
				Config:      config(`post_renderers = [{ kustomize = { patches = [{ patch = jsonencode([{ op = "jump", path = "/spec" }]) }] } }]`),
				ExpectError: errorText(`Error: Invalid patch with data.helmrelease_template.t … The patch at post_renderers[0].kustomize.patches[0].patch is not valid: operation 0: "jump" is not a JSON 6902 operation (add, remove, replace, move, copy, test).`),
			},
			{
				Config:      config(`post_renderers = [{ kustomize = { patches = [{ patch = "data: {a: b}" }] } }]`),
				ExpectError: errorText(`The patch at post_renderers[0].kustomize.patches[0].patch is not valid: a strategic merge patch without a target must name its object with kind and metadata.name.`),
			},
			{
				Config:      config(`post_renderers = [{ kustomize = { patches = [{ patch = "{kind: ConfigMap, apiVersion: v1, metadata: {name: nothing}}" }] } }]`),
				ExpectError: errorText(`Error: Post-renderer failed … kustomize post-renderer: no resource matches strategic merge patch "ConfigMap.v1.[noGrp]/nothing.[noNs]": no matches for Id ConfigMap.v1.[noGrp]/nothing.[noNs]; failed to find unique target for patch ConfigMap.v1.[noGrp]/nothing.[noNs]. Fix the post-renderer:`),
			},
			{
				Config:      config(`values = { extra = "not a map" }`),
				ExpectError: errorText("Error: Chart rendering failed … rendering chart app: app/templates/configmap.yaml:7:29 executing \"app/templates/configmap.yaml\" at <.Values.extra>: range can't iterate over not a map. Fix the values or the chart so that it renders, e.g. with `helm template` locally."),
			},
			{
				Config:      config(`sensitive_values = "password: !!int hunter2"`),
				ExpectError: errorText(`Error: Invalid sensitive values … The sensitive values at sensitive_values are not valid: not valid YAML or JSON. Set sensitive_values to a YAML or JSON mapping, e.g. sensitive_values = yamlencode({ password = var.password }).`),
			},
			{
				Config:      config(`sensitive_values = "just a string"`),
				ExpectError: errorText(`The sensitive values at sensitive_values are not valid: a mapping is needed, not string.`),
			},
			{
				Config:      config(`values = "not an object"`),
				ExpectError: errorText(`The values at values are not valid: values must be an object, e.g. { replicaCount = 2 }, not string.`),
			},
			{
				Config:      `data "helmrelease_template" "t" {` + "\n" + fmt.Sprintf(`name = "web"`+"\n"+`chart = { name = %q, version = ">=2.0.0" }`, chart) + "\n}\n",
				ExpectError: errorText(`Error: No matching chart version … has version 1.2.3, which does not satisfy ">=2.0.0".`),
			},
			{
				Config:      config(`release_name = "a-release-name-that-is-far-too-long-for-helm-to-accept-it"`),
				ExpectError: errorText(`Attribute release_name string length must be between 1 and 53`),
			},
		},
	})
}

// TestTemplate_withoutCluster renders with no cluster configured at all: no
// attributes, no KUBE_* variables, no KUBECONFIG.
func TestTemplate_withoutCluster(t *testing.T) {
	t.Parallel() // no cluster; KUBECONFIG is unset for the package (TestMain)
	chart := testChartDir(t)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: fmt.Sprintf(`
data "helmrelease_template" "t" {
  name   = "web"
  chart  = { name = %q }
  values = { replicaCount = 2 }
}
`, chart),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(tmpl, resourceAt("apps/v1/Deployment/default/web"), objectField(2, "spec", "replicas")),
					statecheck.ExpectKnownValue(tmpl, resourceAt("rbac.authorization.k8s.io/v1/ClusterRole/web-reader"), objectField("web-reader", "metadata", "name")),
				},
			},
			{
				Config: fmt.Sprintf(`
data "helmrelease_template" "t" {
  name        = "web"
  chart       = { name = %q }
  values_from = [{ kind = "ConfigMap", name = "base" }]
}
`, chart),
				ExpectError: errorText(`Error: Kubernetes cluster unavailable with data.helmrelease_template.t … This attribute needs the Kubernetes cluster, which cannot be used: no Kubernetes cluster is configured.`),
			},
		},
	})
}
