package netpolicy_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"holdfast.dev/holdfast/internal/netpolicy"
)

// TestControlRefusesBeforeConnecting dials cloud metadata: the Control hook refuses the address
// before a packet is sent, so the test needs no network and does not wait for a timeout.
func TestControlRefusesBeforeConnecting(t *testing.T) {
	dial := netpolicy.Default().DialContext(&net.Dialer{Timeout: 5 * time.Second})
	start := time.Now()
	_, err := dial(t.Context(), "tcp", "169.254.169.254:80")
	var denied *netpolicy.DeniedError
	if !errors.As(err, &denied) || denied.Rule != netpolicy.RuleMetadata {
		t.Fatalf("err = %v, want the metadata address refused", err)
	}
	if time.Since(start) > time.Second {
		t.Errorf("the refusal took %v: it was not made before connecting", time.Since(start))
	}
	if _, err := dial(t.Context(), "tcp4", "169.254.1.1:443"); !errors.As(err, &denied) || denied.Rule != netpolicy.RuleLinkLocal {
		t.Errorf("link-local: err = %v", err)
	}
}

// TestDialerHookStillRuns: a Control hook the dialer already had runs after the policy's.
func TestDialerHookStillRuns(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	var ran bool
	d := &net.Dialer{Control: func(string, string, syscall.RawConn) error { ran = true; return nil }}
	conn, err := netpolicy.Default().DialContext(d)(t.Context(), "tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.Close()
	if !ran {
		t.Error("the dialer's own Control hook did not run")
	}
}

// TestLoopbackServer: a server on 127.0.0.1 is reached under the default policy, refused under
// DenyPrivate whether the URL names the address or a name for it, and reached again when the
// operator allows it.
func TestLoopbackServer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	byName := "http://localhost:" + port + "/"

	strict, err := netpolicy.New(netpolicy.Options{DenyPrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	allowed, err := netpolicy.New(netpolicy.Options{DenyPrivate: true, AllowedHosts: []string{"127.0.0.0/8", "::1"}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		policy *netpolicy.Policy
		url    string
		want   netpolicy.Rule
	}{
		{"default", netpolicy.Default(), srv.URL, ""},
		{"deny private", strict, srv.URL, netpolicy.RuleLoopback},
		{"deny private, by name", strict, byName, netpolicy.RuleLoopback},
		{"deny private, allowed", allowed, srv.URL, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := &http.Client{Transport: tt.policy.Transport()}
			resp, err := client.Get(tt.url)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				_ = resp.Body.Close()
				return
			}
			var denied *netpolicy.DeniedError
			if !errors.As(err, &denied) || denied.Rule != tt.want {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestWrapDial: a dial function of the caller's is checked on the address it connected to.
func TestWrapDial(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	strict, err := netpolicy.New(netpolicy.Options{DenyPrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	strict.Guard(tr)
	_, err = (&http.Client{Transport: tr}).Get(srv.URL)
	var denied *netpolicy.DeniedError
	if !errors.As(err, &denied) || denied.Rule != netpolicy.RuleLoopback {
		t.Fatalf("err = %v, want loopback refused", err)
	}
	tr = &http.Transport{DialContext: (&net.Dialer{}).DialContext}
	netpolicy.Default().Guard(tr)
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
}

// TestSameHost: a redirect within the host is followed, one to another host is not, and the
// error names both hosts.
func TestSameHost(t *testing.T) {
	var other string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/here":
			http.Redirect(w, r, "/there", http.StatusFound)
		case "/away":
			http.Redirect(w, r, other, http.StatusTemporaryRedirect)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		default:
			_, _ = io.WriteString(w, "ok")
		}
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	other = "http://localhost:" + port + "/there"
	client := &http.Client{CheckRedirect: netpolicy.SameHost}

	resp, err := client.Get(srv.URL + "/here")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.Request.URL.Path != "/there" {
		t.Errorf("the same-host redirect was not followed: ended at %s", resp.Request.URL)
	}

	_, err = client.Get(srv.URL + "/away")
	var redirect *netpolicy.RedirectError
	if !errors.As(err, &redirect) || redirect.From != "127.0.0.1" || redirect.To != "localhost" {
		t.Fatalf("err = %v, want the redirect to localhost refused", err)
	}
	if !strings.Contains(redirect.Error(), "127.0.0.1") || !strings.Contains(redirect.Error(), "localhost") {
		t.Errorf("error %q does not name both hosts", redirect)
	}

	if _, err := client.Get(srv.URL + "/loop"); err == nil || !strings.Contains(err.Error(), "10 redirects") {
		t.Errorf("err = %v, want stopped after 10 redirects", err)
	}
}
