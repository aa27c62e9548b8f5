package kube

import (
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/helmrelease/terraform-provider-helmrelease/internal/testcluster"
)

// testKubeconfig is the test cluster's, set by TestMain unless -short.
var testKubeconfig string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	flag.Parse()
	if testing.Short() {
		return m.Run()
	}
	kubeconfig, stop, err := testcluster.ForTests(os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop()
	testKubeconfig = kubeconfig
	return m.Run()
}

// TestThrottledByTheServer: with qps and burst unset, the clients limit
// themselves to 50 requests per second until the API server answers that it
// throttles with API Priority and Fairness (the test cluster's does, as
// every Kubernetes ≥ 1.20 by default), then to a ceiling of their own (the
// identity may be exempt from APF); a server that does
// not answer keeps the limit; qps or burst set always limit.
func TestThrottledByTheServer(t *testing.T) {
	if testKubeconfig == "" {
		t.Skip("needs the test cluster")
	}
	cfg, err := Config{ConfigPath: testKubeconfig}.RESTConfig(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RateLimiter == nil || cfg.RateLimiter.QPS() != DefaultQPS || ServerThrottles(cfg) {
		t.Fatalf("before the probe: limiter %v, want %d per second", cfg.RateLimiter, DefaultQPS)
	}
	clients := NewClients(func() (*rest.Config, error) { return cfg, nil })
	if _, err := clients.Clientset(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !ServerThrottles(cfg) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	shared, err := clients.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if !ServerThrottles(shared) || shared.RateLimiter.QPS() != CeilingQPS {
		t.Errorf("the API server throttles with APF: want the clients limited to the ceiling of %v per second (the identity may be exempt from APF), got %v", CeilingQPS, shared.RateLimiter.QPS())
	}
	// The test cluster's admin is in system:masters, which APF exempts:
	// the ceiling is all that bounds it.
	refused := 0
	for range 2 * CeilingBurst {
		if !shared.RateLimiter.TryAccept() {
			refused++
		}
	}
	if refused == 0 {
		t.Errorf("%d requests at once all accepted: no ceiling", 2*CeilingBurst)
	}

	gone, err := Config{Host: "https://127.0.0.1:1", Insecure: ptr(true)}.RESTConfig(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	l := gone.RateLimiter.(*serverThrottled)
	probeAPF(gone, l)
	if ServerThrottles(gone) || l.QPS() != DefaultQPS {
		t.Errorf("a server that did not answer lifted the limit")
	}

	set, err := Config{ConfigPath: testKubeconfig, QPS: ptr(20.0)}.RESTConfig(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if set.RateLimiter != nil || set.QPS != 20 || set.Burst != DefaultBurst {
		t.Errorf("qps = 20: limiter %v, qps %v, burst %v; want a plain token bucket of 20 and %d", set.RateLimiter, set.QPS, set.Burst, DefaultBurst)
	}
}
