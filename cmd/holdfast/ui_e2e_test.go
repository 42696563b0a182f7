package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/fleetview/fleetviewtest"
	"holdfast.dev/holdfast/internal/naming"
)

// uiStartTimeout bounds how long `holdfast ui` takes to print its URL, requestTimeout one
// request to it.
const (
	uiStartTimeout = time.Minute
	requestTimeout = 10 * time.Second
)

// TestUIAnswersOnlyItsHostsAndToken runs `holdfast ui --address 0.0.0.0:0` against a real hub,
// as the user would on every interface, and reads the URL it prints. Then, with plain HTTP
// requests as a browser or another process would make them: a request naming another host (a
// DNS-rebound site) is refused, reading or acting; a request without the printed URL's token or
// the cookie it is exchanged for is refused, for the views, the event stream, the assets and the
// actions; the printed URL sets an HttpOnly, SameSite=Strict cookie and sends the browser to the
// page without the token; with the cookie, an action posted from another site is refused, and one
// from the page itself pauses the service set on the hub. Each refusal leaves the hub as it was.
func TestUIAnswersOnlyItsHostsAndToken(t *testing.T) {
	ctx := t.Context()
	hub, c := startHub(t)
	createFleet(t, c, fleetviewtest.Statuses())
	const set, allowed = "apps", "ui.example.internal"
	css := &holdfastv1.ClusterServiceStatus{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "fleet", Name: naming.StatusName(set, "c1")}, css); err != nil {
		t.Fatal(err)
	}

	printed := startUI(t, hub.KubeconfigPath(), "--address", "0.0.0.0:0", "--allowed-host", allowed)
	u, err := url.Parse(printed)
	if err != nil {
		t.Fatalf("the printed URL %q: %v", printed, err)
	}
	port := u.Port()
	// The server as reached on this machine, whatever the printed URL names.
	base := "http://127.0.0.1:" + port
	// The timeout ends the read of an event stream that was let in: it never ends by itself.
	noRedirect := &http.Client{Timeout: requestTimeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, path, host string, header map[string]string, cookie *http.Cookie) (int, string) {
		t.Helper()
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader(url.Values{"set": {set}, "paused": {"true"}, "cluster": {"fleet/c1"}}.Encode())
		}
		req, err := http.NewRequestWithContext(ctx, method, base+path, body)
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		if method == http.MethodPost {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		if cookie != nil {
			req.AddCookie(cookie)
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, string(b)
	}
	unchanged := func(t *testing.T, what string) {
		t.Helper()
		if pausedOnHub(t, c, set) {
			t.Errorf("after %s, service set %s is paused on the hub", what, set)
		}
		got := &holdfastv1.ClusterServiceStatus{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(css), got); err != nil {
			t.Fatal(err)
		}
		if v := got.Annotations[holdfastv1.ReconcileRequestedAtAnnotation]; v != "" {
			t.Errorf("after %s, a correction was requested (%s=%s)", what, holdfastv1.ReconcileRequestedAtAnnotation, v)
		}
	}
	sameOrigin := func(origin string) map[string]string {
		return map[string]string{"Origin": origin, "Sec-Fetch-Site": "same-origin", "Accept": "application/json"}
	}
	// foreignHost makes the requests of a page of a site whose name was made to resolve to this
	// machine (DNS rebinding): to the browser, the server is of the page's own origin.
	foreignHost := func(t *testing.T, cookie *http.Cookie) {
		t.Helper()
		rebound := "evil.example:" + port
		if code, body := do(http.MethodGet, "/", rebound, nil, cookie); code != http.StatusMisdirectedRequest || !strings.Contains(body, "evil.example") {
			t.Errorf("GET / naming Host %s: %d %q, want 421 naming the host", rebound, code, body)
		}
		for _, path := range []string{"/actions/pause", "/actions/correct"} {
			if code, _ := do(http.MethodPost, path, rebound, sameOrigin("http://"+rebound), cookie); code != http.StatusMisdirectedRequest {
				t.Errorf("POST %s naming Host %s: %d, want 421", path, rebound, code)
			}
		}
		unchanged(t, "requests naming another host")
	}

	t.Run("a request naming another host is refused", func(t *testing.T) { foreignHost(t, nil) })

	t.Run("a request without the token or the cookie is refused", func(t *testing.T) {
		for _, path := range []string{"/", "/drift", "/charts", "/events", "/static/app.js", "/drift?partial=1"} {
			if code, body := do(http.MethodGet, path, "", nil, nil); code != http.StatusUnauthorized || !strings.Contains(body, "token") {
				t.Errorf("GET %s without the cookie: %d %q, want 401 saying to open the printed URL", path, code, body)
			}
		}
		for _, path := range []string{"/actions/pause", "/actions/correct"} {
			if code, _ := do(http.MethodPost, path, "", sameOrigin(base), nil); code != http.StatusUnauthorized {
				t.Errorf("POST %s without the cookie: %d, want 401", path, code)
			}
		}
		if code, _ := do(http.MethodGet, "/drift?token=not-this-runs", "", nil, nil); code != http.StatusUnauthorized {
			t.Errorf("a wrong token: %d, want 401", code)
		}
		unchanged(t, "requests without the secret")
	})

	var cookie *http.Cookie
	t.Run("the printed URL's token is exchanged for a cookie", func(t *testing.T) {
		if u.Query().Get("token") == "" {
			t.Fatalf("the printed URL %q carries no token", printed)
		}
		resp, err := noRedirect.Get(base + "/?" + u.RawQuery)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
			t.Fatalf("the printed URL: %s, Location %q; want 303 to / (the token out of the address bar)", resp.Status, resp.Header.Get("Location"))
		}
		for _, ck := range resp.Cookies() {
			cookie = ck
		}
		if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Path != "/" {
			t.Fatalf("the cookie set: %+v; want one HttpOnly, SameSite=Strict, Path=/", cookie)
		}
		if code, page := do(http.MethodGet, "/", "", nil, cookie); code != http.StatusOK || !strings.Contains(page, `data-set="`+set+`"`) {
			t.Errorf("the fleet page with the cookie: %d\n%s", code, page)
		}
		stale := &http.Cookie{Name: cookie.Name, Value: "a-cookie-of-an-earlier-run"}
		if code, _ := do(http.MethodPost, "/actions/pause", "", sameOrigin(base), stale); code != http.StatusUnauthorized {
			t.Errorf("POST /actions/pause with another run's cookie: %d, want 401", code)
		}
		unchanged(t, "an action with another run's cookie")
	})
	if cookie == nil {
		t.FailNow()
	}

	t.Run("a request naming another host is refused, even with the cookie", func(t *testing.T) { foreignHost(t, cookie) })

	t.Run("an action from another site is refused, even with the cookie", func(t *testing.T) {
		for _, header := range []map[string]string{
			{"Origin": "http://evil.example"},
			{"Sec-Fetch-Site": "cross-site"},
			{"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:1"},
		} {
			for _, path := range []string{"/actions/pause", "/actions/correct"} {
				if code, _ := do(http.MethodPost, path, "", header, cookie); code != http.StatusForbidden {
					t.Errorf("POST %s with %v and the cookie: %d, want 403", path, header, code)
				}
			}
		}
		unchanged(t, "actions from other sites")
	})

	t.Run("the machine's names are accepted", func(t *testing.T) {
		hosts := []string{"localhost:" + port, allowed + ":" + port, "[::1]:" + port}
		if name, err := os.Hostname(); err == nil && name != "" {
			hosts = append(hosts, name+":"+port)
		}
		for _, host := range hosts {
			if code, _ := do(http.MethodGet, "/charts", host, nil, cookie); code != http.StatusOK {
				t.Errorf("GET /charts naming Host %s with the cookie: %d, want 200", host, code)
			}
		}
	})

	t.Run("an action from the page itself goes through", func(t *testing.T) {
		if code, body := do(http.MethodPost, "/actions/pause", "", sameOrigin(base), cookie); code != http.StatusOK {
			t.Fatalf("POST /actions/pause from the page with the cookie: %d %s", code, body)
		}
		if !pausedOnHub(t, c, set) {
			t.Errorf("service set %s is not paused on the hub after the page's pause", set)
		}
	})
}

// startUI runs `holdfast ui` in-process with args until the test ends and returns the URL it
// prints first.
func startUI(t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	root := newRootCommand()
	root.SetOut(pw)
	root.SetErr(pw)
	root.SetArgs(append([]string{"ui", "--kubeconfig", kubeconfig, "--log-level", "error"}, args...))
	done := make(chan error, 1)
	go func() {
		err := root.ExecuteContext(ctx)
		_ = pw.CloseWithError(err)
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("holdfast ui: %v", err)
		}
	})
	urls := make(chan string, 1)
	go func() {
		// Read everything the command writes, so that it never blocks on the pipe.
		sc := bufio.NewScanner(pr)
		re := regexp.MustCompile(`^Holdfast UI: (http://\S+)`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
		close(urls)
	}()
	select {
	case u, ok := <-urls:
		if !ok {
			t.Fatal("holdfast ui ended without printing its URL")
		}
		return u
	case <-time.After(uiStartTimeout):
		t.Fatalf("holdfast ui printed no URL within %v", uiStartTimeout)
		return ""
	}
}
