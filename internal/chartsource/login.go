package chartsource

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	"oras.land/oras-go/v2/registry/remote/credentials"
	"oras.land/oras-go/v2/registry/remote/errcode"
)

// Login supplies a repository's or registry's password when it is first
// needed and a new one when the repository refuses the last: the tokens of
// cloud registries (ECR, GAR, ACR) expire within hours.
type Login interface {
	// ID names the login in cache keys, in place of its passwords: one ID
	// gives one access, whatever password it currently holds.
	ID() string
	// Password returns the password to send. refused is one the repository
	// refused (empty at first): it is not given again, a new one is fetched
	// unless another caller fetched it already.
	Password(ctx context.Context, refused string) (string, error)
}

// ExecLoginTimeout bounds a run of an ExecLogin's command.
const ExecLoginTimeout = time.Minute

// ExecLogin runs a command that prints a token (aws ecr get-login-password,
// gcloud auth print-access-token, az acr login --expose-token): lazily, the
// first time the token is needed, and again only when a repository refuses
// it, as kubectl's exec credential plugins are. Its standard output, less
// surrounding white space, is the token; the command runs with the
// provider's environment and Env added. Safe for concurrent use: one run
// serves every caller waiting for it.
type ExecLogin struct {
	Command string
	Args    []string
	Env     map[string]string

	mu    sync.Mutex
	token string
}

// ID names the command, its arguments and environment.
func (l *ExecLogin) ID() string {
	keys := make([]string, 0, len(l.Env))
	for k := range l.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("exec\x00" + l.Command)
	for _, a := range l.Args {
		b.WriteString("\x00" + a)
	}
	for _, k := range keys {
		b.WriteString("\x00" + k + "=" + l.Env[k])
	}
	return b.String()
}

// Password returns the token of the last run, running the command when
// there is none or the repository refused it.
func (l *ExecLogin) Password(ctx context.Context, refused string) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.token != "" && l.token != refused {
		return l.token, nil
	}
	token, err := l.run(ctx)
	if err != nil {
		return "", err
	}
	l.token = token
	return token, nil
}

// Current is the token of the last run; empty before the first.
func (l *ExecLogin) Current() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.token
}

func (l *ExecLogin) run(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, ExecLoginTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, l.Command, l.Args...)
	cmd.Env = os.Environ()
	for k, v := range l.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	// The output is a secret and its errors may quote it: neither is shown.
	// The standard error is the command's account of a failure; its last
	// line is shown, as kubectl shows an exec plugin's.
	switch {
	case ctx.Err() != nil:
		return "", fmt.Errorf("login command %s: no token within %s", l.Command, ExecLoginTimeout)
	case err != nil:
		return "", fmt.Errorf("login command %s: %w%s", l.Command, err, lastLine(stderr.String()))
	}
	token := strings.TrimSpace(stdout.String())
	if token == "" {
		return "", fmt.Errorf("login command %s printed no token%s", l.Command, lastLine(stderr.String()))
	}
	if strings.ContainsAny(token, "\r\n") {
		return "", fmt.Errorf("login command %s printed several lines: it must print the token alone", l.Command)
	}
	return token, nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if s == "" {
		return ""
	}
	const limit = 200
	if len(s) > limit {
		s = s[:limit] + "…"
	}
	return ": " + s
}

// Concrete returns auth with its login's password, or Docker's credentials
// for repository's host, as a user name and password: what is handed to
// another program (Flux's source-controller). The password is the login's
// current one; it expires where it is handed.
func (a Auth) Concrete(ctx context.Context, repository string) (Auth, error) {
	switch {
	case a.Login != nil:
		password, err := a.Login.Password(ctx, "")
		if err != nil {
			return a, marked{err, ErrLogin}
		}
		a.Password = password
	case a.DockerConfig && a.Username == "" && a.Password == "":
		store, err := credentials.NewStoreFromDocker(credentials.StoreOptions{DetectDefaultNativeStore: true})
		if err != nil {
			return a, fmt.Errorf("reading Docker's credential configuration: %w", err)
		}
		host, _, _ := strings.Cut(strings.TrimPrefix(repository, "oci://"), "/")
		cred, err := store.Get(ctx, host)
		if err != nil {
			return a, marked{fmt.Errorf("the credentials of %s in Docker's configuration: %w", host, err), ErrLogin}
		}
		if cred.Password == "" {
			return a, marked{fmt.Errorf("the Docker configuration holds no user name and password for %s (an identity token cannot be handed on)", host), ErrLogin}
		}
		a.Username, a.Password = cred.Username, cred.Password
	}
	a.Login, a.DockerConfig = nil, false
	return a, nil
}

// ErrLogin marks a login that gave no credentials.
var ErrLogin = errors.New("login failed")

// withLogin runs fetch with auth's login turned into its password; when
// the repository refuses it, once more with a new one. Without a login,
// fetch runs once with auth as it is.
func withLogin[T any](ctx context.Context, auth Auth, fetch func(Auth) (T, error)) (T, error) {
	if auth.Login == nil {
		return fetch(auth)
	}
	var zero T
	refused := ""
	for attempt := 0; ; attempt++ {
		password, err := auth.Login.Password(ctx, refused)
		if err != nil {
			return zero, marked{err, ErrLogin}
		}
		with := auth
		with.Password = password
		out, err := fetch(with)
		if err == nil || attempt == 1 || !isRefused(err) {
			return out, err
		}
		refused = password
	}
}

// isRefused reports whether err is a repository's or registry's refusal
// of the credentials sent (401, 403).
func isRefused(err error) bool {
	var status *StatusError
	if errors.As(err, &status) {
		return status.Code == http.StatusUnauthorized || status.Code == http.StatusForbidden
	}
	var resp *errcode.ErrorResponse
	if errors.As(err, &resp) {
		return resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden
	}
	return false
}
