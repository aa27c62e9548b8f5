package kube

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

const kubeconfigDoc = `apiVersion: v1
kind: Config
clusters:
- name: a
  cluster: {server: "https://a.example:6443"}
- name: b
  cluster: {server: "https://b.example:6443"}
users:
- name: u
  user: {token: from-file}
contexts:
- name: a
  context: {cluster: a, user: u}
- name: b
  context: {cluster: b, user: u}
current-context: a
`

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestRESTConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config")
	if err := os.WriteFile(file, []byte(kubeconfigDoc), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		cfg       Config
		env       map[string]string
		wantHost  string
		wantToken string
		wantErr   error
	}{
		{name: "nothing configured", wantErr: ErrNotConfigured},
		{name: "qps alone selects no cluster", cfg: Config{QPS: ptr(5.0)}, wantErr: ErrNotConfigured},
		{name: "KUBECONFIG", env: map[string]string{"KUBECONFIG": file}, wantHost: "https://a.example:6443", wantToken: "from-file"},
		{name: "KUBE_CONFIG_PATH over KUBECONFIG", env: map[string]string{"KUBECONFIG": "/nonexistent", EnvConfigPath: file, EnvContext: "b"}, wantHost: "https://b.example:6443", wantToken: "from-file"},
		{name: "explicit over KUBE_*", cfg: Config{ConfigPath: file, ConfigContext: "a", Token: "explicit"}, env: map[string]string{EnvContext: "b", EnvToken: "env"}, wantHost: "https://a.example:6443", wantToken: "explicit"},
		{name: "host and token only", cfg: Config{Host: "https://c.example", Token: "t"}, wantHost: "https://c.example", wantToken: "t"},
		{name: "raw kubeconfig with context", cfg: Config{Kubeconfig: kubeconfigDoc, ConfigContext: "b"}, wantHost: "https://b.example:6443", wantToken: "from-file"},
		{name: "KUBE_HOST", env: map[string]string{EnvHost: "https://d.example", EnvToken: "t"}, wantHost: "https://d.example", wantToken: "t"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv := env(tc.env)
			cfg, err := tc.cfg.WithEnvironment(getenv)
			if err != nil {
				t.Fatal(err)
			}
			rc, err := cfg.RESTConfig(getenv)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("error %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rc.Host != tc.wantHost || rc.BearerToken != tc.wantToken {
				t.Errorf("host %q token %q, want %q %q", rc.Host, rc.BearerToken, tc.wantHost, tc.wantToken)
			}
			if rc.RateLimiter == nil || rc.RateLimiter.QPS() != DefaultQPS {
				t.Errorf("limiter %v, want the default of %d per second until the server is probed", rc.RateLimiter, DefaultQPS)
			}
		})
	}
}

func TestRESTConfigErrors(t *testing.T) {
	_, err := Config{Kubeconfig: "{not yaml"}.RESTConfig(env(nil))
	if err == nil {
		t.Error("want an error for a malformed kubeconfig")
	}
	if _, err := (Config{}).WithEnvironment(env(map[string]string{EnvInsecure: "maybe"})); err == nil {
		t.Error("want an error for KUBE_INSECURE=maybe")
	}
	if err := ValidateProxyURL("ftp://x"); err == nil {
		t.Error("want an error for an ftp proxy")
	}
}

func ptr[T any](v T) *T { return &v }
