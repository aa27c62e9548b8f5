package chartsource

import (
	"errors"
	"net/url"
	"strings"
)

// Errors of SplitRepositoryURL. They never quote the URL, which may hold
// a password.
var (
	// ErrRepositoryURL: not a URL of a repository or registry.
	ErrRepositoryURL = errors.New("not an https://, http:// or oci:// URL with a host")
	// ErrRepositoryQuery: a query string or fragment, which the provider
	// would otherwise record and show.
	ErrRepositoryQuery = errors.New("a repository URL may not carry a query string or a fragment")
	// ErrRepositoryCredentialsTwice: credentials both in the URL and in
	// username or password.
	ErrRepositoryCredentialsTwice = errors.New("credentials are both in the URL and in username or password")
)

// SplitRepositoryURL takes credentials written into a repository URL
// (https://user:pass@host/…) out of it into auth, so that the URL every
// request, error, log line, cache entry and recorded source uses holds
// none. A URL with a query string or a fragment is refused. Anything that
// is not a repository URL is returned as it is, for Resolve to refuse.
func SplitRepositoryURL(repository string, auth Auth) (string, Auth, error) {
	if repository == "" {
		return repository, auth, nil
	}
	u, err := url.Parse(repository)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http" && u.Scheme != "oci") {
		return "", auth, ErrRepositoryURL
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(repository, "#") {
		return "", auth, ErrRepositoryQuery
	}
	if u.User == nil {
		return repository, auth, nil
	}
	if auth.Username != "" || auth.Password != "" {
		return "", auth, ErrRepositoryCredentialsTwice
	}
	auth.Username = u.User.Username()
	auth.Password, _ = u.User.Password()
	u.User = nil
	return u.String(), auth, nil
}
