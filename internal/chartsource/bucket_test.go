package chartsource_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo/s3server"
)

// TestBucketResolve resolves charts from an S3 server on loopback
// (versitygw): the bucket's revision as source-controller computes it, a
// change outside the chart and one of the chart, .sourceignore, the
// planned revision, and what is refused.
func TestBucketResolve(t *testing.T) {
	srv := s3server.New(t)
	srv.MakeBucket(t, "charts")
	srv.Put(t, "charts", gitChart("team/app", "0.1.0", "one"))
	ctx := context.Background()
	repos := chartsource.NewRepositories(t.TempDir(), 0)
	source := func() chartsource.Source {
		return chartsource.Source{Name: "team/app", Auth: chartsource.Auth{Username: testrepo.Username, Password: testrepo.Password},
			Bucket: &chartsource.Bucket{Endpoint: srv.Endpoint, BucketName: "charts", Insecure: true, Region: s3server.Region}}
	}
	got, err := repos.Resolve(ctx, source())
	if err != nil {
		t.Fatal(err)
	}
	first := got.SourceRevision
	if got.Version != "0.1.0" || configMapData(t, got) != "one" || !strings.HasPrefix(first, "sha256:") || len(first) != len("sha256:")+64 {
		t.Fatalf("resolved %s (%s) at %s", got.Version, configMapData(t, got), first)
	}

	t.Run("an object outside the chart: same version, new revision", func(t *testing.T) {
		srv.Put(t, "charts", map[string]string{"README.md": "edited\n"})
		got, err := repos.Resolve(ctx, source())
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != "0.1.0" || got.SourceRevision == first {
			t.Errorf("resolved %s at %s, want 0.1.0 at a revision other than %s", got.Version, got.SourceRevision, first)
		}
		src := source()
		src.ReconcileStrategy = chartsource.StrategyRevision
		rev, err := repos.Resolve(ctx, src)
		if err != nil {
			t.Fatal(err)
		}
		if want := "0.1.0+" + strings.TrimPrefix(got.SourceRevision, "sha256:")[:12]; rev.Version != want {
			t.Errorf("Revision strategy: version %s, want %s (HelmChart's: the digest's first 12 digits)", rev.Version, want)
		}
	})

	t.Run(".sourceignore leaves objects out of the revision", func(t *testing.T) {
		before, err := repos.Resolve(ctx, source())
		if err != nil {
			t.Fatal(err)
		}
		srv.Put(t, "charts", map[string]string{".sourceignore": "*.md\n"})
		ignored, err := repos.Resolve(ctx, source())
		if err != nil {
			t.Fatal(err)
		}
		srv.Put(t, "charts", map[string]string{"NOTES.md": "more\n"})
		again, err := repos.Resolve(ctx, source())
		if err != nil {
			t.Fatal(err)
		}
		if ignored.SourceRevision == before.SourceRevision || again.SourceRevision != ignored.SourceRevision {
			t.Errorf("revisions %s, then with .sourceignore %s, then with an ignored object %s: want the last two equal", before.SourceRevision, ignored.SourceRevision, again.SourceRevision)
		}
	})

	planned, err := repos.Resolve(ctx, source())
	if err != nil {
		t.Fatal(err)
	}
	srv.Put(t, "charts", gitChart("team/app", "0.2.0", "two"))
	t.Run("a new chart version", func(t *testing.T) {
		got, err := repos.Resolve(ctx, source())
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != "0.2.0" || configMapData(t, got) != "two" {
			t.Errorf("resolved %s (%s)", got.Version, configMapData(t, got))
		}
	})
	t.Run("the planned revision, cached", func(t *testing.T) {
		src := source()
		src.Bucket.Pinned = planned.SourceRevision
		got, err := repos.Resolve(ctx, src)
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != "0.1.0" || got.SourceRevision != planned.SourceRevision {
			t.Errorf("pinned to %s: resolved %s at %s", planned.SourceRevision, got.Version, got.SourceRevision)
		}
		// Not cached, and gone from the bucket: refused.
		_, err = chartsource.NewRepositories(t.TempDir(), 0).Resolve(ctx, src)
		if !errors.Is(err, chartsource.ErrBucket) || !strings.Contains(err.Error(), "changed since the plan") {
			t.Errorf("a planned revision the bucket no longer has: %v", err)
		}
	})

	for _, tc := range []struct {
		name string
		edit func(*chartsource.Source)
		is   error
	}{
		{"wrong secret key", func(s *chartsource.Source) { s.Auth.Password = "wrong-secret-42" }, chartsource.ErrBucket},
		{"anonymous", func(s *chartsource.Source) { s.Auth = chartsource.Auth{} }, chartsource.ErrBucket},
		{"no such bucket", func(s *chartsource.Source) { s.Bucket.BucketName = "absent" }, chartsource.ErrBucket},
		{"missing path", func(s *chartsource.Source) { s.Name = "team/absent" }, chartsource.ErrChartPath},
		{"path out of the bucket", func(s *chartsource.Source) { s.Name = "../.." }, chartsource.ErrChartPath},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := source()
			tc.edit(&src)
			_, err := chartsource.NewRepositories(t.TempDir(), 0).Resolve(ctx, src)
			t.Log(err)
			if !errors.Is(err, tc.is) {
				t.Fatalf("got %v, want %v", err, tc.is)
			}
			if strings.Contains(err.Error(), "wrong-secret-42") {
				t.Errorf("the error shows the secret key: %v", err)
			}
		})
	}
}
