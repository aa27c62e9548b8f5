package flux

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/reconcile"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// TestSharedIndexFetchedWhenNeeded: releases of a version whose shared
// HelmChart is built do not make source-controller download the
// repository's index again; an upgrade to a version published since does,
// and is deployed.
func TestSharedIndexFetchedWhenNeeded(t *testing.T) {
	withNewestFlux(t, func(t *testing.T) {
		cs := kubernetes.NewForConfigOrDie(testRESTConfig)
		e, err := New(testRESTConfig)
		if err != nil {
			t.Fatal(err)
		}
		repo := testrepo.NewHTTP(t)
		repo.Add(t, configMapChart("1.0.0"), nil)
		src := chartsource.Source{Name: "settings", Repository: repo.URL, Auth: chartsource.Auth{Username: testrepo.Username, Password: testrepo.Password}}
		ns := newNamespace(t, cs)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		noRelease := func() (*helm.Release, error) { return nil, nil }
		statuses := map[string]*reconcile.Status{}
		run := func(name, version string) {
			t.Helper()
			st := statuses[name]
			create := st == nil
			if create {
				st = &reconcile.Status{}
			}
			r := &Release{Spec: &reconcile.Spec{Name: name, Namespace: ns}, Chart: Chart{Source: src, Version: version}}
			res, err := e.Run(ctx, r, RunOptions{Create: create, LastRelease: noRelease, Status: st, Want: Want{ChartVersion: version}})
			if err != nil {
				t.Fatalf("%s at %s: %v", name, version, err)
			}
			if latest := res.Status.Latest(); latest == nil || latest.ChartVersion != version || latest.Status != "deployed" {
				t.Fatalf("%s at %s: latest revision %+v, want %s deployed", name, version, latest, version)
			}
			statuses[name] = res.Status
		}
		run("first", "1.0.0")
		before := repo.IndexDownloads.Load()
		run("second", "1.0.0")
		run("first", "1.0.0") // a new request token, the same version
		if got := repo.IndexDownloads.Load() - before; got != 0 {
			t.Errorf("releases of the built version 1.0.0 made source-controller download the index %d times, want 0", got)
		}
		repo.Add(t, configMapChart("1.1.0"), nil)
		before = repo.IndexDownloads.Load()
		run("first", "1.1.0")
		if got := repo.IndexDownloads.Load() - before; got < 1 {
			t.Errorf("an upgrade to 1.1.0, published since the last fetch, downloaded the index %d times, want at least once", got)
		}
	})
}
