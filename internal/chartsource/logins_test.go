package chartsource

import "testing"

// TestRegistryLoginsFor: an OCI login serves its host's repositories, a
// Helm repository's login those under its URL, the longest prefix first;
// a chart's own user name is kept, plain HTTP is added.
func TestRegistryLoginsFor(t *testing.T) {
	logins := RegistryLogins{
		{URL: "oci://registry.example.com", Auth: Auth{Username: "oci", Password: "p1"}},
		{URL: "oci://localhost:5001", Auth: Auth{PlainHTTP: true}},
		{URL: "https://charts.example.com/", Auth: Auth{Username: "all", Password: "p2"}},
		{URL: "https://charts.example.com/team", Auth: Auth{Username: "team", Password: "p3"}},
	}
	for _, tc := range []struct{ repository, want string }{
		{"oci://registry.example.com/charts/app", "oci"},
		{"oci://registry.example.com.evil/charts", ""},
		{"https://charts.example.com/stable", "all"},
		{"https://charts.example.com/team/app", "team"},
		{"https://charts.example.com/teamwork", "all"},
		{"https://charts.example.community", ""},
	} {
		got := ""
		if a := logins.For(tc.repository); a != nil {
			got = a.Username
		}
		if got != tc.want {
			t.Errorf("login for %s: %q, want %q", tc.repository, got, tc.want)
		}
	}
	own := logins.Complete("oci://registry.example.com/app", Auth{Username: "mine", Password: "own"})
	if own.Username != "mine" || own.Password != "own" {
		t.Errorf("a chart's own login became %+v", own)
	}
	if plain := logins.Complete("oci://localhost:5001/app", Auth{}); !plain.PlainHTTP {
		t.Errorf("the plain HTTP registry's chart: %+v, want plain HTTP", plain)
	}
}
