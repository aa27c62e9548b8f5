package helm

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"helm.sh/helm/v4/pkg/kube"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
)

// readAheadWindow is how many GETs of the objects a scan asks next are in
// flight ahead of it, at most.
const readAheadWindow = 16

// readAheadTimeout bounds a GET sent ahead of the scan that will ask for
// it, whose own context may end when the GET that prompted it returns.
const readAheadTimeout = time.Minute

// readAhead answers the GETs Helm sends one object after another (the
// adoption or conflict check of an install, the ownership check of an
// uninstall: 1,000 objects took 1.5 s so) with GETs sent ahead, in
// parallel, in the objects' order. It sits in the transport of a Client's
// every Kubernetes request, and learns the objects' order from Build: once
// a GET asks for the object after the one asked last, the next
// readAheadWindow objects are asked for at once, and each answer is kept
// for the GET of that object, once.
//
// An answer is never given but to the GET a sequential scan sends next,
// with the same headers, and only while no request other than a GET went
// through the Client since it was asked for: it is the answer the scan's
// own GET would have had a moment later. A GET out of order, or any write,
// drops what was read ahead. GETs of anything else pass through untouched.
type readAhead struct {
	mu sync.Mutex
	// epoch counts the writes; what was read in an older epoch is stale.
	epoch uint64
	// objects is, by host and path, where each built object is in the
	// newest Build that had it.
	objects map[string]builtAt
}

// builtAt is an object's place in the list of one Build.
type builtAt struct {
	scan  *scan
	index int
}

// scan is the objects of one Build, in order, and what was read ahead of
// a sequential scan of them.
type scan struct {
	urls []string
	// epoch is the readAhead's when next and ahead were last true.
	epoch uint64
	// next is the index a sequential scan asks next; -1 for none.
	next int
	// scheduled is the highest index read ahead.
	scheduled int
	ahead     map[int]*readAnswer
}

// readAnswer is the answer to one GET sent ahead; done closes when it is in.
type readAnswer struct {
	done   chan struct{}
	header http.Header // of the request
	resp   *http.Response
	body   []byte
	err    error
}

func newReadAhead() *readAhead { return &readAhead{objects: map[string]builtAt{}} }

// getter is g with its requests going through r.
func (r *readAhead) getter(g genericclioptions.RESTClientGetter) genericclioptions.RESTClientGetter {
	return readAheadGetter{RESTClientGetter: g, r: r}
}

// readAheadGetter is a getter whose REST configurations send through its
// readAhead.
type readAheadGetter struct {
	genericclioptions.RESTClientGetter
	r *readAhead
}

func (g readAheadGetter) ToRESTConfig() (*rest.Config, error) {
	cfg, err := g.RESTClientGetter.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return readAheadTransport{r: g.r, next: rt} })
	return cfg, nil
}

// built records the order of list, the objects a Build made; objects
// without a REST client are left out.
func (r *readAhead) built(list kube.ResourceList) {
	s := &scan{next: -1, scheduled: -1}
	for _, info := range list {
		if info.Client == nil || info.Mapping == nil || info.Name == "" {
			continue
		}
		u := info.Client.Get().
			NamespaceIfScoped(info.Namespace, info.Mapping.Scope.Name() == meta.RESTScopeNameNamespace).
			Resource(info.Mapping.Resource.Resource).
			Name(info.Name).
			URL()
		s.urls = append(s.urls, u.Host+u.Path)
	}
	if len(s.urls) < 2 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s.epoch = r.epoch
	for i, u := range s.urls {
		r.objects[u] = builtAt{scan: s, index: i}
	}
}

// readAheadTransport is the transport of one REST client, through r.
type readAheadTransport struct {
	r    *readAhead
	next http.RoundTripper
}

func (t readAheadTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		t.r.write()
		defer t.r.write() // what was asked while it was under way is stale too
		return t.next.RoundTrip(req)
	}
	if req.Method != http.MethodGet || req.URL.RawQuery != "" {
		return t.next.RoundTrip(req)
	}
	answer := t.r.ask(req, t.next)
	if answer == nil {
		return t.next.RoundTrip(req)
	}
	select {
	case <-answer.done:
	case <-req.Context().Done():
		return nil, fmt.Errorf("waiting for the GET sent ahead of %s: %w", req.URL.Path, req.Context().Err())
	}
	if answer.err != nil {
		return t.next.RoundTrip(req) // ask again, as the scan would have
	}
	resp := *answer.resp
	resp.Header = answer.resp.Header.Clone()
	resp.Body = io.NopCloser(bytes.NewReader(answer.body))
	resp.ContentLength = int64(len(answer.body))
	resp.Request = req
	return &resp, nil
}

// write drops everything read ahead.
func (r *readAhead) write() {
	r.mu.Lock()
	r.epoch++
	r.mu.Unlock()
}

// ask returns the answer read ahead for req, nil when there is none; a GET
// that follows the one before it in its Build's order reads ahead of it.
func (r *readAhead) ask(req *http.Request, next http.RoundTripper) *readAnswer {
	r.mu.Lock()
	defer r.mu.Unlock()
	at, ok := r.objects[req.URL.Host+req.URL.Path]
	if !ok {
		return nil
	}
	s := at.scan
	if s.epoch != r.epoch {
		s.epoch, s.next, s.scheduled, s.ahead = r.epoch, -1, -1, nil
	}
	sequential := s.next == at.index
	s.next = at.index + 1
	if !sequential {
		s.scheduled, s.ahead = at.index, nil
		return nil
	}
	answer := s.ahead[at.index]
	delete(s.ahead, at.index)
	if answer != nil && !headersEqual(answer.header, req.Header) {
		answer = nil
	}
	// Keep readAheadWindow GETs ahead of the scan.
	for i := max(s.scheduled+1, at.index+1); i < len(s.urls) && i <= at.index+readAheadWindow; i++ {
		if s.ahead == nil {
			s.ahead = map[int]*readAnswer{}
		}
		s.ahead[i] = r.send(req, s.urls[i], next)
		s.scheduled = i
	}
	return answer
}

// send sends a GET like req for the object at hostPath, in the background.
func (r *readAhead) send(req *http.Request, hostPath string, next http.RoundTripper) *readAnswer {
	a := &readAnswer{done: make(chan struct{}), header: req.Header.Clone()}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(req.Context()), readAheadTimeout)
	ahead := req.Clone(ctx)
	u := *req.URL
	u.Path, u.RawPath = hostPath[len(u.Host):], ""
	ahead.URL = &u
	go func() {
		defer close(a.done)
		defer cancel()
		resp, err := next.RoundTrip(ahead)
		if err != nil {
			a.err = err
			return
		}
		defer resp.Body.Close()
		if a.body, a.err = io.ReadAll(resp.Body); a.err == nil {
			a.resp = resp
		}
	}()
	return a
}

// headersEqual reports whether a and b have the same fields and values.
func headersEqual(a, b http.Header) bool { return maps.EqualFunc(a, b, slices.Equal[[]string]) }
