package kube

import (
	"io"
	"net/http"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
)

// MaxInFlight is how many requests the clients of one configuration have
// open at once, each until its response is read or closed; watches and
// followed logs are not counted. Go's HTTP/2 client dials a new
// connection, with its TLS handshake, for every request over the server's
// concurrent-stream limit (100 on kube-apiserver) and keeps one of them:
// Helm creates and deletes all the objects of a kind at once, which for a
// release of 1,000 objects cost some 2,000 handshakes on each side.
const MaxInFlight = 32

// LimitInFlight makes cfg's clients, and those of its copies, share one
// limit of MaxInFlight requests at once.
func LimitInFlight(cfg *rest.Config) {
	limitInFlight(cfg, make(chan struct{}, MaxInFlight))
}

// serverSlots are the limits of LimitInFlightPerServer, by API server.
var serverSlots sync.Map // host → chan struct{}

// LimitInFlightPerServer makes cfg's clients share one limit of
// MaxInFlight requests at once with those of every configuration of the
// same API server (cfg.Host) limited this way in the process: the
// releases whose kubeconfig is read from a Secret each build their own
// configuration, and N releases on one cluster must not open N times the
// limit.
func LimitInFlightPerServer(cfg *rest.Config) {
	slots, _ := serverSlots.LoadOrStore(strings.TrimSuffix(cfg.Host, "/"), make(chan struct{}, MaxInFlight))
	limitInFlight(cfg, slots.(chan struct{}))
}

func limitInFlight(cfg *rest.Config, slots chan struct{}) {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &inFlight{next: rt, slots: slots} })
}

// inFlight holds a request until one of slots is free, and frees it when
// the request's stream ends: its response read to the end or closed, or no
// response.
type inFlight struct {
	next  http.RoundTripper
	slots chan struct{}
}

func (t *inFlight) RoundTrip(req *http.Request) (*http.Response, error) {
	if q := req.URL.Query(); q.Get("watch") == "true" || q.Get("follow") == "true" {
		return t.next.RoundTrip(req)
	}
	select {
	case t.slots <- struct{}{}:
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	var once sync.Once
	release := func() { once.Do(func() { <-t.slots }) }
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.Body == nil || resp.StatusCode == http.StatusSwitchingProtocols {
		// An upgraded connection's body is the connection (it writes too).
		release()
		return resp, err
	}
	resp.Body = &releasingBody{ReadCloser: resp.Body, release: release}
	return resp, nil
}

// WrappedRoundTripper lets client-go reach the transport below.
func (t *inFlight) WrappedRoundTripper() http.RoundTripper { return t.next }

// releasingBody calls release once it is read to the end or closed.
type releasingBody struct {
	io.ReadCloser
	release func()
}

func (b *releasingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.release()
	}
	return n, err
}

func (b *releasingBody) Close() error {
	defer b.release()
	return b.ReadCloser.Close()
}
