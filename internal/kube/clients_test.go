package kube

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/rest"
)

// TestClientsBuiltOnce: concurrent resources share one set of clients, and
// the configuration is resolved once, errors included.
func TestClientsBuiltOnce(t *testing.T) {
	var calls atomic.Int32
	c := NewClients(func() (*rest.Config, error) {
		calls.Add(1)
		return &rest.Config{Host: "https://127.0.0.1:1"}, nil
	})
	var wg sync.WaitGroup
	got := make([]any, 50)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs, err := c.Clientset()
			if err != nil {
				t.Error(err)
			}
			if _, err := c.RESTMapper(); err != nil {
				t.Error(err)
			}
			got[i] = cs
		}()
	}
	wg.Wait()
	if calls.Load() != 1 {
		t.Errorf("configuration resolved %d times, want 1", calls.Load())
	}
	for i := range got {
		if got[i] != got[0] {
			t.Fatalf("caller %d got another clientset", i)
		}
	}
	cfg, _ := c.RESTConfig()
	cfg.Host = "changed"
	if again, _ := c.RESTConfig(); again.Host != "https://127.0.0.1:1" {
		t.Error("RESTConfig returned the shared configuration, not a copy")
	}

	failing := NewClients(func() (*rest.Config, error) { return nil, ErrNotConfigured })
	if _, err := failing.Discovery(); !errors.Is(err, ErrNotConfigured) {
		t.Errorf("Discovery error %v, want ErrNotConfigured", err)
	}
}
