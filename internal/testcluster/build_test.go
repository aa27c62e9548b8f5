package testcluster

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/mod/modfile"
)

// TestKubeModulesMatchTheProvider: every module that the provider's go.mod
// and tools/kube's both require is required at one version (after
// replacements), so that the packages the cluster's executable and the tests
// share compile once. A version bumped on one side only fails here, naming
// both versions.
func TestKubeModulesMatchTheProvider(t *testing.T) {
	root, err := findRepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	provider := requiredVersions(t, filepath.Join(root, "go.mod"))
	kube := requiredVersions(t, filepath.Join(root, "tools", "kube", "go.mod"))
	shared := 0
	for path, want := range provider {
		got, ok := kube[path]
		if !ok {
			continue
		}
		shared++
		if got != want {
			t.Errorf("%s: go.mod requires %s, tools/kube/go.mod %s: require one version in both (go get %s@<version> in each)", path, want, got, path)
		}
	}
	if shared == 0 {
		t.Fatal("go.mod and tools/kube/go.mod share no module: is tools/kube/go.mod the cluster's?")
	}
}

// requiredVersions is the version of each module go.mod requires, as its
// replace directives make it.
func requiredVersions(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse(path, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	versions := map[string]string{}
	for _, r := range f.Require {
		versions[r.Mod.Path] = r.Mod.Version
	}
	for _, r := range f.Replace {
		if _, ok := versions[r.Old.Path]; ok && r.New.Version != "" && (r.Old.Version == "" || r.Old.Version == versions[r.Old.Path]) {
			versions[r.Old.Path] = r.New.Version
		}
	}
	return versions
}
