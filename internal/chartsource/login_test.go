package chartsource

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// tokenCommand is an ExecLogin printing the content of a file, counting
// its runs in another, as a cloud CLI prints its current token.
type tokenCommand struct {
	login       *ExecLogin
	token, runs string
}

func newTokenCommand(t *testing.T, token string) *tokenCommand {
	t.Helper()
	dir := t.TempDir()
	c := &tokenCommand{token: filepath.Join(dir, "token"), runs: filepath.Join(dir, "runs")}
	c.set(t, token)
	c.login = &ExecLogin{Command: "sh", Args: []string{"-c", `echo run >> "$RUNS"; cat "$TOKEN"`},
		Env: map[string]string{"TOKEN": c.token, "RUNS": c.runs}}
	return c
}

func (c *tokenCommand) set(t *testing.T, token string) {
	t.Helper()
	if err := os.WriteFile(c.token, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (c *tokenCommand) count(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(c.runs)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "run\n")
}

// TestExecLoginRotates: a registry's token is fetched by the command when
// first needed, kept while the registry takes it, and fetched again once
// the registry refuses it (rotated), within one process.
func TestExecLoginRotates(t *testing.T) {
	reg := newOCIRegistry(t)
	reg.push(t, "1.0.0", "only")
	cmd := newTokenCommand(t, "s3cret")
	if n := cmd.count(t); n != 0 {
		t.Fatalf("the command ran %d times before any resolution", n)
	}
	repos := NewRepositories(t.TempDir(), 0)
	auth := Auth{Username: "bot", CAFile: reg.auth.CAFile, Login: cmd.login}
	resolve := func() error {
		_, err := repos.OCI(context.Background(), Source{Repository: reg.url, Name: "web", Auth: auth})
		return err
	}
	for range 2 {
		if err := resolve(); err != nil {
			t.Fatal(err)
		}
	}
	if n := cmd.count(t); n != 1 {
		t.Errorf("the command ran %d times for two resolutions with a valid token, want 1", n)
	}
	reg.rotate(t, "rotated-token-2")
	cmd.set(t, "rotated-token-2")
	if err := resolve(); err != nil {
		t.Fatalf("resolution after the token rotated: %v", err)
	}
	if n := cmd.count(t); n != 2 {
		t.Errorf("the command ran %d times in all, want 2 (once more after the refusal)", n)
	}

	// A token the registry refuses even when new fails with the registry's
	// refusal, after one more run; the token is in no error.
	reg.rotate(t, "rotated-token-3")
	cmd.set(t, "stale-token-XYZ")
	err := resolve()
	if err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "stale-token-XYZ") {
		t.Errorf("resolution with a refused token: %v, want the registry's 401 without the token", err)
	}
	if n := cmd.count(t); n != 3 {
		t.Errorf("the command ran %d times in all, want 3 (one renewal per resolution)", n)
	}
}

// TestExecLoginHTTPRepository: a Helm repository's password from a
// command, renewed when the repository refuses it; the index is cached by
// the login, not by the token.
func TestExecLoginHTTPRepository(t *testing.T) {
	s := newRepoServer(t, false, relative)
	s.auth.Store("bot:token-1")
	cmd := newTokenCommand(t, "token-1")
	cache := t.TempDir()
	auth := Auth{Username: "bot", Login: cmd.login}
	if _, err := NewRepositories(cache, 0).Resolve(context.Background(), Source{Repository: s.URL, Name: "web", Auth: auth}); err != nil {
		t.Fatal(err)
	}
	s.auth.Store("bot:token-2")
	cmd.set(t, "token-2")
	// Another Repositories on the same cache, with the login that holds the
	// old token: refused, renewed, and the index on disk revalidated with
	// the new token (304), not downloaded again.
	repos := NewRepositories(cache, 0)
	if _, err := repos.Resolve(context.Background(), Source{Repository: s.URL, Name: "web", Auth: auth}); err != nil {
		t.Fatalf("resolution after the token rotated: %v", err)
	}
	if n := cmd.count(t); n != 2 {
		t.Errorf("the command ran %d times, want 2 (first resolution, then after the refusal)", n)
	}
	if full := s.fullIndexes.Load(); full != 1 {
		t.Errorf("%d full index downloads, want 1: the index is cached by login", full)
	}
}

// TestExecLoginFails: a command that fails or prints nothing usable is
// named with its standard error's last line, never its output.
func TestExecLoginFails(t *testing.T) {
	for _, tc := range []struct {
		name, script, want string
	}{
		{"exits non-zero", `echo "secret-output-1"; echo "details" >&2; echo "token expired, run aws sso login" >&2; exit 3`, "exit status 3: token expired, run aws sso login"},
		{"prints nothing", `echo "no credentials found" >&2`, "printed no token: no credentials found"},
		{"prints two lines", `echo "secret-output-1"; echo "secret-output-2"`, "printed several lines"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repos := NewRepositories(t.TempDir(), 0)
			auth := Auth{Username: "bot", Login: &ExecLogin{Command: "sh", Args: []string{"-c", tc.script}}}
			_, err := repos.Resolve(context.Background(), Source{Repository: "https://127.0.0.1:1/charts", Name: "web", Auth: auth})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrLogin) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "secret-output") {
				t.Errorf("the command's output is in the error: %v", err)
			}
		})
	}
}

// TestDockerConfig: Docker's credentials (auths, and a credential helper
// named by credHelpers) are used for a registry that asks for them, and
// never read for one that does not.
func TestDockerConfig(t *testing.T) {
	reg := newOCIRegistry(t)
	reg.push(t, "1.0.0", "only")
	dir := t.TempDir()
	t.Setenv("DOCKER_CONFIG", dir)
	write := func(config string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	resolve := func(auth Auth) error {
		_, err := NewRepositories(t.TempDir(), 0).OCI(context.Background(), Source{Repository: reg.url, Name: "web", Auth: auth})
		return err
	}
	tlsOnly := Auth{CAFile: reg.auth.CAFile}
	withDocker := Auth{CAFile: reg.auth.CAFile, DockerConfig: true}

	write(`{"auths":{"` + reg.host + `":{"auth":"` + base64.StdEncoding.EncodeToString([]byte("bot:s3cret")) + `"}}}`)
	if err := resolve(withDocker); err != nil {
		t.Errorf("with Docker's auths: %v", err)
	}
	if err := resolve(tlsOnly); err == nil || !strings.Contains(err.Error(), "basic credential not found (check the registry credentials") {
		t.Errorf("without asking for Docker's configuration: %v, want no credential sent", err)
	}

	// credHelpers: docker-credential-<name> get reads the host on its
	// standard input and prints the credentials.
	bin := t.TempDir()
	helper := "#!/bin/sh\nread host\n[ \"$host\" = \"" + reg.host + "\" ] || exit 1\necho '{\"ServerURL\":\"'$host'\",\"Username\":\"bot\",\"Secret\":\"s3cret\"}'\n"
	if err := os.WriteFile(filepath.Join(bin, "docker-credential-hrtest"), []byte(helper), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	write(`{"credHelpers":{"` + reg.host + `":"hrtest"}}`)
	if err := resolve(withDocker); err != nil {
		t.Errorf("with a credential helper: %v", err)
	}
}

// TestConcrete: what is handed to another program is the login's current
// token, or Docker's user name and password for the host.
func TestConcrete(t *testing.T) {
	cmd := newTokenCommand(t, "token-1")
	got, err := Auth{Username: "AWS", Login: cmd.login}.Concrete(context.Background(), "oci://registry.example.com/charts")
	if err != nil || got.Username != "AWS" || got.Password != "token-1" || got.Login != nil {
		t.Errorf("exec login: %+v, %v", got, err)
	}
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	config := `{"auths":{"registry.example.com":{"auth":"` + base64.StdEncoding.EncodeToString([]byte("robot:p4ss")) + `"}}}`
	if err := os.WriteFile(filepath.Join(os.Getenv("DOCKER_CONFIG"), "config.json"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err = Auth{DockerConfig: true}.Concrete(context.Background(), "oci://registry.example.com/charts")
	if err != nil || got.Username != "robot" || got.Password != "p4ss" || got.DockerConfig {
		t.Errorf("Docker configuration: %+v, %v", got, err)
	}
	if _, err := (Auth{DockerConfig: true}).Concrete(context.Background(), "oci://other.example.com/charts"); !errors.Is(err, ErrLogin) {
		t.Errorf("a host Docker has no login for: %v, want ErrLogin", err)
	}
}

// TestExecLoginConcurrent: resolutions in parallel share one run of the
// login command.
func TestExecLoginConcurrent(t *testing.T) {
	reg := newOCIRegistry(t)
	reg.push(t, "1.0.0", "only")
	cmd := newTokenCommand(t, "s3cret")
	repos := NewRepositories(t.TempDir(), 0)
	auth := Auth{Username: "bot", CAFile: reg.auth.CAFile, Login: cmd.login}
	errs := make(chan error, 10)
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			_, err := repos.OCI(context.Background(), Source{Repository: reg.url, Name: "web", Auth: auth})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := cmd.count(t); n != 1 {
		t.Errorf("the command ran %d times for 10 concurrent resolutions, want 1", n)
	}
}
