package main

import (
	"os"
	"testing"
)

func TestQuietUnreadLogs(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want map[string]string // "" : unset
	}{
		{"nobody reads", nil, map[string]string{"TF_LOG_SDK": "off", "TF_LOG_PROVIDER_HELMRELEASE": "off"}},
		{"TF_LOG", map[string]string{"TF_LOG": "trace"}, map[string]string{"TF_LOG_SDK": "", "TF_LOG_PROVIDER_HELMRELEASE": ""}},
		{"TF_LOG_PROVIDER", map[string]string{"TF_LOG_PROVIDER": "debug"}, map[string]string{"TF_LOG_SDK": "", "TF_LOG_PROVIDER_HELMRELEASE": ""}},
		{"set by hand", map[string]string{"TF_LOG_SDK": "debug"}, map[string]string{"TF_LOG_SDK": "debug", "TF_LOG_PROVIDER_HELMRELEASE": "off"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range []string{"TF_LOG", "TF_LOG_PROVIDER", "TF_LOG_SDK", "TF_LOG_PROVIDER_HELMRELEASE"} {
				t.Setenv(v, tc.env[v]) // restored after the test
				if tc.env[v] == "" {
					_ = os.Unsetenv(v)
				}
			}
			quietUnreadLogs()
			for v, want := range tc.want {
				if got := os.Getenv(v); got != want {
					t.Errorf("%s = %q, want %q", v, got, want)
				}
			}
		})
	}
}
