package kube

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// The headers with which an API server that protects itself with API
// Priority and Fairness (on by default since Kubernetes 1.20, GA in 1.29)
// names how it classified a request.
const (
	headerFlowSchema    = "X-Kubernetes-PF-FlowSchema-UID"
	headerPriorityLevel = "X-Kubernetes-PF-PriorityLevel-UID"
)

// apfProbeTimeout bounds the request that asks the API server whether it
// protects itself.
const apfProbeTimeout = 5 * time.Second

// serverThrottled is the rate limiter of a configuration whose qps and
// burst the user left unset: a token bucket of DefaultQPS and DefaultBurst,
// shared by every client of the configuration, until the API server shows
// that it throttles with API Priority and Fairness; then one of CeilingQPS
// and CeilingBurst. APF queues each client's requests at its priority
// level and answers 429 with Retry-After when the queues are full, which
// client-go honours (it retries); a tight client-side limit on top only
// adds waiting, as SIG API Machinery advises and controller-runtime and
// Flux do. The ceiling stays because the server may exempt the identity
// from APF (system:masters): then nothing else bounds it. A qps or burst
// the user sets is a plain token bucket, whatever the server does.
type serverThrottled struct {
	bucket, ceiling flowcontrol.RateLimiter
	apf             atomic.Bool
}

var _ flowcontrol.RateLimiter = (*serverThrottled)(nil)

func newServerThrottled() *serverThrottled {
	return &serverThrottled{
		bucket:  flowcontrol.NewTokenBucketRateLimiter(DefaultQPS, DefaultBurst),
		ceiling: flowcontrol.NewTokenBucketRateLimiter(CeilingQPS, CeilingBurst),
	}
}

// current is the limiter in force.
func (l *serverThrottled) current() flowcontrol.RateLimiter {
	if l.apf.Load() {
		return l.ceiling
	}
	return l.bucket
}

func (l *serverThrottled) TryAccept() bool                { return l.current().TryAccept() }
func (l *serverThrottled) Accept()                        { l.current().Accept() }
func (l *serverThrottled) QPS() float32                   { return l.current().QPS() }
func (l *serverThrottled) Wait(ctx context.Context) error { return l.current().Wait(ctx) }

func (l *serverThrottled) Stop() {
	l.bucket.Stop()
	l.ceiling.Stop()
}

// ThrottleByServer gives cfg, a configuration of no set rate limits (a
// kubeconfig read from a Secret), the limiter of a provider configuration
// that sets none, and starts probing its API server.
func ThrottleByServer(cfg *rest.Config) {
	l := newServerThrottled()
	cfg.RateLimiter = l
	go probeAPF(cfg, l)
}

// ServerThrottles reports whether cfg's requests go under the ceiling
// rather than the default limit because its API server throttles them with
// API Priority and Fairness (false until a probe has shown it).
func ServerThrottles(cfg *rest.Config) bool {
	l, ok := cfg.RateLimiter.(*serverThrottled)
	return ok && l.apf.Load()
}

// probeAPF asks cfg's API server (GET /livez/ping, which every client may
// read) whether it classifies requests with API Priority and Fairness, and
// lifts l's limit if it does. A server that does not answer keeps it.
func probeAPF(cfg *rest.Config, l *serverThrottled) {
	probe := rest.CopyConfig(cfg)
	probe.RateLimiter, probe.Timeout = nil, apfProbeTimeout
	client, err := rest.HTTPClientFor(probe)
	if err != nil {
		return
	}
	base, _, err := rest.DefaultServerUrlFor(probe)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), apfProbeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base.JoinPath("livez", "ping").String(), nil)
	if err != nil {
		return
	}
	resp, err := client.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	if resp.Header.Get(headerFlowSchema) != "" || resp.Header.Get(headerPriorityLevel) != "" {
		l.apf.Store(true)
	}
}
