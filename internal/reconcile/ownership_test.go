package reconcile

import (
	"errors"
	"strings"
	"testing"

	releasecommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
)

// TestCheckCreate: what a create may act on, by the origin labels of the
// release's objects and its status.
func TestCheckCreate(t *testing.T) {
	labelled := func(group, ns, name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  labels:\n    " + group + "/name: " + name + "\n    " + group + "/namespace: " + ns + "\n"
	}
	mine := labelled("helmrelease.terraform.io", "apps", "web")
	rel := func(manifest string, s releasecommon.Status) *release.Release {
		return &release.Release{Name: "web", Namespace: "apps", Version: 3, Manifest: manifest, Info: &release.Info{Status: s}}
	}
	spec := &Spec{Name: "web", Namespace: "apps"}
	adopting := &Spec{Name: "web", Namespace: "apps", Adopt: true}
	for _, tc := range []struct {
		name string
		rel  *release.Release
		spec *Spec
		// want: "" allowed; "unrecorded", "other", "foreign" refused so.
		want string
	}{
		{"no release", nil, spec, ""},
		{"uninstalled", rel(mine, releasecommon.StatusUninstalled), spec, ""},
		{"this resource's, deployed: another state's", rel(mine, releasecommon.StatusDeployed), spec, "unrecorded"},
		{"this resource's, failed: another state's", rel(mine, releasecommon.StatusFailed), spec, "unrecorded"},
		{"this resource's interrupted install", rel(mine, releasecommon.StatusPendingInstall), spec, ""},
		{"this resource's, adopted by import", rel(mine, releasecommon.StatusDeployed), adopting, ""},
		{"another helmrelease_release's", rel(labelled("helmrelease.terraform.io", "apps", "other"), releasecommon.StatusDeployed), spec, "other"},
		{"another's, even when adopting", rel(labelled("helmrelease.terraform.io", "apps", "other"), releasecommon.StatusDeployed), adopting, "other"},
		{"helm-controller's", rel(labelled("helm.toolkit.fluxcd.io", "apps", "web"), releasecommon.StatusDeployed), spec, "foreign"},
		{"the helm CLI's", rel("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n", releasecommon.StatusDeployed), spec, "foreign"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckCreate(tc.rel, tc.spec)
			var owned *OwnershipError
			got := ""
			switch {
			case err == nil:
			case !errors.As(err, &owned) || !errors.Is(err, ErrNotOwned):
				t.Fatalf("CheckCreate: %v, want an OwnershipError", err)
			case owned.Unrecorded:
				got = "unrecorded"
			case len(owned.Owners) > 0:
				got = "other"
			default:
				got = "foreign"
			}
			if got != tc.want {
				t.Errorf("CheckCreate = %q (%v), want %q", got, err, tc.want)
			}
			if got == "unrecorded" && !strings.Contains(err.Error(), "helmrelease_release apps/web in another Terraform state") {
				t.Errorf("the refusal does not name the owner: %v", err)
			}
		})
	}
}

// TestLockHolder: who runs a pending operation, from its objects' labels.
func TestLockHolder(t *testing.T) {
	for manifest, want := range map[string]string{
		"metadata:\n  labels:\n    helmrelease.terraform.io/name: web\n    helmrelease.terraform.io/namespace: apps\n": "helmrelease_release apps/web",
		"metadata:\n  labels:\n    helm.toolkit.fluxcd.io/name: web\n    helm.toolkit.fluxcd.io/namespace: apps\n":     "Flux's helm-controller, for HelmRelease apps/web",
		"metadata:\n  name: web\n": "another Helm client (the helm CLI, or a tool built on Helm)",
	} {
		if got := LockHolder(&release.Release{Manifest: manifest}); got != want {
			t.Errorf("LockHolder(%q) = %q, want %q", manifest, got, want)
		}
	}
}
