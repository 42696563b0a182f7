package measure

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Verbs in the order request tables list them. A watch is a GET with ?watch=true, counted when it
// is opened (it is a long-running request, not a write); "discovery" is every GET outside a
// resource path (/version, /api, /apis, /openapi/...).
var Verbs = []string{"get", "list", "watch", "discovery", "create", "update", "patch (apply)", "patch", "delete", "deletecollection"}

// Request is one HTTP request a client sent to an API server, classified like the API server's
// audit log does: verb, resource (with subresource), namespace and name.
type Request struct {
	Server    string // the name the counter was given for this API server
	Method    string
	Verb      string
	Resource  string // e.g. "configmaps", "clusterservicestatuses/status", or the path for discovery
	Namespace string
	Name      string
	DryRun    bool  // the query has a dryRun parameter: the API server persists nothing
	Code      int   // response status code, 0 if the request failed without one
	Bytes     int64 // request body size (Content-Length; -1 if unknown)
}

// Mutating reports whether the request's method can change state (POST, PUT, PATCH, DELETE).
// A dry run still counts: it is reported, not filtered out.
func (r Request) Mutating() bool {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// Review reports whether the request creates a review (SelfSubjectReview, SubjectAccessReview,
// TokenReview, ...): a POST the API server answers without persisting anything. It is still a
// mutating request for counting; this only lets a report say what it was.
func (r Request) Review() bool {
	return r.Method == http.MethodPost && strings.HasSuffix(r.Resource, "reviews")
}

// String is e.g. "PATCH configmaps bench-target/config-001 (apply) -> 200".
func (r Request) String() string {
	obj := r.Name
	if r.Namespace != "" {
		obj = r.Namespace + "/" + r.Name
	}
	s := fmt.Sprintf("%s %s %s", r.Method, r.Resource, obj)
	if r.DryRun {
		s += " dryRun"
	}
	return fmt.Sprintf("%s -> %d", strings.TrimSpace(s), r.Code)
}

// RequestCounter counts the requests that pass through the round trippers it wraps, per API
// server and verb, and keeps every mutating request. It also adds up the bytes of the request
// bodies (their Content-Length) and of the response bodies as the client reads them (after any
// gzip decoding by the transport), per server and verb: a watch's bytes are those of the events
// read in the window, whenever it was opened. Counts are per window: Reset starts a new one. It
// is safe for concurrent use.
type RequestCounter struct {
	mu       sync.Mutex
	counts   map[string]map[string]int // server -> verb -> n
	sentB    map[string]map[string]int64
	readB    map[string]map[string]int64
	requests map[string]map[RequestKind]int
	errors   map[string]map[int]int // server -> status code (>= 400, 0 if none) -> n
	spans    map[string]map[string]*Span
	mutating []Request
	last     time.Time
	// traced, while tracing (Trace), gets every request sent, with when it was sent and when its
	// response headers came.
	traced *[]TracedRequest
}

// TracedRequest is one request seen while tracing: sent at Sent, answered (response headers, or
// the error) at Answered.
type TracedRequest struct {
	Request
	Sent, Answered time.Time
}

// Trace starts keeping every request sent from now on; the returned func stops and returns them,
// in the order they were answered.
func (c *RequestCounter) Trace() func() []TracedRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	traced := &[]TracedRequest{}
	c.traced = traced
	return func() []TracedRequest {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.traced == traced {
			c.traced = nil
		}
		return *traced
	}
}

// Span is when the requests for one resource were sent during a window.
type Span struct {
	N           int
	First, Last time.Time
}

// Rate is the requests per second over the span (0 for fewer than two requests).
func (s Span) Rate() float64 {
	d := s.Last.Sub(s.First).Seconds()
	if s.N < 2 || d <= 0 {
		return 0
	}
	return float64(s.N-1) / d
}

// NewRequestCounter returns an empty counter.
func NewRequestCounter() *RequestCounter {
	c := &RequestCounter{}
	c.Reset()
	return c
}

// Wrap returns a round tripper that counts requests to the API server called server.
func (c *RequestCounter) Wrap(server string, next http.RoundTripper) http.RoundTripper {
	return &countingTransport{server: server, c: c, next: next}
}

// Reset starts a new window and returns the counts of the one that ends.
func (c *RequestCounter) Reset() RequestCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := RequestCounts{Counts: c.counts, Requests: c.requests, Errors: c.errors, Spans: c.spans, Mutating: c.mutating,
		BytesSent: c.sentB, BytesRead: c.readB}
	c.counts, c.requests, c.errors, c.spans, c.mutating = map[string]map[string]int{}, map[string]map[RequestKind]int{}, map[string]map[int]int{}, map[string]map[string]*Span{}, nil
	c.sentB, c.readB = map[string]map[string]int64{}, map[string]map[string]int64{}
	return out
}

// Count is the number of requests of verb sent so far in this window to servers.
func (c *RequestCounter) Count(verb string, servers ...string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, s := range servers {
		n += c.counts[s][verb]
	}
	return n
}

// Last is when the latest request was sent or answered, over every server.
func (c *RequestCounter) Last() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// WaitQuiet waits until no request has been sent or answered for quiet, or until timeout has
// passed; it reports whether it got its quiet period.
func (c *RequestCounter) WaitQuiet(quiet, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		since := time.Since(c.Last())
		if since >= quiet {
			return true
		}
		if time.Now().Add(quiet - since).After(deadline) {
			time.Sleep(time.Until(deadline))
			return time.Since(c.Last()) >= quiet
		}
		time.Sleep(quiet - since)
	}
}

func (c *RequestCounter) sent(r Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	byVerb := c.counts[r.Server]
	if byVerb == nil {
		byVerb = map[string]int{}
		c.counts[r.Server] = byVerb
	}
	byVerb[r.Verb]++
	kinds := c.requests[r.Server]
	if kinds == nil {
		kinds = map[RequestKind]int{}
		c.requests[r.Server] = kinds
	}
	kinds[RequestKind{Method: r.Method, Verb: r.Verb, Resource: r.Resource}]++
	if r.Bytes > 0 {
		addBytes(c.sentB, r.Server, r.Verb, r.Bytes)
	}
	c.last = time.Now()
	if r.Verb == "list" || r.Verb == "watch" || r.Verb == "discovery" {
		return // spans show per-object work: gets and writes
	}
	spans := c.spans[r.Server]
	if spans == nil {
		spans = map[string]*Span{}
		c.spans[r.Server] = spans
	}
	sp := spans[r.Resource]
	if sp == nil {
		sp = &Span{First: c.last}
		spans[r.Resource] = sp
	}
	sp.N++
	sp.Last = c.last
}

func (c *RequestCounter) answered(r Request, sent time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.traced != nil {
		*c.traced = append(*c.traced, TracedRequest{Request: r, Sent: sent, Answered: time.Now()})
	}
	if r.Code == 0 || r.Code >= 400 {
		if c.errors[r.Server] == nil {
			c.errors[r.Server] = map[int]int{}
		}
		c.errors[r.Server][r.Code]++
	}
	if r.Mutating() {
		c.mutating = append(c.mutating, r)
	}
	c.last = time.Now()
}

// read adds n bytes of a response body read; it does not count as activity for WaitQuiet (a
// watch's events are not requests).
func (c *RequestCounter) read(server, verb string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	addBytes(c.readB, server, verb, int64(n))
}

func addBytes(m map[string]map[string]int64, server, verb string, n int64) {
	if m[server] == nil {
		m[server] = map[string]int64{}
	}
	m[server][verb] += n
}

// RequestKind is a request's method, verb and resource (the path, for discovery).
type RequestKind struct{ Method, Verb, Resource string }

// IsProbe tells the Cluster controller's health probe: GET /version and POST selfsubjectreviews.
func IsProbe(k RequestKind) bool {
	return (k.Method == http.MethodGet && k.Resource == "/version") ||
		(k.Method == http.MethodPost && k.Resource == "selfsubjectreviews")
}

// RequestCounts are the counts of one window.
type RequestCounts struct {
	Counts   map[string]map[string]int      // server -> verb -> n
	Requests map[string]map[RequestKind]int // server -> kind of request -> n
	Errors   map[string]map[int]int         // server -> status code >= 400 (0: no response) -> n
	Spans    map[string]map[string]*Span    // server -> resource -> when its gets and writes were sent
	Mutating []Request                      // every POST, PUT, PATCH and DELETE, in answer order
	// BytesSent are the request bodies' bytes (Content-Length), BytesRead the response bodies'
	// bytes read in the window: server -> verb -> bytes.
	BytesSent, BytesRead map[string]map[string]int64
}

// Bytes adds up a BytesSent or BytesRead map's bytes for server, over every verb.
func Bytes(m map[string]map[string]int64, server string) int64 {
	var n int64
	for _, b := range m[server] {
		n += b
	}
	return n
}

// Total is the number of requests sent to server.
func (rc RequestCounts) Total(server string) int {
	n := 0
	for _, v := range rc.Counts[server] {
		n += v
	}
	return n
}

// MutatingTo returns the mutating requests sent to server.
func (rc RequestCounts) MutatingTo(server string) []Request {
	var out []Request
	for _, r := range rc.Mutating {
		if r.Server == server {
			out = append(out, r)
		}
	}
	return out
}

// Table renders the counts with one row per verb seen and one column per server, then totals,
// error responses, mutating requests and, of those, dry runs.
func (rc RequestCounts) Table(servers ...string) *Table {
	t := NewTable(append([]string{"requests"}, servers...)...)
	verbs := slices.Clone(Verbs)
	for _, s := range servers {
		for v := range rc.Counts[s] {
			if !slices.Contains(verbs, v) {
				verbs = append(verbs, v)
			}
		}
	}
	for _, v := range verbs {
		row := []string{v}
		seen := false
		for _, s := range servers {
			n := rc.Counts[s][v]
			seen = seen || n > 0
			row = append(row, fmt.Sprint(n))
		}
		if seen {
			t.Row(row...)
		}
	}
	total, errs, mut, dry := []string{"**total**"}, []string{"responses >= 400"}, []string{"**mutating (POST/PUT/PATCH/DELETE)**"}, []string{"of which dryRun"}
	for _, s := range servers {
		total = append(total, fmt.Sprint(rc.Total(s)))
		errs = append(errs, errorCell(rc.Errors[s]))
		m := rc.MutatingTo(s)
		n := 0
		for _, r := range m {
			if r.DryRun {
				n++
			}
		}
		mut = append(mut, fmt.Sprint(len(m)))
		dry = append(dry, fmt.Sprint(n))
	}
	t.Row(total...)
	t.Row(errs...)
	t.Row(mut...)
	t.Row(dry...)
	return t
}

// MutatingTable groups the mutating requests by server, method, verb, resource and status code,
// with one example object each, so that every write is accounted for.
func (rc RequestCounts) MutatingTable() *Table {
	type group struct {
		server, method, verb, resource string
		dryRun                         bool
		code                           int
	}
	counts := map[group]int{}
	bytes := map[group]int64{}
	example := map[group]string{}
	var order []group
	for _, r := range rc.Mutating {
		g := group{r.Server, r.Method, r.Verb, r.Resource, r.DryRun, r.Code}
		if _, ok := counts[g]; !ok {
			order = append(order, g)
			obj := r.Name
			if r.Namespace != "" {
				obj = r.Namespace + "/" + r.Name
			}
			example[g] = obj
		}
		counts[g]++
		bytes[g] += max(r.Bytes, 0)
	}
	slices.SortStableFunc(order, func(a, b group) int { return strings.Compare(a.server, b.server) })
	t := NewTable("server", "method", "verb", "resource", "dryRun", "status", "count", "request bytes", "e.g.")
	for _, g := range order {
		t.Row(g.server, g.method, g.verb, g.resource, fmt.Sprint(g.dryRun), fmt.Sprint(g.code), fmt.Sprint(counts[g]), fmt.Sprint(bytes[g]), example[g])
	}
	return t
}

// RateTable shows, per resource (rows) and server (columns), how many gets and writes were sent
// and over how long (lists, watches and discovery are left out): a steady rate across many
// requests points at a client-side rate limit.
func (rc RequestCounts) RateTable(servers ...string) *Table {
	var resources []string
	for _, s := range servers {
		for r := range rc.Spans[s] {
			if !slices.Contains(resources, r) {
				resources = append(resources, r)
			}
		}
	}
	slices.SortFunc(resources, func(a, b string) int {
		return rc.firstSent(a, servers).Compare(rc.firstSent(b, servers))
	})
	t := NewTable(append([]string{"resource (gets and writes, in order of first request)"}, servers...)...)
	for _, r := range resources {
		row := []string{r}
		for _, s := range servers {
			sp := rc.Spans[s][r]
			switch {
			case sp == nil:
				row = append(row, "")
			case sp.N < 2:
				row = append(row, fmt.Sprint(sp.N))
			default:
				row = append(row, fmt.Sprintf("%d in %.1f s (%.0f/s)", sp.N, sp.Last.Sub(sp.First).Seconds(), sp.Rate()))
			}
		}
		t.Row(row...)
	}
	return t
}

func (rc RequestCounts) firstSent(resource string, servers []string) time.Time {
	var first time.Time
	for _, s := range servers {
		if sp := rc.Spans[s][resource]; sp != nil && (first.IsZero() || sp.First.Before(first)) {
			first = sp.First
		}
	}
	return first
}

// errorCell is e.g. "1000 (404: 1000)".
func errorCell(codes map[int]int) string {
	n := 0
	var keys []int
	for c, k := range codes {
		n += k
		keys = append(keys, c)
	}
	if n == 0 {
		return "0"
	}
	slices.Sort(keys)
	var parts []string
	for _, c := range keys {
		parts = append(parts, fmt.Sprintf("%d: %d", c, codes[c]))
	}
	return fmt.Sprintf("%d (%s)", n, strings.Join(parts, ", "))
}

type countingTransport struct {
	server string
	c      *RequestCounter
	next   http.RoundTripper
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := Classify(req.Method, req.URL, req.Header.Get("Content-Type"))
	r.Server = t.server
	r.Bytes = req.ContentLength
	t.c.sent(r)
	sent := time.Now()
	resp, err := t.next.RoundTrip(req)
	if resp != nil {
		r.Code = resp.StatusCode
		if resp.Body != nil {
			resp.Body = &countingBody{ReadCloser: resp.Body, c: t.c, server: t.server, verb: r.Verb}
		}
	}
	t.c.answered(r, sent)
	return resp, err
}

// countingBody counts the bytes read from a response body.
type countingBody struct {
	io.ReadCloser
	c            *RequestCounter
	server, verb string
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.c.read(b.server, b.verb, n)
	}
	return n, err
}

// Classify names the verb, resource, namespace and name of a request to a Kubernetes API server
// from its method, URL and content type.
func Classify(method string, u *url.URL, contentType string) Request {
	r := Request{Method: method, Resource: u.Path}
	q := u.Query()
	_, r.DryRun = q["dryRun"]
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	var rest []string
	switch {
	case len(segs) > 2 && segs[0] == "api":
		rest = segs[2:] // /api/v1/...
	case len(segs) > 3 && segs[0] == "apis":
		rest = segs[3:] // /apis/group/version/...
	}
	if len(rest) >= 3 && rest[0] == "namespaces" && !(len(rest) == 3 && (rest[2] == "status" || rest[2] == "finalize")) {
		r.Namespace, rest = rest[1], rest[2:]
	}
	if len(rest) > 0 {
		r.Resource = rest[0]
		if len(rest) > 1 {
			r.Name = rest[1]
		}
		if len(rest) > 2 {
			r.Resource += "/" + strings.Join(rest[2:], "/")
		}
	}
	switch method {
	case http.MethodGet, http.MethodHead:
		switch {
		case len(rest) == 0:
			r.Verb = "discovery"
		case q.Get("watch") == "true" || q.Get("watch") == "1":
			r.Verb = "watch"
		case r.Name == "":
			r.Verb = "list"
		default:
			r.Verb = "get"
		}
	case http.MethodPost:
		r.Verb = "create"
	case http.MethodPut:
		r.Verb = "update"
	case http.MethodPatch:
		r.Verb = "patch"
		if strings.HasPrefix(contentType, "application/apply-patch") {
			r.Verb = "patch (apply)"
		}
	case http.MethodDelete:
		r.Verb = "delete"
		if r.Name == "" {
			r.Verb = "deletecollection"
		}
	default:
		r.Verb = strings.ToLower(method)
	}
	return r
}
