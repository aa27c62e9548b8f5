//go:build unix

package e2e

import (
	"encoding/base64"
	"testing"
)

// TestPostRendererCommand: post_renderers with a command, through
// terraform. A command that fails ends the plan, naming it with what it
// wrote on standard error, and the apply writes nothing; one that echoes
// the manifest on standard error as it fails does not carry the release's
// secret values into the error. A Kustomize patch and a command run in
// order; the next plan is empty (sed's output is the same every time).
// What a command echoes of the chart's Secrets and of its env is redacted
// too.
func TestPostRendererCommand(t *testing.T) {
	parallelMatrix(t)
	ns := newNamespace(t)
	c := config{namespace: ns, repo: newRepository(t), cacheDir: t.TempDir()}
	store := newStorage(t, ns)
	w := newWorkspace(t, "exec")
	const secret = "exec-s3cret-value"
	body := func(renderers string) string {
		return `  sensitive_values = jsonencode({ password = "` + secret + `" })
  post_renderers   = ` + renderers
	}

	w.write(c.hcl(map[string]string{"svc": body(`[{ exec = { command = "sed", args = ["-e", "s/unterminated"] } }]`)}))
	res := w.must(1, "plan", "-input=false", "-no-color")
	for _, want := range []string{"Post-renderer command failed", `post_renderers[0].exec`, `command "sed"`, "exit status 1", "unterminated `s' command"} {
		if !has(res.stderr, want) {
			t.Errorf("the plan's error lacks %q:\n%s", want, res.stderr)
		}
	}
	w.write(c.hcl(map[string]string{"svc": body(`[{ exec = { command = "sh", args = ["-c", "cat >&2; exit 2"] } }]`)}))
	res = w.must(1, "apply", "-auto-approve", "-input=false", "-no-color")
	if !has(res.stderr, "exit status 2") || !has(res.stderr, "kind: ConfigMap") {
		t.Errorf("the error lacks the command's exit status and standard error:\n%s", res.stderr)
	}
	if has(res.stdout+res.stderr, secret) || has(res.stdout+res.stderr, base64.StdEncoding.EncodeToString([]byte(secret))) {
		t.Errorf("a secret value the command wrote on standard error is in the output:\n%s", res.stderr)
	}
	if rel := store.latest("svc"); rel != nil || len(w.releases()) != 0 {
		t.Fatalf("a failed post-renderer wrote the release: %s", store.describe("svc"))
	}

	// A command that echoes what it is given and its env: neither the
	// chart's Secret (from plain values) nor the env value shows.
	const apiKey, token = "chart-secret-api-key", "env-t0ken-value"
	w.write(c.hcl(map[string]string{"svc": body(`[{ exec = { command = "sh", args = ["-c", "cat >&2; echo token=$TOKEN >&2; exit 2"], env = { TOKEN = "`+token+`" } } }]`) +
		"\n  values = { apiKey = \"" + apiKey + "\" }"}))
	res = w.must(1, "plan", "-input=false", "-no-color")
	if !has(res.stderr, "kind: Secret") || !has(res.stderr, "token=(sensitive value)") {
		t.Errorf("the error lacks the command's standard error, redacted:\n%s", res.stderr)
	}
	for _, leaked := range []string{secret, apiKey, base64.StdEncoding.EncodeToString([]byte(apiKey)), token} {
		if has(res.stdout+res.stderr, leaked) {
			t.Errorf("%q, which the command wrote on standard error, is in the plan's output:\n%s", leaked, res.stderr)
		}
	}

	// A standard error longer than the error quotes (4 KiB), cut inside
	// the secret it starts with: no end of the secret shows.
	const cutToken = "cut-t0ken-value-0123456789"
	w.write(c.hcl(map[string]string{"svc": body(`[{ exec = { command = "sh", args = ["-c", "printf %s \"$TOKEN\" >&2; head -c 4086 /dev/zero | tr '\\000' x >&2; exit 2"], env = { TOKEN = "` + cutToken + `" } } }]`)}))
	res = w.must(1, "plan", "-input=false", "-no-color")
	if !has(res.stderr, "exit status 2") || !has(res.stderr, "xxxxxxxx") {
		t.Errorf("the error lacks the command's exit status and the end of its standard error:\n%s", res.stderr)
	}
	for n := 4; n <= len(cutToken); n++ {
		if tail := cutToken[len(cutToken)-n:]; has(res.stdout+res.stderr, tail) {
			t.Fatalf("the plan's output shows the end of the secret cut by the 4 KiB limit, %q:\n%s", tail, res.stderr)
		}
	}

	patch := `yamlencode({ apiVersion = "v1", kind = "ConfigMap", metadata = { name = "svc" }, data = { message = "patched" } })`
	w.write(c.hcl(map[string]string{"svc": body(`[
    { kustomize = { patches = [{ patch = ` + patch + ` }] } },
    { exec = { command = "sed", args = ["-e", "s/patched/patched-then-sed/"] } },
  ]`)}))
	w.apply()
	if got := configMessage(t, ns, "svc"); got != "patched-then-sed" {
		t.Errorf("message %q, want patched-then-sed (the patch, then the command)", got)
	}
	w.planIsEmpty()
}
