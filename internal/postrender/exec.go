package postrender

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/helm"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/manifest"
	"github.com/helmrelease/terraform-provider-helmrelease/internal/redact"
)

// DefaultExecTimeout bounds a post-renderer command without a timeout of
// its own.
const DefaultExecTimeout = time.Minute

// maxStderr is how much of a failed command's standard error its error
// keeps: the end, where the reason usually is.
const maxStderr = 4 << 10

// Exec is a post-renderer command (post_renderers[].exec), with Helm's
// contract for post-renderer binaries: the rendered manifest on standard
// input, the post-rendered manifest on standard output; a non-zero exit
// fails, with what it wrote on standard error, and so does an empty
// output. The command is run directly, never through a shell, with the
// provider's environment minus the variables that may carry its or
// Terraform's secrets (see Environ), plus Env.
type Exec struct {
	// Command is a path, or a name looked up in PATH.
	Command string
	// Args are the command's arguments.
	Args []string
	// Env is set in the command's environment, over the inherited one.
	Env map[string]string
	// Timeout bounds a run; zero is DefaultExecTimeout.
	Timeout time.Duration
}

// ExecError is the failure of a post-renderer command.
type ExecError struct {
	// Command as configured.
	Command string
	// Err says how it failed: not found, an exit status, the timeout.
	Err error
	// Stderr is the end of what it wrote on standard error.
	Stderr string
}

func (e *ExecError) Error() string {
	msg := fmt.Sprintf("command %q: %v", e.Command, e.Err)
	if e.Stderr != "" {
		msg += "; it wrote on standard error:\n" + e.Stderr
	}
	return msg
}

func (e *ExecError) Unwrap() error { return e.Err }

// Resolve returns the path Command runs: itself when it names a file (a
// path with a separator), else the executable of that name in PATH. An
// error says why there is none.
func (x *Exec) Resolve() (string, error) {
	p, err := exec.LookPath(x.Command)
	if err != nil {
		return "", &ExecError{Command: x.Command, Err: errors.Unwrap(err)}
	}
	return p, nil
}

// maxProgramBytes bounds the files Files reads: a program or script, not
// data.
const maxProgramBytes = 64 << 20

// Files returns the content of the files the command runs and reads as
// its arguments say: the program Command resolves to (a script, or a
// binary), and each argument that names a regular file (sh render.sh,
// kustomize build ./overlay's files are not: a directory is not read),
// by path. What the program reads on its own (a path in its environment,
// files it opens) is not seen.
func (x *Exec) Files() (map[string][]byte, error) {
	program, err := x.Resolve()
	if err != nil {
		return nil, err
	}
	paths := []string{program}
	for _, a := range x.Args {
		if info, err := os.Stat(a); err == nil && info.Mode().IsRegular() {
			paths = append(paths, a)
		}
	}
	out := make(map[string][]byte, len(paths))
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("reading post-renderer file %s: %w", p, err)
		}
		if info.Size() > maxProgramBytes {
			return nil, fmt.Errorf("post-renderer file %s: %d bytes, over the %d read", p, info.Size(), maxProgramBytes)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("reading post-renderer file %s: %w", p, err)
		}
		out[p] = b
	}
	return out, nil
}

// execRun is a command run under the context of the request that renders
// (an Exec alone is no helm.PostRenderer: a command always has one).
type execRun struct {
	ctx context.Context
	x   *Exec
}

var _ helm.PostRenderer = execRun{}

func (r execRun) Run(in *bytes.Buffer) (*bytes.Buffer, error) { return r.x.RunContext(r.ctx, in) }

// RunContext runs the command on in; it is stopped when ctx ends or its
// timeout passes. What the command wrote on standard error, which its
// error quotes, is redacted of the values of Env, of the Secrets of in
// (their data and stringData) and of what ctx carries (redact.WithForms),
// which it may have echoed, before it is cut.
func (x *Exec) RunContext(ctx context.Context, in *bytes.Buffer) (*bytes.Buffer, error) {
	bin, err := x.Resolve()
	if err != nil {
		return nil, err
	}
	timeout := x.Timeout
	if timeout <= 0 {
		timeout = DefaultExecTimeout
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, x.Args...)
	cmd.Env = Environ(os.Environ(), x.Env)
	cmd.Stdin = bytes.NewReader(in.Bytes())
	var out bytes.Buffer
	// The secrets are known before the command runs: its standard error
	// is kept long enough to redact a secret the cut would split.
	red, parsed := x.secrets(in.String())
	// And the sensitive strings of the release (sensitive values, values
	// read from Secrets), which a chart may have put outside a Secret.
	red.AddForms(redact.FormsFrom(parent)...)
	stderr := &tail{max: maxStderr + red.Longest()}
	cmd.Stdout, cmd.Stderr = &out, stderr
	cmd.WaitDelay = 5 * time.Second // children holding the pipes open
	if err := cmd.Run(); err != nil {
		switch {
		case parent.Err() != nil:
			err = fmt.Errorf("stopped: %w", context.Cause(parent))
		case ctx.Err() != nil:
			err = fmt.Errorf("did not finish within %s", timeout)
		}
		return nil, &ExecError{Command: x.Command, Err: err, Stderr: redacted(stderr, red, parsed)}
	}
	if len(bytes.TrimSpace(out.Bytes())) == 0 && len(bytes.TrimSpace(in.Bytes())) > 0 {
		return nil, &ExecError{Command: x.Command, Err: errors.New("wrote nothing on standard output: a post-renderer writes the whole manifest back"), Stderr: redacted(stderr, red, parsed)}
	}
	return &out, nil
}

// secrets are the values of Env and the Secret values of the manifest
// the command is given; parsed is false when the manifest does not parse
// (its secrets are then unknown).
func (x *Exec) secrets(in string) (r *redact.Secrets, parsed bool) {
	r = &redact.Secrets{}
	for _, v := range x.Env {
		r.Add(v)
	}
	secrets, err := manifest.SecretValues(in)
	if err != nil {
		return r, false
	}
	r.Add(secrets...)
	return r, true
}

// redacted is the end of stderr without the secrets of r, at most
// maxStderr bytes; without a word of it when the manifest did not parse.
// Redacted before it is cut, and cut past where a secret begun before
// what was kept could end: no part of a secret shows.
func redacted(stderr *tail, r *redact.Secrets, parsed bool) string {
	if len(bytes.TrimSpace(stderr.buf)) == 0 {
		return ""
	}
	if !parsed {
		return "(not shown: the manifest given to the command does not parse, so the secrets it may echo are unknown)"
	}
	s, cut := r.Replace(string(stderr.buf)), stderr.cut
	if cut {
		s = s[min(len(s), r.Longest()):]
	}
	if over := len(s) - maxStderr; over > 0 {
		s, cut = s[over:], true
	}
	s = strings.TrimSpace(strings.ToValidUTF8(s, ""))
	if cut && s != "" {
		s = "…" + s
	}
	return s
}

// Environ is the environment of a post-renderer command: env without the
// variables that may hold the provider's credentials (KUBE_*), Terraform's
// (TF_*: TF_VAR_* values, TF_TOKEN_* registry tokens) or the plugin
// protocol's (PLUGIN_*: its client certificate), plus set.
func Environ(env []string, set map[string]string) []string {
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if _, ok := set[name]; ok || dropped(name) {
			continue
		}
		out = append(out, kv)
	}
	for name, v := range set {
		out = append(out, name+"="+v)
	}
	slices.Sort(out)
	return out
}

func dropped(name string) bool {
	for _, prefix := range []string{"KUBE_", "TF_", "PLUGIN_"} {
		if strings.HasPrefix(strings.ToUpper(name), prefix) {
			return true
		}
	}
	return false
}

// tail keeps the last max bytes written to it.
type tail struct {
	max int
	buf []byte
	cut bool
}

func (t *tail) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf, t.cut = t.buf[over:], true
	}
	return len(p), nil
}
