package helm

import (
	"errors"
	"fmt"
	"testing"

	releasecommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
)

// TestSettledView: the newest settled revision stands for the release
// while another client's operation is pending, and nothing is written.
func TestSettledView(t *testing.T) {
	rev := func(v int, s releasecommon.Status) *release.Release {
		return &release.Release{Name: "app", Namespace: "ns", Version: v, Info: &release.Info{Status: s}}
	}
	for _, tc := range []struct {
		name     string
		history  []*release.Release
		wantLast int // 0: none
	}{
		{"settled alone", []*release.Release{rev(1, releasecommon.StatusSuperseded), rev(2, releasecommon.StatusDeployed)}, 2},
		{"upgrade pending", []*release.Release{rev(1, releasecommon.StatusDeployed), rev(2, releasecommon.StatusPendingUpgrade)}, 1},
		{"rollback pending after a failure", []*release.Release{rev(1, releasecommon.StatusDeployed), rev(2, releasecommon.StatusFailed), rev(3, releasecommon.StatusPendingRollback)}, 2},
		{"first install pending", []*release.Release{rev(1, releasecommon.StatusPendingInstall)}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := driver.NewMemory()
			for _, r := range tc.history {
				if err := mem.Create(fmt.Sprintf("sh.helm.release.v1.%s.v%d", r.Name, r.Version), r); err != nil {
					t.Fatal(err)
				}
			}
			view := storage.Init(SettledView(mem))
			found, err := view.Last("app")
			last, _ := found.(*Release)
			switch {
			case tc.wantLast == 0 && err == nil:
				t.Fatalf("Last = v%d, want none", last.Version)
			case tc.wantLast != 0 && err != nil:
				t.Fatalf("Last: %v", err)
			case tc.wantLast != 0 && last.Version != tc.wantLast:
				t.Fatalf("Last = v%d %s, want v%d", last.Version, last.Info.Status, tc.wantLast)
			}
			if err := view.Create(rev(9, releasecommon.StatusPendingUpgrade)); !errors.Is(err, ErrSettledView) {
				t.Errorf("Create through the view: %v, want ErrSettledView", err)
			}
			if err := view.Update(tc.history[0]); !errors.Is(err, ErrSettledView) {
				t.Errorf("Update through the view: %v, want ErrSettledView", err)
			}
			if got, _ := storage.Init(mem).History("app"); len(got) != len(tc.history) {
				t.Errorf("the storage holds %d revisions after the view's writes, want %d", len(got), len(tc.history))
			}
		})
	}
}
