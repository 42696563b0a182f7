package webui

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// testAddr is the listener address of the handlers under test, and testHost its Host.
var (
	testAddr = &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 8090}
	testHost = "127.0.0.1:8090"
)

// testServer is a server with no hub, listening (as far as its checks know) on testAddr.
func testServer(t *testing.T) *Server {
	t.Helper()
	tpl, err := parseTemplates()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{templates: tpl, token: newToken(), hostname: "box.example.org"}
	s.listenOn(testAddr)
	return s
}

// signedInHandler is a test server's handler and the cookie its printed URL gives.
func signedInHandler(t *testing.T) (http.Handler, *http.Cookie) {
	t.Helper()
	s := testServer(t)
	h := s.handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, request(http.MethodGet, strings.TrimPrefix(s.URLs(testAddr)[0], "http://"+testHost), nil))
	cookies := rec.Result().Cookies()
	if rec.Code != http.StatusSeeOther || len(cookies) != 1 {
		t.Fatalf("the printed URL: %d, cookies %v", rec.Code, cookies)
	}
	return h, cookies[0]
}

// request is a request to the test server as a browser on this machine sends it.
func request(method, target string, body io.Reader) *http.Request {
	req := httptest.NewRequest(method, target, body)
	req.Host = testHost
	return req
}

func TestHostPolicy(t *testing.T) {
	loopback := &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 8090}
	every := &net.TCPAddr{IP: net.IPv4zero, Port: 8090}
	everyV6 := &net.TCPAddr{IP: net.IPv6unspecified, Port: 8090}
	one := &net.TCPAddr{IP: net.ParseIP("10.0.0.5"), Port: 8090}
	const hostname = "box.example.org"
	for _, tc := range []struct {
		name   string
		addr   net.Addr
		extra  []string
		accept []string
		refuse []string
	}{{
		name:   "loopback",
		addr:   loopback,
		accept: []string{"127.0.0.1:8090", "localhost:8090", "localhost:9000", "LOCALHOST.:8090", "localhost", "[::1]:8090", "127.0.0.2:8090", "[::ffff:127.0.0.1]:8090"},
		refuse: []string{"evil.example:8090", "evil.example", "localhost.evil.example:8090", "box.example.org:8090", "box:8090", "10.0.0.5:8090", "", ":8090", "[::1"},
	}, {
		name:   "every interface",
		addr:   every,
		accept: []string{"box.example.org:8090", "box:8090", "BOX.example.org.:8090", "10.1.2.3:8090", "[fe80::1]:8090", "localhost:8090", "127.0.0.1:8090"},
		refuse: []string{"evil.example:8090", "box.example.org.evil.example:8090", "box.evil.example:8090", "example.org:8090"},
	}, {
		name:   "every interface, IPv6",
		addr:   everyV6,
		accept: []string{"box.example.org:8090", "[2001:db8::1]:8090", "[::1]:8090"},
		refuse: []string{"evil.example:8090"},
	}, {
		name:   "one address",
		addr:   one,
		accept: []string{"10.0.0.5:8090", "box.example.org:8090", "127.0.0.1:9000", "localhost:9000"},
		refuse: []string{"10.0.0.6:8090", "evil.example:8090"},
	}, {
		name:   "allowed hosts",
		addr:   loopback,
		extra:  []string{"ui.example.internal:443", "192.0.2.7", "", "[2001:db8::7]:80"},
		accept: []string{"ui.example.internal", "Ui.Example.Internal.:8090", "192.0.2.7:8090", "[2001:db8::7]:8090"},
		refuse: []string{"example.internal:8090", "192.0.2.8:8090", "evil.example:8090"},
	}} {
		p := newHostPolicy(tc.addr, hostname, tc.extra)
		for _, h := range tc.accept {
			if !p.allows(h) {
				t.Errorf("%s: Host %q refused, want accepted", tc.name, h)
			}
		}
		for _, h := range tc.refuse {
			if p.allows(h) {
				t.Errorf("%s: Host %q accepted, want refused", tc.name, h)
			}
		}
	}
}

// TestSignIn: every path needs the run's secret; the printed URL's token is exchanged for the
// cookie and the browser sent back to the view without it, never elsewhere.
func TestSignIn(t *testing.T) {
	s := testServer(t)
	h := s.handler()
	serve := func(req *http.Request) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	for _, path := range []string{"/", "/drift", "/events", "/static/app.js", "/static/style.css", "/nothing"} {
		if rec := serve(request(http.MethodGet, path, nil)); rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), "open the URL it printed") {
			t.Errorf("GET %s without the cookie: %d %q, want 401", path, rec.Code, rec.Body)
		}
	}

	for _, tc := range []struct{ target, location string }{
		{"/?token=" + s.token, "/"},
		{"/drift?cluster=fleet%2Fc1&token=" + s.token, "/drift?cluster=fleet%2Fc1"},
		{"/charts?token=" + s.token, "/charts"},
		{"//evil.example/?token=" + s.token, "/"},
		{"/static/app.js?token=" + s.token, "/"},
	} {
		rec := serve(request(http.MethodGet, tc.target, nil))
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != tc.location {
			t.Errorf("GET %s: %d to %q, want 303 to %q", tc.target, rec.Code, rec.Header().Get("Location"), tc.location)
		}
		cookies := rec.Result().Cookies()
		if len(cookies) != 1 || cookies[0].Name != "holdfast-ui-8090" || cookies[0].Value != s.token || !cookies[0].HttpOnly ||
			cookies[0].SameSite != http.SameSiteStrictMode || cookies[0].Path != "/" {
			t.Errorf("GET %s: cookies %v, want one HttpOnly SameSite=Strict cookie for the port", tc.target, cookies)
		}
	}
	for _, req := range []*http.Request{
		request(http.MethodGet, "/?token="+s.token+"x", nil),
		request(http.MethodGet, "/?token=", nil),
		request(http.MethodPost, "/actions/pause?token="+s.token, strings.NewReader("set=a&paused=true")),
	} {
		if rec := serve(req); rec.Code != http.StatusUnauthorized || len(rec.Result().Cookies()) != 0 {
			t.Errorf("%s %s: %d, cookies %v; want 401 and no cookie", req.Method, req.URL, rec.Code, rec.Result().Cookies())
		}
	}

	signedIn := func(value string) *http.Request {
		req := request(http.MethodGet, "/static/app.js", nil)
		req.AddCookie(&http.Cookie{Name: "holdfast-ui-8090", Value: value})
		return req
	}
	if rec := serve(signedIn(s.token)); rec.Code != http.StatusOK {
		t.Errorf("an asset with the cookie: %d", rec.Code)
	}
	for _, bad := range []string{"", s.token[1:], strings.ToLower(s.token)} {
		if rec := serve(signedIn(bad)); rec.Code != http.StatusUnauthorized {
			t.Errorf("an asset with the cookie %q: %d, want 401", bad, rec.Code)
		}
	}
	other := request(http.MethodGet, "/static/app.js", nil)
	other.AddCookie(&http.Cookie{Name: "holdfast-ui-9000", Value: s.token})
	if rec := serve(other); rec.Code != http.StatusUnauthorized {
		t.Errorf("the cookie of the server on another port: %d, want 401", rec.Code)
	}
	foreign := signedIn(s.token)
	foreign.Host = "evil.example:8090"
	if rec := serve(foreign); rec.Code != http.StatusMisdirectedRequest || !strings.Contains(rec.Body.String(), `"evil.example"`) {
		t.Errorf("a foreign Host with the cookie: %d %q, want 421 naming it", rec.Code, rec.Body)
	}
}

func TestURLs(t *testing.T) {
	s := &Server{token: "T0KEN", hostname: "box.example.org"}
	for _, tc := range []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 8090}, "http://127.0.0.1:8090/?token=T0KEN"},
		{&net.TCPAddr{IP: net.ParseIP("::1"), Port: 8090}, "http://[::1]:8090/?token=T0KEN"},
		{&net.TCPAddr{IP: net.ParseIP("10.0.0.5"), Port: 8090}, "http://10.0.0.5:8090/?token=T0KEN"},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 8090}, "http://127.0.0.1:8090/?token=T0KEN http://box.example.org:8090/?token=T0KEN"},
	} {
		if got := strings.Join(s.URLs(tc.addr), " "); got != tc.want {
			t.Errorf("URLs(%s) = %s, want %s", tc.addr, got, tc.want)
		}
	}
	if a, b := newToken(), newToken(); len(a) < 26 || a == b {
		t.Errorf("tokens %q and %q: want two different secrets of 128 bits", a, b)
	}
}
