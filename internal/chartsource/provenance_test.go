package chartsource

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/registry"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// signProvenance returns the provenance file of the archive at path, as
// `helm package --sign` writes it.
func signProvenance(t *testing.T, s *testrepo.Signer, path string) []byte {
	t.Helper()
	archive, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return s.Sign(t, archive, filepath.Base(path))
}

func packageChart(t *testing.T, name, version string) string {
	t.Helper()
	tgz, err := chartutil.Save(&chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: name, Version: version}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return tgz
}

func TestVerifyLocal(t *testing.T) {
	ctx := context.Background()
	repos := NewRepositories(t.TempDir(), 0)
	trusted, other := testrepo.NewSigner(t, "trusted"), testrepo.NewSigner(t, "other")
	tgz := packageChart(t, "app", "1.0.0")
	if err := os.WriteFile(tgz+".prov", signProvenance(t, trusted, tgz), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := repos.Resolve(ctx, Source{Name: tgz, Keyring: trusted.Keyring}); err != nil {
		t.Fatalf("signed chart: %v", err)
	}
	if _, err := repos.Resolve(ctx, Source{Name: tgz, Keyring: other.Keyring}); !errors.Is(err, ErrProvenance) {
		t.Errorf("signed by a key not in the keyring: %v", err)
	}

	// An archive changed after signing, next to the original's provenance.
	tampered := filepath.Join(t.TempDir(), filepath.Base(tgz))
	if err := os.WriteFile(tampered, append(mustRead(t, tgz), 0), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tampered+".prov", mustRead(t, tgz+".prov"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := repos.Resolve(ctx, Source{Name: tampered, Keyring: trusted.Keyring}); !errors.Is(err, ErrProvenance) || !strings.Contains(err.Error(), "sha256 sum does not match") {
		t.Errorf("archive changed after signing: %v", err)
	}

	unsigned := packageChart(t, "app", "1.0.0")
	if _, err := repos.Resolve(ctx, Source{Name: unsigned, Keyring: trusted.Keyring}); !errors.Is(err, ErrProvenance) || !strings.Contains(err.Error(), "no provenance file") {
		t.Errorf("unsigned chart: %v", err)
	}
	if _, err := repos.Resolve(ctx, Source{Name: unsigned}); err != nil {
		t.Errorf("unsigned chart without verify: %v", err)
	}
	dir := writeChart(t, t.TempDir(), "app", "1.0.0", nil, nil)
	if _, err := repos.Resolve(ctx, Source{Name: dir, Keyring: trusted.Keyring}); !errors.Is(err, ErrProvenance) || !strings.Contains(err.Error(), "package and sign it") {
		t.Errorf("chart directory: %v", err)
	}
	if _, err := repos.Resolve(ctx, Source{Name: tgz, Keyring: filepath.Join(t.TempDir(), "absent.gpg")}); !errors.Is(err, ErrProvenance) || !strings.Contains(err.Error(), "reading keyring") {
		t.Errorf("missing keyring: %v", err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVerifyRepository(t *testing.T) {
	ctx := context.Background()
	s := newRepoServer(t, false, relative)
	trusted := testrepo.NewSigner(t, "trusted")
	source := Source{Name: "web", Repository: s.URL, Keyring: trusted.Keyring}
	if _, err := NewRepositories(t.TempDir(), 0).Resolve(ctx, source); !errors.Is(err, ErrProvenance) || !strings.Contains(err.Error(), "web-1.2.3.tgz has no provenance file") {
		t.Errorf("no .prov on the server: %v", err)
	}
	signed := filepath.Join(t.TempDir(), "web-1.2.3.tgz")
	if err := os.WriteFile(signed, s.archive, 0o600); err != nil {
		t.Fatal(err)
	}
	s.prov.Store(signProvenance(t, trusted, signed))
	if _, err := NewRepositories(t.TempDir(), 0).Resolve(ctx, source); err != nil {
		t.Errorf("signed chart: %v", err)
	}
	source.Keyring = testrepo.NewSigner(t, "other").Keyring
	if _, err := NewRepositories(t.TempDir(), 0).Resolve(ctx, source); !errors.Is(err, ErrProvenance) {
		t.Errorf("other keyring: %v", err)
	}
}

func TestVerifyOCI(t *testing.T) {
	ctx := context.Background()
	reg := newOCIRegistry(t)
	trusted := testrepo.NewSigner(t, "trusted")
	repos := NewRepositories(t.TempDir(), 0)
	client, err := repos.registryClient(reg.auth)
	if err != nil {
		t.Fatal(err)
	}
	push := func(version string, prov bool) {
		tgz := packageChart(t, "signed", version)
		var opts []registry.PushOption
		if prov {
			opts = append(opts, registry.PushOptProvData(signProvenance(t, trusted, tgz)))
		}
		ref := strings.TrimPrefix(reg.url, "oci://") + "/signed:" + version
		if _, err := client.Push(mustRead(t, tgz), ref, opts...); err != nil {
			t.Fatal(err)
		}
	}
	push("1.0.0", true)
	push("2.0.0", false)
	// Pulled once without verification: the cached archive has no
	// provenance, so verification pulls again.
	if _, err := repos.Resolve(ctx, Source{Name: "signed", Repository: reg.url, Version: "1.0.0", Auth: reg.auth}); err != nil {
		t.Fatal(err)
	}
	for range 2 { // from the registry, then from the cache
		if _, err := repos.Resolve(ctx, Source{Name: "signed", Repository: reg.url, Version: "1.0.0", Auth: reg.auth, Keyring: trusted.Keyring}); err != nil {
			t.Errorf("signed chart: %v", err)
		}
	}
	if _, err := repos.Resolve(ctx, Source{Name: "signed", Repository: reg.url, Version: "2.0.0", Auth: reg.auth, Keyring: trusted.Keyring}); !errors.Is(err, ErrProvenance) || !strings.Contains(err.Error(), "no provenance file") {
		t.Errorf("unsigned chart: %v", err)
	}
	if _, err := repos.Resolve(ctx, Source{Name: "signed", Repository: reg.url, Version: "1.0.0", Auth: reg.auth, Keyring: testrepo.NewSigner(t, "other").Keyring}); !errors.Is(err, ErrProvenance) {
		t.Errorf("other keyring: %v", err)
	}
}
