package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

const doc = `
# Source: chart/templates/a.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
---
apiVersion: v1
kind: Secret
metadata:
  name: s
  namespace: other
data:
  password: aHVudGVyMg==
stringData:
  token: plain-token
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: reader
  namespace: ignored
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: globals.example.com
spec:
  group: example.com
  scope: Cluster
  names: {kind: Global}
---
apiVersion: example.com/v1
kind: Global
metadata:
  name: g
---
apiVersion: example.com/v1
kind: Unknown
metadata:
  name: u
`

func TestParseKeys(t *testing.T) {
	objs, err := Parse(doc, "apps", nil)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range objs {
		keys = append(keys, o.Key)
	}
	want := []string{
		"v1/ConfigMap/apps/cm",
		"v1/Secret/other/s",
		"rbac.authorization.k8s.io/v1/ClusterRole/reader",
		"apiextensions.k8s.io/v1/CustomResourceDefinition/globals.example.com",
		"example.com/v1/Global/g",
		"example.com/v1/Unknown/apps/u",
	}
	if strings.Join(keys, "\n") != strings.Join(want, "\n") {
		t.Errorf("keys:\n%s\nwant:\n%s", strings.Join(keys, "\n"), strings.Join(want, "\n"))
	}
}

func TestParseAsksScopeFirst(t *testing.T) {
	objs, err := Parse("apiVersion: example.com/v1\nkind: Unknown\nmetadata: {name: u}\n", "apps", func(gvk schema.GroupVersionKind) (bool, bool) {
		return false, gvk.Kind == "Unknown"
	})
	if err != nil {
		t.Fatal(err)
	}
	if objs[0].Key != "example.com/v1/Unknown/u" {
		t.Errorf("key %s, want the cluster-scoped key the mapper implies", objs[0].Key)
	}
}

func TestParseRejectsDuplicatesAndJunk(t *testing.T) {
	if _, err := Parse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n", "ns", nil); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate: %v", err)
	}
	if _, err := Parse("just: a map\n", "ns", nil); err == nil || !strings.Contains(err.Error(), "no apiVersion or kind") {
		t.Errorf("junk: %v", err)
	}
}

func TestDisplayMasksSecrets(t *testing.T) {
	objs, err := Parse(doc, "apps", nil)
	if err != nil {
		t.Fatal(err)
	}
	key := []byte("a key of the resource")
	shown, err := Display(objs[1].Object, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"hunter2", "aHVudGVyMg==", "plain-token"} {
		if strings.Contains(shown, secret) {
			t.Errorf("Display shows %q:\n%s", secret, shown)
		}
	}
	for _, want := range []string{Hash(key, []byte("hunter2")), Hash(key, []byte("plain-token"))} {
		if !strings.Contains(shown, want) {
			t.Errorf("Display lacks %q:\n%s", want, shown)
		}
	}
	// Keyed: a guess checked with a plain digest does not match, and
	// another resource's key shows the same value otherwise.
	plain := sha256.Sum256([]byte("hunter2"))
	if strings.Contains(shown, hex.EncodeToString(plain[:])) || Hash(key, []byte("hunter2")) == Hash([]byte("another key"), []byte("hunter2")) {
		t.Errorf("the hash is not keyed:\n%s", shown)
	}
	if Hash(nil, []byte("hunter2")) != MaskedPrefix {
		t.Errorf("without a key: %q", Hash(nil, []byte("hunter2")))
	}
	if strings.Contains(objs[1].Object.Object["data"].(map[string]any)["password"].(string), "sha256") {
		t.Error("Display modified the object it was given")
	}
}

// TestParseCopies: a manifest parsed again gives the same objects, as
// copies: a change to one Parse's objects is not seen by the next, and
// each gets its own default namespace.
func TestParseCopies(t *testing.T) {
	const m = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: copies\ndata:\n  k: v\n"
	first, err := Parse(m, "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	first[0].Object.SetLabels(map[string]string{"changed": "true"})
	second, err := Parse(m, "b", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := second[0].Object.GetLabels(); got != nil {
		t.Errorf("labels %v seen by the next Parse", got)
	}
	second[0].Object.SetLabels(map[string]string{"changed": "true"})
	if third, err := Parse(m, "b", nil); err != nil || third[0].Object.GetLabels() != nil {
		t.Errorf("a change to a copy seen by the next Parse: %v", err)
	}
	if first[0].Key != "v1/ConfigMap/a/copies" || second[0].Key != "v1/ConfigMap/b/copies" {
		t.Errorf("keys %s and %s", first[0].Key, second[0].Key)
	}
}
