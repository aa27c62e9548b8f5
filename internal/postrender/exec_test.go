package postrender

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/redact"
)

// commandEnv makes the test binary a post-renderer command: the mode it
// names is what it does (see runCommand).
const commandEnv = "POSTRENDER_TEST_COMMAND"

func TestMain(m *testing.M) {
	if mode := os.Getenv(commandEnv); mode != "" {
		os.Exit(runCommand(mode))
	}
	os.Exit(m.Run())
}

// runCommand is the test binary as a post-renderer command.
func runCommand(mode string) int {
	in, _ := io.ReadAll(os.Stdin)
	switch mode {
	case "relabel":
		os.Stdout.Write(bytes.ReplaceAll(in, []byte("tier: web"), []byte("tier: edge")))
	case "report":
		// The manifest, then what it was given, as YAML comments.
		os.Stdout.Write(in)
		for _, name := range []string{"KUBE_TOKEN", "TF_VAR_password", "TF_TOKEN_app_example_com", "PLUGIN_CLIENT_CERT", "KEPT_VARIABLE", "SET_VARIABLE"} {
			v, ok := os.LookupEnv(name)
			fmt.Printf("# env %s=%q %v\n", name, v, ok)
		}
		for _, a := range os.Args[1:] {
			fmt.Printf("# arg %q\n", a)
		}
	case "fail":
		fmt.Fprintln(os.Stderr, "line 3: cannot parse the input")
		return 3
	case "echo":
		// A failing command that prints what it was given, and its token.
		os.Stderr.Write(in)
		fmt.Fprintf(os.Stderr, "token=%s\n", os.Getenv("TOKEN"))
		return 3
	case "long":
		// The token, then enough for the cut to fall inside it.
		fmt.Fprint(os.Stderr, os.Getenv("TOKEN")+strings.Repeat("x", maxStderr-10))
		return 3
	case "silent":
	case "slow":
		time.Sleep(time.Minute)
	}
	return 0
}

const execManifest = `apiVersion: v1
kind: ConfigMap
metadata:
  name: web
  labels:
    tier: web
`

// TestExec: Helm's contract for post-renderer commands, run directly with
// the environment the provider gives them.
func TestExec(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBE_TOKEN", "cluster-s3cret")
	t.Setenv("TF_VAR_password", "variable-s3cret")
	t.Setenv("TF_TOKEN_app_example_com", "registry-s3cret")
	t.Setenv("PLUGIN_CLIENT_CERT", "plugin-cert")
	t.Setenv("KEPT_VARIABLE", "kept")
	command := func(mode string, args ...string) *Exec {
		return &Exec{Command: self, Args: args, Env: map[string]string{commandEnv: mode, "SET_VARIABLE": "set"}, Timeout: 10 * time.Second}
	}
	for _, tc := range []struct {
		name    string
		exec    *Exec
		want    []string // in the output
		notWant []string
		err     []string // in the error; none: it succeeds
	}{
		{name: "rewrites the manifest", exec: command("relabel"), want: []string{"tier: edge"}, notWant: []string{"tier: web"}},
		{
			name: "the environment without the provider's and Terraform's secrets",
			exec: command("report"),
			want: []string{
				`# env KUBE_TOKEN="" false`, `# env TF_VAR_password="" false`, `# env TF_TOKEN_app_example_com="" false`, `# env PLUGIN_CLIENT_CERT="" false`,
				`# env KEPT_VARIABLE="kept" true`, `# env SET_VARIABLE="set" true`,
			},
			notWant: []string{"s3cret", "plugin-cert"},
		},
		{
			name: "arguments as they are, without a shell",
			exec: command("report", "a b", "$HOME", "*", "`id`"),
			want: []string{`# arg "a b"`, `# arg "$HOME"`, `# arg "*"`, "# arg \"`id`\""},
		},
		{name: "a non-zero exit fails with its standard error", exec: command("fail"), err: []string{fmt.Sprintf("command %q", self), "exit status 3", "line 3: cannot parse the input"}},
		{name: "no output fails", exec: command("silent"), err: []string{fmt.Sprintf("command %q", self), "wrote nothing on standard output"}},
		{name: "a command not found", exec: &Exec{Command: "helmrelease-no-such-post-renderer"}, err: []string{`command "helmrelease-no-such-post-renderer"`, "executable file not found"}},
		{name: "a path that is not there", exec: &Exec{Command: "./bin/no-such-post-renderer"}, err: []string{`command "./bin/no-such-post-renderer"`, "no such file"}},
		{name: "the timeout", exec: func() *Exec { x := command("slow"); x.Timeout = 300 * time.Millisecond; return x }(), err: []string{"did not finish within 300ms"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Build(context.Background(), []Renderer{{Exec: tc.exec}}, Metadata{}, Origin{Name: "web", Namespace: "apps"}).Run(bytes.NewBufferString(execManifest))
			if len(tc.err) > 0 {
				var execErr *ExecError
				var indexed *Error
				if !errors.As(err, &execErr) || !errors.As(err, &indexed) || indexed.Index != 0 {
					t.Fatalf("error %v (%T), want an *ExecError of post-renderer 0", err, err)
				}
				for _, want := range tc.err {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q lacks %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range append(tc.want, "helmrelease.terraform.io/name: 'web'") {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			for _, notWant := range tc.notWant {
				if strings.Contains(out.String(), notWant) {
					t.Errorf("output has %q:\n%s", notWant, out)
				}
			}
		})
	}
}

const secretManifest = `apiVersion: v1
kind: Secret
metadata:
  name: creds
stringData:
  password: chart-s3cret-password
data:
  key: ZGF0YS1zM2NyZXQta2V5
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: web
`

// TestExecStderrRedacted: what a failing command writes on standard error
// is shown without the Secrets of the manifest it was given (as written,
// base64 and decoded) and without its env values.
func TestExecStderrRedacted(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	x := &Exec{Command: self, Env: map[string]string{commandEnv: "echo", "TOKEN": "env-t0ken-value"}, Timeout: 10 * time.Second}
	_, err = Build(context.Background(), []Renderer{{Exec: x}}, Metadata{}, Origin{Name: "web", Namespace: "apps"}).Run(bytes.NewBufferString(secretManifest))
	if err == nil {
		t.Fatal("the command's failure was not reported")
	}
	for _, secret := range []string{"chart-s3cret-password", "ZGF0YS1zM2NyZXQta2V5", "data-s3cret-key", "env-t0ken-value"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows %q:\n%v", secret, err)
		}
	}
	for _, want := range []string{"kind: Secret", "password: (sensitive value)", "token=(sensitive value)", "exit status 3"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q:\n%v", want, err)
		}
	}

	// A manifest that does not parse: its secrets are unknown, so nothing
	// the command wrote is shown.
	_, err = x.RunContext(context.Background(), bytes.NewBufferString("kind: Secret\nstringData: {password: [unclosed\n"))
	if err == nil || strings.Contains(err.Error(), "unclosed") || !strings.Contains(err.Error(), "not shown") {
		t.Errorf("stderr of a manifest that does not parse: %v", err)
	}
}

// TestExecStderrCutInASecret: a standard error longer than what an error
// quotes, cut where a secret was printed, shows no part of the secret.
func TestExecStderrCutInASecret(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const token = "env-t0ken-value-0123456789"
	x := &Exec{Command: self, Env: map[string]string{commandEnv: "long", "TOKEN": token}, Timeout: 10 * time.Second}
	_, err = x.RunContext(context.Background(), bytes.NewBufferString(secretManifest))
	var execErr *ExecError
	if !errors.As(err, &execErr) {
		t.Fatalf("the command's failure was not reported as an ExecError: %v", err)
	}
	for n := 4; n <= len(token); n++ {
		if tail := token[len(token)-n:]; strings.Contains(execErr.Stderr, tail) {
			t.Fatalf("the error shows the end of the token, %q", tail)
		}
	}
	if !strings.HasPrefix(execErr.Stderr, "…") || !strings.HasSuffix(execErr.Stderr, "xxxxxxxx") || len(execErr.Stderr) > maxStderr+len("…") {
		t.Errorf("the error's standard error is not the end of what the command wrote, cut at %d bytes: %d bytes, %q…", maxStderr, len(execErr.Stderr), execErr.Stderr[:min(40, len(execErr.Stderr))])
	}
}

// TestExecStopsWithItsContext: a command is stopped when the request
// that renders is cancelled (Terraform interrupted), not at its timeout.
func TestExecStopsWithItsContext(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	x := &Exec{Command: self, Env: map[string]string{commandEnv: "slow"}, Timeout: time.Hour}
	done := make(chan error, 1)
	go func() {
		_, err := Build(ctx, []Renderer{{Exec: x}}, Metadata{}, Origin{Name: "web"}).Run(bytes.NewBufferString(execManifest))
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "stopped: context canceled") {
			t.Errorf("cancelled command: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the command ran on after its context was cancelled")
	}
}

// TestRendererDigestEncoding: a list of Kustomize post-renderers encodes
// as it did before commands came, so that the digest of existing
// releases' post-renderers stays the same.
func TestRendererDigestEncoding(t *testing.T) {
	k := Kustomize{Images: []Image{{Name: "app", NewTag: "2.0"}}, PatchesStrategicMerge: []string{"kind: Deployment"}}
	before, err := jsonOf([]Kustomize{k})
	if err != nil {
		t.Fatal(err)
	}
	now, err := jsonOf([]Renderer{{Kustomize: k}})
	if err != nil {
		t.Fatal(err)
	}
	if before != now {
		t.Errorf("Kustomize post-renderers encode as\n%s\nwant, as before,\n%s", now, before)
	}
	withExec, err := jsonOf([]Renderer{{Exec: &Exec{Command: "yq"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(withExec, `"Command":"yq"`) {
		t.Errorf("a command encodes as %s, without its command", withExec)
	}
}

func jsonOf(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// TestExecStderrCutInASensitiveValue: a sensitive value of the release
// that a chart put outside a Secret (the request's context carries it),
// printed where the cut of the command's standard error falls, shows no
// part of itself: it is redacted before the cut.
func TestExecStderrCutInASensitiveValue(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const value = "sensitive-value-in-a-configmap-0123456789"
	var secrets redact.Secrets
	secrets.Add(value)
	ctx := redact.WithForms(context.Background(), secrets.Forms())
	// TOKEN carries it to the command as it would read it from its input:
	// the test binary prints its TOKEN; its env is not what is checked.
	x := &Exec{Command: self, Env: map[string]string{commandEnv: "long"}, Timeout: 10 * time.Second}
	t.Setenv("TOKEN", value)
	_, err = x.RunContext(ctx, bytes.NewBufferString(execManifest))
	var execErr *ExecError
	if !errors.As(err, &execErr) {
		t.Fatalf("the command's failure was not reported as an ExecError: %v", err)
	}
	for n := 4; n <= len(value); n++ {
		if tail := value[len(value)-n:]; strings.Contains(execErr.Stderr, tail) {
			t.Fatalf("the error shows the end of the sensitive value, %q", tail)
		}
	}
}
