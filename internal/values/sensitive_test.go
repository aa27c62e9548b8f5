package values

import (
	"reflect"
	"testing"
)

// TestSplitSensitive: values under a key naming a secret, and lists that
// mention one, go apart; the rest stays, its structure kept.
func TestSplitSensitive(t *testing.T) {
	plain, sensitive := SplitSensitive(map[string]any{
		"replicas": 2,
		"auth":     map[string]any{"enabled": true},
		"db":       map[string]any{"host": "db", "password": "s3cret", "port": 5432},
		"env":      []any{map[string]any{"name": "DB_PASSWORD", "value": "s3cret"}},
		"ports":    []any{80, 443},
		"ingress":  map[string]any{"tls": []any{map[string]any{"secretName": "web-tls"}}, "host": "web"},
		"apiKey":   "k",
	})
	wantPlain := map[string]any{"replicas": 2, "db": map[string]any{"host": "db", "port": 5432}, "ports": []any{80, 443}, "ingress": map[string]any{"host": "web"}}
	wantSensitive := map[string]any{
		"auth": map[string]any{"enabled": true}, "db": map[string]any{"password": "s3cret"},
		"env": []any{map[string]any{"name": "DB_PASSWORD", "value": "s3cret"}}, "apiKey": "k",
		"ingress": map[string]any{"tls": []any{map[string]any{"secretName": "web-tls"}}},
	}
	if !reflect.DeepEqual(plain, wantPlain) {
		t.Errorf("plain %v\nwant %v", plain, wantPlain)
	}
	if !reflect.DeepEqual(sensitive, wantSensitive) {
		t.Errorf("sensitive %v\nwant %v", sensitive, wantSensitive)
	}
}
