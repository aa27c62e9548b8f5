package chartsource

import (
	"errors"
	"strings"
	"testing"
)

// TestSplitRepositoryURL: credentials in a repository URL move to the
// request's auth, a query string or fragment is refused, and no error
// quotes the URL.
func TestSplitRepositoryURL(t *testing.T) {
	for _, tc := range []struct {
		in, want       string
		auth, wantAuth Auth
		err            error
	}{
		{in: "https://charts.example.com/stable", want: "https://charts.example.com/stable"},
		{in: "", want: ""},
		{in: "https://bot:s3cr%40t@charts.example.com/x", want: "https://charts.example.com/x", wantAuth: Auth{Username: "bot", Password: "s3cr@t"}},
		{in: "oci://bot:s3cret@registry.example.com:5000/charts", want: "oci://registry.example.com:5000/charts", wantAuth: Auth{Username: "bot", Password: "s3cret"}},
		{in: "https://token@charts.example.com", want: "https://charts.example.com", wantAuth: Auth{Username: "token"}},
		{in: "https://bot:s3cret@charts.example.com", auth: Auth{Password: "other"}, wantAuth: Auth{Password: "other"}, err: ErrRepositoryCredentialsTwice},
		{in: "https://charts.example.com/x?token=s3cret", err: ErrRepositoryQuery},
		{in: "https://charts.example.com/x?", err: ErrRepositoryQuery},
		{in: "https://charts.example.com/x#s3cret", err: ErrRepositoryQuery},
		{in: "https://bot:s3cret@/x", err: ErrRepositoryURL},
		{in: "ftp://bot:s3cret@charts.example.com", err: ErrRepositoryURL},
		{in: "https://bot:s3cret@charts example.com", err: ErrRepositoryURL},
	} {
		got, auth, err := SplitRepositoryURL(tc.in, tc.auth)
		if !errors.Is(err, tc.err) {
			t.Errorf("%s: error %v, want %v", tc.in, err, tc.err)
			continue
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the error quotes the password: %v", tc.in, err)
		}
		if got != tc.want || auth != tc.wantAuth {
			t.Errorf("%s: got %q %+v, want %q %+v", tc.in, got, auth, tc.want, tc.wantAuth)
		}
	}
}
