package chartsource_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	chart "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/chartsource"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/testrepo"
)

// gitChart is a chart directory's files under prefix, of version, whose
// ConfigMap carries data.
func gitChart(prefix, version, data string) map[string]string {
	return map[string]string{
		prefix + "/Chart.yaml":          "apiVersion: v2\nname: app\nversion: " + version + "\n",
		prefix + "/templates/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  value: " + data + "\n",
		prefix + "/values.yaml":         "{}\n",
		prefix + "/charts/.gitkeep":     "keep",
		"README.md":                     "a repository with a chart\n",
		prefix + "/templates/NOTES.txt": "notes\n",
	}
}

func configMapData(t *testing.T, r *chartsource.Resolved) string {
	t.Helper()
	for _, f := range r.Chart.Templates {
		if f.Name == "templates/cm.yaml" {
			_, v, _ := strings.Cut(string(f.Data), "value: ")
			return strings.TrimSpace(v)
		}
	}
	t.Fatal("no templates/cm.yaml")
	return ""
}

// TestGitResolve resolves charts from a Git server on loopback, over HTTP
// with basic auth and over SSH with a key: the reference's commit, a new
// commit that bumps the chart or leaves it, the planned commit after the
// branch moved, tags and semver ranges, and what is refused.
func TestGitResolve(t *testing.T) {
	srv := testrepo.NewGit(t)
	ctx := context.Background()
	first := srv.Commit(t, "charts", "main", gitChart("charts/app", "0.1.0", "one"))

	for _, transport := range []string{"http", "ssh"} {
		t.Run(transport, func(t *testing.T) {
			repos := chartsource.NewRepositories(t.TempDir(), 0)
			source := func(ref chartsource.GitRef) chartsource.Source {
				g := &chartsource.Git{URL: srv.HTTPURL("charts"), Ref: ref}
				auth := chartsource.Auth{Username: testrepo.Username, Password: testrepo.Password}
				if transport == "ssh" {
					g.URL, g.Identity, g.KnownHosts = srv.SSHURL("charts"), srv.Identity, srv.KnownHosts
					auth = chartsource.Auth{}
				}
				return chartsource.Source{Name: "charts/app", Git: g, Auth: auth}
			}
			got, err := repos.Resolve(ctx, source(chartsource.GitRef{Branch: "main"}))
			if err != nil {
				t.Fatal(err)
			}
			if got.Version != "0.1.0" || got.SourceRevision != "main@sha1:"+first || configMapData(t, got) != "one" {
				t.Fatalf("resolved %s from %s with %q, want 0.1.0 from main@sha1:%s with one", got.Version, got.SourceRevision, configMapData(t, got), first)
			}
		})
	}

	repos := chartsource.NewRepositories(t.TempDir(), 0)
	auth := chartsource.Auth{Username: testrepo.Username, Password: testrepo.Password}
	main := func() chartsource.Source {
		return chartsource.Source{Name: "charts/app", Git: &chartsource.Git{URL: srv.HTTPURL("charts"), Ref: chartsource.GitRef{Branch: "main"}}, Auth: auth}
	}
	if _, err := repos.Resolve(ctx, main()); err != nil {
		t.Fatal(err)
	}

	t.Run("a reference that has not moved is not fetched again", func(t *testing.T) {
		before := srv.Fetches()
		got, err := repos.Resolve(ctx, main())
		if err != nil {
			t.Fatal(err)
		}
		if n := srv.Fetches() - before; n != 0 || got.SourceRevision != "main@sha1:"+first {
			t.Errorf("%d fetches, resolved %s; want none, main@sha1:%s", n, got.SourceRevision, first)
		}
	})

	readme := srv.Commit(t, "charts", "main", map[string]string{"README.md": "edited\n"})
	t.Run("files source-controller leaves out of its artifact", func(t *testing.T) {
		srv.Commit(t, "artifact", "main", map[string]string{
			"charts/app/Chart.yaml":           "apiVersion: v2\nname: app\nversion: 0.1.0\n",
			"charts/app/templates/cm.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  value: {{ .Files.Get \"files/kept.txt\" | quote }}\n",
			"charts/app/files/kept.txt":       "kept",
			"charts/app/files/logo.png":       "an image, a default exclusion",
			"charts/app/files/.gitlab-ci.yml": "a CI file, a default exclusion",
		})
		src := main()
		src.Git.URL = srv.HTTPURL("artifact")
		got, err := repos.Resolve(ctx, src)
		if err != nil {
			t.Fatal(err)
		}
		var files []string
		for _, f := range got.Chart.Files {
			files = append(files, f.Name)
		}
		if strings.Join(files, ",") != "files/kept.txt" {
			t.Errorf("chart files %v, want files/kept.txt alone (as source-controller archives the commit)", files)
		}
		srv.Commit(t, "artifact", "main", map[string]string{".sourceignore": "kept.txt\n"})
		got, err = repos.Resolve(ctx, src)
		if err != nil {
			t.Fatal(err)
		}
		files = files[:0]
		for _, f := range got.Chart.Files {
			files = append(files, f.Name)
		}
		if strings.Join(files, ",") != "files/.gitlab-ci.yml,files/logo.png" {
			t.Errorf("with a .sourceignore, chart files %v, want its exclusions in place of the default ones", files)
		}
	})

	t.Run("a commit outside the chart: same version, new revision", func(t *testing.T) {
		got, err := repos.Resolve(ctx, main())
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != "0.1.0" || got.SourceRevision != "main@sha1:"+readme {
			t.Errorf("resolved %s from %s, want 0.1.0 from main@sha1:%s", got.Version, got.SourceRevision, readme)
		}
		src := main()
		src.ReconcileStrategy = chartsource.StrategyRevision
		rev, err := repos.Resolve(ctx, src)
		if err != nil {
			t.Fatal(err)
		}
		if want := "0.1.0+" + readme[:12]; rev.Version != want {
			t.Errorf("Revision strategy: version %s, want %s (HelmChart's: the commit's first 12 digits)", rev.Version, want)
		}
	})

	bumped := srv.Commit(t, "charts", "main", gitChart("charts/app", "0.2.0", "two"))
	t.Run("a commit that bumps the chart", func(t *testing.T) {
		got, err := repos.Resolve(ctx, main())
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != "0.2.0" || configMapData(t, got) != "two" || got.SourceRevision != "main@sha1:"+bumped {
			t.Errorf("resolved %s (%s) from %s", got.Version, configMapData(t, got), got.SourceRevision)
		}
	})

	t.Run("the planned commit after the branch moved", func(t *testing.T) {
		src := main()
		src.Git.Pinned = "main@sha1:" + first
		got, err := chartsource.NewRepositories(t.TempDir(), 0).Resolve(ctx, src)
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != "0.1.0" || configMapData(t, got) != "one" || got.SourceRevision != "main@sha1:"+first {
			t.Errorf("pinned to %s: resolved %s (%s) from %s", first, got.Version, configMapData(t, got), got.SourceRevision)
		}
	})

	t.Run("the deployed commit where the configuration names another", func(t *testing.T) {
		// A plan of no Helm action keeps the commit deployed.
		src := main()
		src.Git.Ref = chartsource.GitRef{Commit: bumped}
		src.Git.Pinned = "sha1:" + first
		got, err := chartsource.NewRepositories(t.TempDir(), 0).Resolve(ctx, src)
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != "0.1.0" || configMapData(t, got) != "one" || got.SourceRevision != "sha1:"+first {
			t.Errorf("pinned to %s, configured %s: resolved %s (%s) from %s", first, bumped, got.Version, configMapData(t, got), got.SourceRevision)
		}
	})

	srv.Tag(t, "charts", "v0.1.0", first)
	srv.Tag(t, "charts", "v0.2.0", bumped)
	for _, tc := range []struct {
		ref     chartsource.GitRef
		version string
		rev     string
	}{
		{chartsource.GitRef{Tag: "v0.1.0"}, "0.1.0", "v0.1.0@sha1:" + first},
		{chartsource.GitRef{SemVer: "<0.2.0"}, "0.1.0", "v0.1.0@sha1:" + first},
		{chartsource.GitRef{SemVer: ">=0.1.0"}, "0.2.0", "v0.2.0@sha1:" + bumped},
		{chartsource.GitRef{Commit: first}, "0.1.0", "sha1:" + first},
		{chartsource.GitRef{Branch: "main", Commit: readme}, "0.1.0", "main@sha1:" + readme},
		{chartsource.GitRef{Name: "refs/tags/v0.2.0"}, "0.2.0", "v0.2.0@sha1:" + bumped},
	} {
		t.Run(tc.ref.String(), func(t *testing.T) {
			src := main()
			src.Git.Ref = tc.ref
			got, err := repos.Resolve(ctx, src)
			if err != nil {
				t.Fatal(err)
			}
			if got.Version != tc.version || got.SourceRevision != tc.rev {
				t.Errorf("resolved %s from %s, want %s from %s", got.Version, got.SourceRevision, tc.version, tc.rev)
			}
		})
	}

	srv.Commit(t, "charts", "main", map[string]string{
		"charts/escape/Chart.yaml": "apiVersion: v2\nname: escape\nversion: 0.1.0\ndependencies:\n- name: outside\n  version: 0.1.0\n  repository: file://../../../../../../../../tmp/outside\n",
	})
	refused := []struct {
		name string
		edit func(*chartsource.Source)
		is   error
		not  string
	}{
		{"wrong password", func(s *chartsource.Source) { s.Auth.Password = "wrong-password-42" }, chartsource.ErrGit, "wrong-password-42"},
		{"no credentials", func(s *chartsource.Source) { s.Auth = chartsource.Auth{} }, chartsource.ErrGit, ""},
		{"unknown branch", func(s *chartsource.Source) { s.Git.Ref.Branch = "nope" }, chartsource.ErrGit, ""},
		{"missing path", func(s *chartsource.Source) { s.Name = "charts/absent" }, chartsource.ErrChartPath, ""},
		{"path out of the repository", func(s *chartsource.Source) { s.Name = "../../.." }, chartsource.ErrChartPath, ""},
		{"not a chart", func(s *chartsource.Source) { s.Name = "charts/app/templates" }, chartsource.ErrChartPath, ""},
		{"a file:// dependency out of the repository", func(s *chartsource.Source) { s.Name = "charts/escape" }, chartsource.ErrDependency, ""},
		{"unknown key", func(s *chartsource.Source) {
			s.Auth = chartsource.Auth{}
			s.Git.URL, s.Git.Identity, s.Git.KnownHosts = srv.SSHURL("charts"), testrepo.NewSSHKey(t, false), srv.KnownHosts
		}, chartsource.ErrGit, ""},
		{"another host key", func(s *chartsource.Source) {
			s.Auth = chartsource.Auth{}
			other := testrepo.NewGit(t)
			// The other server's host key, for this server's address.
			s.Git.URL, s.Git.Identity = srv.SSHURL("charts"), srv.Identity
			s.Git.KnownHosts = strings.Fields(srv.KnownHosts)[0] + " " + strings.Join(strings.Fields(other.KnownHosts)[1:], " ")
		}, chartsource.ErrGit, ""},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			src := main()
			tc.edit(&src)
			_, err := chartsource.NewRepositories(t.TempDir(), 0).Resolve(ctx, src)
			t.Log(err)
			if !errors.Is(err, tc.is) {
				t.Fatalf("got %v, want %v", err, tc.is)
			}
			if tc.not != "" && strings.Contains(err.Error(), tc.not) {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}

// TestGitPin: a branch resolved, then pinned, resolves to the same commit
// after it moved, in a new process on an empty cache (the second plan of a
// saved plan's apply on another machine); without the pin, to the new one.
// A pin of a commit the branch no longer has fails.
func TestGitPin(t *testing.T) {
	srv := testrepo.NewGit(t)
	ctx := context.Background()
	first := srv.Commit(t, "charts", "main", gitChart("charts/app", "0.1.0", "one"))
	src := chartsource.Source{Name: "charts/app", Auth: chartsource.Auth{Username: testrepo.Username, Password: testrepo.Password},
		Git: &chartsource.Git{URL: srv.HTTPURL("charts"), Ref: chartsource.GitRef{Branch: "main"}}}
	resolve := func(pin *chartsource.Pin) (*chartsource.Resolved, error) {
		t.Helper()
		pinned := src
		pinned.Pin = pin
		return chartsource.NewRepositories(t.TempDir(), 0).Resolve(ctx, pinned)
	}
	planned, err := resolve(nil)
	if err != nil || planned.SourceRevision != "main@sha1:"+first {
		t.Fatalf("resolved %v (%v), want main@sha1:%s", planned, err, first)
	}
	moved := srv.Commit(t, "charts", "main", gitChart("charts/app", "0.2.0", "two"))
	if got, err := resolve(chartsource.PinOf(planned)); err != nil || got.SourceRevision != planned.SourceRevision || got.Version != "0.1.0" {
		t.Errorf("pinned after the branch moved: %v (%v), want %s at 0.1.0", got, err, planned.SourceRevision)
	}
	if got, err := resolve(nil); err != nil || got.SourceRevision != "main@sha1:"+moved {
		t.Errorf("unpinned after the branch moved: %v (%v), want main@sha1:%s", got, err, moved)
	}
	gone := chartsource.PinOf(planned)
	gone.SourceRevision = "main@sha1:" + strings.Repeat("0", 40)
	if _, err := resolve(gone); err == nil {
		t.Error("a pin of a commit the branch never had resolved")
	}
}

// TestGitDependencyUpdate: a chart from Git whose charts/ holds an older
// dependency than Chart.yaml asks for renders with the copy committed,
// and with DependencyUpdate with the newest version the constraint
// allows, fetched with the login DependencyAuth gives.
func TestGitDependencyUpdate(t *testing.T) {
	repo := testrepo.NewHTTP(t)
	for _, v := range []string{"1.0.0", "1.1.0"} {
		repo.Add(t, &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "sub", Version: v}}, nil)
	}
	srv := testrepo.NewGit(t)
	files := gitChart("charts/app", "0.1.0", "one")
	files["charts/app/Chart.yaml"] += "dependencies:\n- name: sub\n  version: ^1.0.0\n  repository: " + repo.URL + "\n"
	files["charts/app/charts/sub/Chart.yaml"] = "apiVersion: v2\nname: sub\nversion: 1.0.0\n"
	srv.Commit(t, "charts", "main", files)
	src := chartsource.Source{Name: "charts/app", Git: &chartsource.Git{URL: srv.HTTPURL("charts"), Ref: chartsource.GitRef{Branch: "main"}},
		Auth: chartsource.Auth{Username: testrepo.Username, Password: testrepo.Password}}
	repos := chartsource.NewRepositories(t.TempDir(), 0)
	for _, tc := range []struct {
		update bool
		want   string
	}{{false, "1.0.0"}, {true, "1.1.0"}} {
		src.DependencyUpdate = tc.update
		src.DependencyAuth = func(string) chartsource.Auth {
			return chartsource.Auth{Username: testrepo.Username, Password: testrepo.Password}
		}
		got, err := repos.Resolve(context.Background(), src)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Dependencies) != 1 || got.Dependencies[0] != (chartsource.Dependency{Name: "sub", Version: tc.want}) {
			t.Errorf("dependency update %v: dependencies %v, want sub %s", tc.update, got.Dependencies, tc.want)
		}
	}
}

// droppingProxy forwards connections on loopback to target, closing the
// first drop of them at once; it counts the connections it accepted.
type droppingProxy struct {
	addr     string
	accepted atomic.Int64
}

func newDroppingProxy(t *testing.T, target string, drop int64) *droppingProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	p := &droppingProxy{addr: l.Addr().String()}
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			if p.accepted.Add(1) <= drop {
				_ = conn.Close()
				continue
			}
			go func() {
				defer conn.Close()
				up, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer up.Close()
				go func() { _, _ = io.Copy(up, conn); _ = up.(*net.TCPConn).CloseWrite() }()
				_, _ = io.Copy(conn, up)
			}()
		}
	}()
	return p
}

// TestGitCloneRetriesDroppedConnections: a clone over SSH whose connection
// the server side drops (as when it closes its channel before the client
// closed its input) is tried again, at most three times; a refused key is
// tried once.
func TestGitCloneRetriesDroppedConnections(t *testing.T) {
	srv := testrepo.NewGit(t)
	srv.Commit(t, "charts", "main", gitChart("charts/app", "0.1.0", "one"))
	sshAddr := strings.TrimPrefix(strings.TrimSuffix(srv.SSHURL("charts"), "/charts.git"), "ssh://git@")
	_, port, _ := strings.Cut(sshAddr, ":")
	source := func(p *droppingProxy, identity string) chartsource.Source {
		_, proxyPort, _ := strings.Cut(p.addr, ":")
		return chartsource.Source{Name: "charts/app", Git: &chartsource.Git{
			URL: "ssh://git@" + p.addr + "/charts.git", Ref: chartsource.GitRef{Branch: "main"}, Identity: identity,
			KnownHosts: strings.Replace(srv.KnownHosts, "]:"+port+" ", "]:"+proxyPort+" ", 1),
		}}
	}
	for _, tc := range []struct {
		name     string
		drop     int64
		identity string
		wantErr  bool
		accepted int64
	}{
		{name: "two dropped connections", drop: 2, identity: srv.Identity, accepted: 3},
		{name: "every connection dropped", drop: 100, identity: srv.Identity, wantErr: true, accepted: 3},
		{name: "a refused key", identity: testrepo.NewSSHKey(t, false), wantErr: true, accepted: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newDroppingProxy(t, sshAddr, tc.drop)
			got, err := chartsource.NewRepositories(t.TempDir(), 0).Resolve(context.Background(), source(p, tc.identity))
			if tc.wantErr != (err != nil) {
				t.Fatalf("resolve: %v, want an error: %v", err, tc.wantErr)
			}
			if err == nil && got.Version != "0.1.0" {
				t.Errorf("resolved %s, want 0.1.0", got.Version)
			}
			if err != nil && !errors.Is(err, chartsource.ErrGit) {
				t.Errorf("error %v is not ErrGit", err)
			}
			if n := p.accepted.Load(); n != tc.accepted {
				t.Errorf("%d connections, want %d (err: %v)", n, tc.accepted, err)
			}
		})
	}
}
