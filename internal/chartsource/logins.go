package chartsource

import "strings"

// RegistryLogin is a login of the provider's registries: the OCI host
// (oci://host) or Helm repository URL prefix it is for, and its
// credentials; Exec is Auth.Login when the login runs a command.
type RegistryLogin struct {
	URL  string
	Auth Auth
	Exec *ExecLogin
}

// matches reports how well the login matches repository: the length of
// the matched prefix, 0 for none. An OCI login matches its host's
// repositories, a Helm repository's those under its URL.
func (l RegistryLogin) matches(repository string) int {
	if IsOCI(l.URL) {
		if IsOCI(repository) && registryHost(l.URL) == registryHost(repository) {
			return len(l.URL)
		}
		return 0
	}
	prefix := strings.TrimSuffix(l.URL, "/")
	if repository == prefix || strings.HasPrefix(repository, prefix+"/") {
		return len(prefix)
	}
	return 0
}

func registryHost(u string) string {
	host, _, _ := strings.Cut(strings.TrimPrefix(u, "oci://"), "/")
	return host
}

// RegistryLogins are the provider's registries.
type RegistryLogins []RegistryLogin

// For is the login for repository: the one of its OCI host, or of the
// longest Helm repository URL prefixing it; nil when none matches.
func (ls RegistryLogins) For(repository string) *Auth {
	var best *RegistryLogin
	bestLen := 0
	for i := range ls {
		if n := ls[i].matches(repository); n > bestLen {
			best, bestLen = &ls[i], n
		}
	}
	if best == nil {
		return nil
	}
	auth := best.Auth
	return &auth
}

// Complete completes auth, a chart's own, with the login for repository:
// its user name and password, login command or Docker configuration when
// the chart sets no user name, and plain HTTP when the login says so.
func (ls RegistryLogins) Complete(repository string, auth Auth) Auth {
	login := ls.For(repository)
	if login == nil {
		return auth
	}
	auth.PlainHTTP = auth.PlainHTTP || login.PlainHTTP
	if auth.Username == "" {
		auth.Username, auth.Password, auth.Login, auth.DockerConfig = login.Username, login.Password, login.Login, login.DockerConfig
	}
	return auth
}

// Tokens are the tokens the logins' commands gave so far.
func (ls RegistryLogins) Tokens() []string {
	var tokens []string
	for _, l := range ls {
		if l.Exec != nil {
			if t := l.Exec.Current(); t != "" {
				tokens = append(tokens, t)
			}
		}
	}
	return tokens
}
