package provider

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// TestParseSensitiveValuesHidesContent: errors say what is wrong with the
// document's shape, never what it holds, even where YAML's own error would
// quote it.
func TestParseSensitiveValuesHidesContent(t *testing.T) {
	for _, doc := range []string{"password: !!int hunter2", "password: [hunter2", "hunter2", "- hunter2"} {
		_, err := parseSensitiveValues(doc)
		if err == nil {
			t.Errorf("%q accepted", doc)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: error shows the content: %v", doc, err)
		}
	}
}

// FuzzSensitiveValues: wherever a secret sits in sensitive_values, reading
// it neither panics nor says what it holds: a secret drawn anew for each
// input is planted between the fuzzed text before and after it, and no 8
// characters of it may show in the error.
func FuzzSensitiveValues(f *testing.F) {
	for _, seed := range [][2]string{{"password: !!int ", ""}, {"password: [", ""}, {"", ""}, {"- ", ""}, {"{\"a\": ", "}"}, {"a:\n  b: ", ""}, {"a: *", ""}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, before, after string) {
		b := make([]byte, 12)
		if _, err := rand.Read(b); err != nil {
			t.Fatal(err)
		}
		secret := "s" + hex.EncodeToString(b)
		_, err := parseSensitiveValues(before + secret + after)
		if err == nil {
			return
		}
		for i := 0; i+8 <= len(secret); i++ {
			if strings.Contains(err.Error(), secret[i:i+8]) {
				t.Fatalf("the error shows %q of the secret %q: %v", secret[i:i+8], secret, err)
			}
		}
	})
}

// TestComposeKeepsTheInput: composing sets values_from's target paths in
// the composed values only. The values as configured stay as they were:
// the Flux engine writes them into the HelmRelease's spec.values, where a
// Secret's value set inside them would be shown to every reader.
func TestComposeKeepsTheInput(t *testing.T) {
	cs := testClient(t)
	ctx := t.Context()
	ns := testNamespace(t)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db"}, StringData: map[string]string{"password": "hunter2"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	inline := types.DynamicValue(types.ObjectValueMust(map[string]attr.Type{"db": types.ObjectType{AttrTypes: map[string]attr.Type{"user": types.StringType}}},
		map[string]attr.Value{"db": types.ObjectValueMust(map[string]attr.Type{"user": types.StringType}, map[string]attr.Value{"user": types.StringValue("app")})}))
	var diags diag.Diagnostics
	in := decodeValues(ns, inline, []sensitiveInput{{path.Root("sensitive_values"), types.StringValue("auth:\n  mode: md5\n")}},
		[]valuesFromModel{{Kind: types.StringValue("Secret"), Name: types.StringValue("db"), ValuesKey: types.StringValue("password"), TargetPath: types.StringValue("db.password")},
			{Kind: types.StringValue("Secret"), Name: types.StringValue("db"), ValuesKey: types.StringValue("password"), TargetPath: types.StringValue("auth.password")}}, &diags)
	c := newCluster("", func() (*rest.Config, error) { return clientcmd.BuildConfigFromFlags("", testKubeconfig) })
	composed := composeValues(ctx, c, in, newRedactor(nil, nil), &diags)
	if diags.HasError() {
		t.Fatal(diags)
	}
	want := map[string]any{"db": map[string]any{"user": "app", "password": "hunter2"}, "auth": map[string]any{"mode": "md5", "password": "hunter2"}}
	if !reflect.DeepEqual(composed, want) {
		t.Errorf("composed %v, want %v", composed, want)
	}
	if want := map[string]any{"db": map[string]any{"user": "app"}}; !reflect.DeepEqual(in.Values, want) {
		t.Errorf("values as configured became %v, want %v", in.Values, want)
	}
	if want := map[string]any{"auth": map[string]any{"mode": "md5"}}; !reflect.DeepEqual(in.SensitiveValues, want) {
		t.Errorf("sensitive values as configured became %v, want %v", in.SensitiveValues, want)
	}
}
