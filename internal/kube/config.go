// Package kube is the provider's side of the Kubernetes API below Helm:
// clients built from the provider's connection settings once per
// configuration and shared between concurrent resources (their client-side
// rate limit raised to a ceiling where the server throttles with API
// Priority and Fairness); the Getter Helm's action configuration reads;
// server-side dry runs of a release's objects; the kinds a plan will
// create, waited for until served; namespaces created for a release and
// deleted with it; and the explanation of why an object is not ready, for
// failed waits.
package kube

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Default client rate limits.
const (
	DefaultQPS   = 50
	DefaultBurst = 100
	// CeilingQPS and CeilingBurst bound the provider once the API server
	// shows it throttles with API Priority and Fairness: identities the
	// server exempts from it (system:masters, as most cluster creators
	// and kind's admin are) get no queueing and no 429 there, so the
	// provider keeps a limit of its own, well above what it needs (the
	// install of a 1,000-object release peaks near 400 requests per
	// second).
	CeilingQPS   = 1000
	CeilingBurst = 1000
)

// ExecConfig runs a credential plugin (client.authentication.k8s.io).
type ExecConfig struct {
	APIVersion string
	Command    string
	Args       []string
	Env        map[string]string
}

// Config is the connection settings as the user wrote them; empty fields are
// unset. Resolve fills unset fields from the KUBE_* environment.
type Config struct {
	ConfigPath           string
	ConfigPaths          []string
	ConfigContext        string
	Host                 string
	Token                string
	ClusterCACertificate string
	ClientCertificate    string
	ClientKey            string
	Insecure             *bool
	TLSServerName        string
	ProxyURL             string
	Exec                 *ExecConfig
	Kubeconfig           string
	QPS                  *float64
	Burst                *int64
	// UserAgent is the User-Agent of every request (DefaultUserAgent when
	// empty).
	UserAgent string
}

// DefaultUserAgent names the provider when Config.UserAgent is empty.
const DefaultUserAgent = "terraform-provider-helmrelease"

// ErrNotConfigured means no source of cluster settings exists: nothing set
// explicitly, no KUBE_* variables, no KUBECONFIG, not running in a cluster.
var ErrNotConfigured = errors.New("no Kubernetes cluster is configured")

// Environment variables read for settings not set explicitly; the names
// follow the Kubernetes and Helm Terraform providers.
const (
	EnvConfigPath    = "KUBE_CONFIG_PATH"
	EnvConfigPaths   = "KUBE_CONFIG_PATHS"
	EnvContext       = "KUBE_CTX"
	EnvHost          = "KUBE_HOST"
	EnvToken         = "KUBE_TOKEN"
	EnvCACert        = "KUBE_CLUSTER_CA_CERT_DATA"
	EnvClientCert    = "KUBE_CLIENT_CERT_DATA"
	EnvClientKey     = "KUBE_CLIENT_KEY_DATA"
	EnvInsecure      = "KUBE_INSECURE"
	EnvTLSServerName = "KUBE_TLS_SERVER_NAME"
	EnvProxyURL      = "KUBE_PROXY_URL"
)

// WithEnvironment returns c with unset fields taken from the KUBE_*
// environment variables (getenv is os.Getenv outside tests).
func (c Config) WithEnvironment(getenv func(string) string) (Config, error) {
	str := func(field *string, env string) {
		if *field == "" {
			*field = getenv(env)
		}
	}
	str(&c.ConfigPath, EnvConfigPath)
	str(&c.ConfigContext, EnvContext)
	str(&c.Host, EnvHost)
	str(&c.Token, EnvToken)
	str(&c.ClusterCACertificate, EnvCACert)
	str(&c.ClientCertificate, EnvClientCert)
	str(&c.ClientKey, EnvClientKey)
	str(&c.TLSServerName, EnvTLSServerName)
	str(&c.ProxyURL, EnvProxyURL)
	if len(c.ConfigPaths) == 0 {
		if v := getenv(EnvConfigPaths); v != "" {
			c.ConfigPaths = filepath.SplitList(v)
		}
	}
	if c.Insecure == nil {
		if v := getenv(EnvInsecure); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return c, fmt.Errorf("%s=%q is not a boolean", EnvInsecure, v)
			}
			c.Insecure = &b
		}
	}
	return c, nil
}

// Explicit reports whether any setting selects a cluster, as opposed to only
// tuning a connection (qps, burst).
func (c Config) Explicit() bool {
	return c.ConfigPath != "" || len(c.ConfigPaths) > 0 || c.Kubeconfig != "" || c.Host != "" ||
		c.Token != "" || c.ClusterCACertificate != "" || c.ClientCertificate != "" || c.Exec != nil || c.ConfigContext != ""
}

// RESTConfig resolves the settings in this order: explicit settings and
// KUBE_* variables (already merged by WithEnvironment), then the KUBECONFIG
// variable, then the in-cluster service account. The user's default
// kubeconfig file is never read implicitly. It returns ErrNotConfigured when
// none applies.
func (c Config) RESTConfig(getenv func(string) string) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	switch {
	case c.Explicit():
		cfg, err = c.clientConfig().ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("building Kubernetes client configuration: %w", err)
		}
	case getenv("KUBECONFIG") != "":
		rules := &clientcmd.ClientConfigLoadingRules{Precedence: filepath.SplitList(getenv("KUBECONFIG"))}
		cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("loading the kubeconfig named by KUBECONFIG: %w", err)
		}
	case getenv("KUBERNETES_SERVICE_HOST") != "":
		cfg, err = rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("loading in-cluster configuration: %w", err)
		}
	default:
		return nil, ErrNotConfigured
	}
	if c.QPS == nil && c.Burst == nil {
		// Probed by Clients: no client-side limit where the API server
		// throttles with API Priority and Fairness.
		cfg.RateLimiter = newServerThrottled()
	} else {
		cfg.QPS, cfg.Burst = DefaultQPS, DefaultBurst
		if c.QPS != nil {
			cfg.QPS = float32(*c.QPS)
		}
		if c.Burst != nil {
			cfg.Burst = int(*c.Burst)
		}
	}
	cfg.UserAgent = c.UserAgent
	if cfg.UserAgent == "" {
		cfg.UserAgent = DefaultUserAgent
	}
	LimitInFlight(cfg)
	return cfg, nil
}

func (c Config) clientConfig() clientcmd.ClientConfig {
	overrides := &clientcmd.ConfigOverrides{CurrentContext: c.ConfigContext}
	if c.Host != "" {
		overrides.ClusterInfo.Server = c.Host
	}
	if c.ClusterCACertificate != "" {
		overrides.ClusterInfo.CertificateAuthorityData = []byte(c.ClusterCACertificate)
	}
	if c.Insecure != nil {
		overrides.ClusterInfo.InsecureSkipTLSVerify = *c.Insecure
	}
	if c.TLSServerName != "" {
		overrides.ClusterInfo.TLSServerName = c.TLSServerName
	}
	if c.ProxyURL != "" {
		overrides.ClusterInfo.ProxyURL = c.ProxyURL
	}
	if c.Token != "" {
		overrides.AuthInfo.Token = c.Token
	}
	if c.ClientCertificate != "" {
		overrides.AuthInfo.ClientCertificateData = []byte(c.ClientCertificate)
	}
	if c.ClientKey != "" {
		overrides.AuthInfo.ClientKeyData = []byte(c.ClientKey)
	}
	if c.Exec != nil {
		exec := &clientcmdapi.ExecConfig{
			APIVersion:      c.Exec.APIVersion,
			Command:         c.Exec.Command,
			Args:            c.Exec.Args,
			InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
		}
		for k, v := range c.Exec.Env {
			exec.Env = append(exec.Env, clientcmdapi.ExecEnvVar{Name: k, Value: v})
		}
		overrides.AuthInfo.Exec = exec
	}

	if c.Kubeconfig != "" {
		raw, err := clientcmd.Load([]byte(c.Kubeconfig))
		if err != nil {
			return errClientConfig{fmt.Errorf("parsing kubeconfig content: %w", err)}
		}
		return clientcmd.NewNonInteractiveClientConfig(*raw, c.ConfigContext, overrides, nil)
	}
	var paths []string
	if c.ConfigPath != "" {
		paths = append(paths, c.ConfigPath)
	}
	paths = append(paths, c.ConfigPaths...)
	if len(paths) > 0 {
		for i, p := range paths {
			paths[i] = expandHome(p)
		}
		rules := &clientcmd.ClientConfigLoadingRules{Precedence: paths}
		return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	}
	return clientcmd.NewDefaultClientConfig(*clientcmdapi.NewConfig(), overrides)
}

func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, strings.TrimPrefix(p, "~"))
		}
	}
	return p
}

// ValidateProxyURL reports whether s is a usable proxy URL.
func ValidateProxyURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	switch u.Scheme {
	case "http", "https", "socks5":
	default:
		return fmt.Errorf("scheme %q is not one of http, https, socks5", u.Scheme)
	}
	if u.Host == "" {
		return errors.New("the URL has no host")
	}
	return nil
}

// errClientConfig is a clientcmd.ClientConfig that only reports an error.
type errClientConfig struct{ err error }

func (e errClientConfig) RawConfig() (clientcmdapi.Config, error) {
	return clientcmdapi.Config{}, e.err
}
func (e errClientConfig) ClientConfig() (*rest.Config, error)  { return nil, e.err }
func (e errClientConfig) Namespace() (string, bool, error)     { return "", false, e.err }
func (e errClientConfig) ConfigAccess() clientcmd.ConfigAccess { return nil }
