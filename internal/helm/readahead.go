package helm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"helm.sh/helm/v4/pkg/kube"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
)

// readAheadWindow is how many GETs of the objects a scan asks next are in
// flight ahead of it, at most.
const readAheadWindow = 16

// listFrom is the number of a Build's objects of one kind in one
// namespace from which what a scan reads of them is read with one list of
// the kind there (pages of listPageSize), not a GET each: a list costs the
// API server about what a few GETs do. A list that goes on past
// listBeyond times as many objects as the Build's (a namespace full of
// others) is given up, and the objects it did not reach are read one by one.
const (
	listFrom     = 16
	listPageSize = 500
	listBeyond   = 4
)

// readAheadTimeout bounds a GET or list sent ahead of the reads it
// answers, whose own context may end when the GET that prompted it returns.
const readAheadTimeout = time.Minute

// readAhead answers the GETs Helm sends one object after another (the
// adoption or conflict check of an install, the ownership check of an
// uninstall: 1,000 objects took 1.5 s so) with GETs sent ahead, in
// parallel, in the objects' order. It sits in the transport of a Client's
// every Kubernetes request, and learns the objects' order from Build: once
// a GET asks for the object after the one asked last, the next
// readAheadWindow objects are asked for at once (those of a kind the Build
// has listFrom or more of in a namespace, by one list of them), and each
// answer is kept for the GET of that object, once.
//
// An answer is never given but to the GET a sequential scan sends next,
// with the same headers, and only while no request other than a GET went
// through the Client since it was asked for: it is the answer the scan's
// own GET would have had a moment later. A GET out of order, or any write,
// drops what was read ahead. An update's reads, which come in parallel
// parts between its writes, are answered under rules of their own
// (updating). GETs of anything else pass through untouched.
type readAhead struct {
	mu sync.Mutex
	// epoch counts the writes; what was read in an older epoch is stale.
	epoch uint64
	// objects is, by host and path, where each built object is in the
	// newest Build that had it.
	objects map[string]builtAt
	// writes counts the starts and ends of writes; written is, by host
	// and path (an object's, or a kind's in a namespace for a create), the
	// count at the last start or end of a write there.
	writes  uint64
	written map[string]uint64
	// writing counts the writes under way, by the same keys.
	writing map[string]int
	// window is the update under way, if any.
	window *updateWindow
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
	// listed is, by index, the group of objects read by one list, if any.
	listed []*listGroup
	// epoch is the readAhead's when next and ahead were last true.
	epoch uint64
	// next is the index a sequential scan asks next; -1 for none.
	next int
	// scheduled is the highest index read ahead.
	scheduled int
	ahead     map[int]*readAnswer
}

// readAnswer is the answer to one GET sent ahead, or to be found in a
// list (listing, name); done closes when it is in.
type readAnswer struct {
	done   chan struct{}
	header http.Header // of the request
	resp   *http.Response
	body   []byte
	err    error

	listing *listing
	name    string
}

// listGroup is a Build's objects of one kind in one namespace, listFrom or
// more, read by one list.
type listGroup struct {
	// collection is the host and path of the kind in the namespace.
	collection string
	gvk        schema.GroupVersionKind
	resource   schema.GroupResource
	names      map[string]bool
	// listing is the list of the scan's epoch; nil before it is sent.
	listing *listing
	// updateListing is the list of the update under way.
	updateListing *listing
}

// listing is one list of a listGroup's kind; done closes when it is in.
type listing struct {
	done chan struct{}
	// objects are the group's objects found, by name, each as a GET of
	// it answers (with its kind and apiVersion).
	objects map[string][]byte
	header  http.Header // of the list's response
	// complete: the list reached its end, so what it did not find does
	// not exist.
	complete bool
	err      error
	resource schema.GroupResource
	// header0 is the header of the request it was sent for; sent, the
	// readAhead's writes when it was.
	header0 http.Header
	sent    uint64
}

func newReadAhead() *readAhead {
	return &readAhead{objects: map[string]builtAt{}, written: map[string]uint64{}, writing: map[string]int{}}
}

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
	s.urls, s.listed = objectURLs(list)
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

// objectURLs are the host and path of each object of list with a REST
// client, and the group each is listed with: nil for a kind the list has
// fewer than listFrom of in the namespace.
func objectURLs(list kube.ResourceList) (urls []string, listed []*listGroup) {
	groups := map[string]*listGroup{}
	for _, info := range list {
		if info.Client == nil || info.Mapping == nil || info.Name == "" {
			continue
		}
		u := info.Client.Get().
			NamespaceIfScoped(info.Namespace, info.Mapping.Scope.Name() == meta.RESTScopeNameNamespace).
			Resource(info.Mapping.Resource.Resource).
			Name(info.Name).
			URL()
		collection := strings.TrimSuffix(u.Host+u.Path, "/"+info.Name)
		g := groups[collection]
		if g == nil {
			g = &listGroup{collection: collection, gvk: info.Mapping.GroupVersionKind, resource: info.Mapping.Resource.GroupResource(), names: map[string]bool{}}
			groups[collection] = g
		}
		g.names[info.Name] = true
		urls = append(urls, u.Host+u.Path)
		listed = append(listed, g)
	}
	for i, g := range listed {
		if len(g.names) < listFrom {
			listed[i] = nil
		}
	}
	return urls, listed
}

// updating opens, until the function it returns is called, a window in
// which Helm's read of each of targets before it writes it (an update:
// parts at once, each reading then writing its objects in turn) is
// answered, in any order, by one list of each kind targets have listFrom
// or more of in a namespace. An answer goes to the first read of its
// object, and only while nothing was written to that object (nor created
// in its kind and namespace) through the client since the list was sent:
// the update's writes of the other objects do not change whether it
// exists, which is all Helm reads it for.
func (r *readAhead) updating(targets kube.ResourceList) func() {
	urls, listed := objectURLs(targets)
	w := &updateWindow{groups: map[string]*listGroup{}, served: map[string]bool{}}
	for i, u := range urls {
		if listed[i] != nil {
			w.groups[u] = listed[i]
		}
	}
	r.mu.Lock()
	r.window = w
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		if r.window == w {
			r.window = nil
		}
		r.mu.Unlock()
	}
}

// updateWindow is the objects of an update under way read by lists.
type updateWindow struct {
	groups map[string]*listGroup // by object host and path
	served map[string]bool
}

// readAheadTransport is the transport of one REST client, through r.
type readAheadTransport struct {
	r    *readAhead
	next http.RoundTripper
}

func (t readAheadTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		key := t.r.writtenKey(req)
		t.r.write(key, 1)
		defer t.r.write(key, -1) // what was asked while it was under way is stale too
		return t.next.RoundTrip(req)
	}
	if req.Method != http.MethodGet || req.URL.RawQuery != "" {
		return t.next.RoundTrip(req)
	}
	if answer := t.r.askUpdate(req, t.next); answer != nil {
		select {
		case <-answer.done:
		case <-req.Context().Done():
			return nil, fmt.Errorf("waiting for the list of %s: %w", req.URL.Path, req.Context().Err())
		}
		if t.r.unwritten(req.URL, answer.listing) {
			if resp, ok := answer.listing.answer(req, answer.name); ok {
				return resp, nil
			}
		}
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
	if answer.listing != nil {
		if resp, ok := answer.listing.answer(req, answer.name); ok {
			return resp, nil
		}
		return t.next.RoundTrip(req)
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

// write drops everything read ahead of a scan, and records the start
// (delta 1) or end (-1) of a write to key for the update under way.
func (r *readAhead) write(key string, delta int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.epoch++
	r.writes++
	r.written[key] = r.writes
	if r.writing[key] += delta; r.writing[key] == 0 {
		delete(r.writing, key)
	}
}

// writtenKey is the host and path of what req writes: the object its URL
// names, or, while an update is under way, the object a create (POST to
// its kind's path) names in its JSON body; the kind's path when the body
// names none. Outside an update nothing tells objects apart, and a body
// (a release record of megabytes) is not read.
func (r *readAhead) writtenKey(req *http.Request) string {
	key := req.URL.Host + req.URL.Path
	r.mu.Lock()
	updating := r.window != nil
	r.mu.Unlock()
	if !updating || req.Method != http.MethodPost || req.GetBody == nil || !strings.HasPrefix(req.Header.Get("Content-Type"), "application/json") {
		return key
	}
	body, err := req.GetBody()
	if err != nil {
		return key
	}
	defer body.Close()
	var object struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := json.NewDecoder(body).Decode(&object); err != nil || object.Metadata.Name == "" {
		return key
	}
	return key + "/" + object.Metadata.Name
}

// askUpdate returns the answer of the update under way for req, nil when
// it has none; the first read of a kind's object sends the list.
func (r *readAhead) askUpdate(req *http.Request, next http.RoundTripper) *readAnswer {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.window
	if w == nil {
		return nil
	}
	object := req.URL.Host + req.URL.Path
	g := w.groups[object]
	if g == nil || w.served[object] {
		return nil
	}
	w.served[object] = true
	if g.updateListing == nil {
		g.updateListing = g.list(req, next)
		g.updateListing.sent = r.writes
	}
	l := g.updateListing
	if !r.unwrittenLocked(object, g.collection, l) || !headersEqual(l.header0, req.Header) {
		return nil
	}
	return &readAnswer{done: l.done, listing: l, name: object[len(g.collection)+1:]}
}

// unwritten reports whether nothing was written to the object of u, nor
// created in its kind and namespace, since l was sent.
func (r *readAhead) unwritten(u *url.URL, l *listing) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	object := u.Host + u.Path
	return r.unwrittenLocked(object, object[:strings.LastIndex(object, "/")], l)
}

func (r *readAhead) unwrittenLocked(object, collection string, l *listing) bool {
	for _, key := range []string{object, collection} {
		if r.written[key] > l.sent || r.writing[key] > 0 {
			return false
		}
	}
	return true
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
		for _, g := range s.listed {
			if g != nil {
				g.listing = nil
			}
		}
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
		if g := s.listed[i]; g != nil {
			if g.listing == nil {
				g.listing = g.list(req, next)
			}
			s.ahead[i] = &readAnswer{done: g.listing.done, header: req.Header.Clone(), listing: g.listing, name: s.urls[i][len(g.collection)+1:]}
		} else {
			s.ahead[i] = r.send(req, s.urls[i], next)
		}
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

// list lists g's kind in its namespace, in the background, with the
// headers of req (a GET of one of g's objects), in pages, keeping g's
// objects.
func (g *listGroup) list(req *http.Request, next http.RoundTripper) *listing {
	l := &listing{done: make(chan struct{}), objects: map[string][]byte{}, resource: g.resource, header0: req.Header.Clone()}
	apiVersion, kind := g.gvk.ToAPIVersionAndKind()
	typeMeta := map[string]json.RawMessage{}
	for k, v := range map[string]string{"apiVersion": apiVersion, "kind": kind} {
		typeMeta[k], _ = json.Marshal(v) // a string
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(req.Context()), readAheadTimeout)
	go func() {
		defer close(l.done)
		defer cancel()
		seen, cont := 0, ""
		for seen <= max(listPageSize, listBeyond*len(g.names)) {
			page, header, err := g.page(ctx, req, next, cont)
			if err != nil {
				l.err = err
				return
			}
			l.header = header
			for _, item := range page.Items {
				name, object, err := asObject(item, typeMeta)
				if err != nil {
					l.err = fmt.Errorf("reading %s: %w", g.collection, err)
					return
				}
				if g.names[name] {
					l.objects[name] = object
				}
			}
			seen += len(page.Items)
			if cont = page.Metadata.Continue; cont == "" {
				l.complete = true
				return
			}
		}
	}()
	return l
}

// asObject is a list's item as a GET of it answers, with its apiVersion
// and kind (typeMeta), which a list's items may leave out, and its name.
func asObject(item json.RawMessage, typeMeta map[string]json.RawMessage) (string, []byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(item, &fields); err != nil {
		return "", nil, err
	}
	var meta struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(fields["metadata"], &meta); err != nil {
		return "", nil, err
	}
	maps.Copy(fields, typeMeta)
	object, err := json.Marshal(fields)
	return meta.Name, object, err
}

// listPage is a page of a list.
type listPage struct {
	Metadata struct {
		Continue string `json:"continue"`
	} `json:"metadata"`
	Items []json.RawMessage `json:"items"`
}

// page sends the list request of g after cont.
func (g *listGroup) page(ctx context.Context, req *http.Request, next http.RoundTripper, cont string) (*listPage, http.Header, error) {
	listReq := req.Clone(ctx)
	u := *req.URL
	u.Path, u.RawPath = g.collection[len(u.Host):], ""
	q := url.Values{"limit": {strconv.Itoa(listPageSize)}}
	if cont != "" {
		q.Set("continue", cont)
	}
	u.RawQuery = q.Encode()
	listReq.URL = &u
	resp, err := next.RoundTrip(listReq)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return nil, nil, fmt.Errorf("listing %s: %s", g.collection, resp.Status)
	}
	var page listPage
	if err := json.Unmarshal(body, &page); err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", g.collection, err)
	}
	return &page, resp.Header, nil
}

// answer is what a GET of the object name (req) has from l: the object, or
// the API server's not found when l is complete; ok false when l cannot
// tell.
func (l *listing) answer(req *http.Request, name string) (*http.Response, bool) {
	if l.err != nil {
		return nil, false
	}
	body, found := l.objects[name]
	status := http.StatusOK
	if !found {
		if !l.complete {
			return nil, false
		}
		notFound := apierrors.NewNotFound(l.resource, name).Status()
		notFound.APIVersion, notFound.Kind = "v1", "Status"
		var err error
		if body, err = json.Marshal(&notFound); err != nil {
			return nil, false
		}
		status = http.StatusNotFound
	}
	header := l.header.Clone()
	header.Del("Content-Length")
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", status, http.StatusText(status)),
		StatusCode:    status,
		Proto:         "HTTP/2.0",
		ProtoMajor:    2,
		Header:        header,
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}, true
}
