package notify

import (
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"

	"holdfast.dev/holdfast/internal/netpolicy"
)

// TestEgress: the default client refuses the metadata address and a redirect to another host,
// and a policy that denies private addresses refuses a receiver on 127.0.0.1; none of the
// errors or logs show the URL.
func TestEgress(t *testing.T) {
	elsewhere := newScripted(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	_, port, _ := net.SplitHostPort(elsewhere.Listener.Addr().String())
	redirecting := newScripted(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		// 307 would resend the signed body to the other host.
		http.Redirect(w, r, "http://localhost:"+port+"/hooks/XXXXsecretpath", http.StatusTemporaryRedirect)
	})
	local := newScripted(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	strict, err := netpolicy.New(netpolicy.Options{DenyPrivate: true})
	if err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name   string
		client *http.Client
		url    string
		check  func(error) bool
		server *scripted // must get no request
	}{
		{"metadata", nil, "http://169.254.169.254/hooks/XXXXsecretpath", func(err error) bool {
			var denied *netpolicy.DeniedError
			return errors.As(err, &denied) && denied.Rule == netpolicy.RuleMetadata
		}, nil},
		{"redirect to another host", nil, redirecting.URL + "/hooks/XXXXsecretpath", func(err error) bool {
			var redirect *netpolicy.RedirectError
			return errors.As(err, &redirect) && redirect.To == "localhost"
		}, elsewhere},
		{"private address denied", NewHTTPClient(strict), local.URL + "/hooks/XXXXsecretpath", func(err error) bool {
			var denied *netpolicy.DeniedError
			return errors.As(err, &denied) && denied.Rule == netpolicy.RuleLoopback
		}, local},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := start(t, Options{HTTPClient: c.client, MaxAttempts: 1})
			h.d.Send(webhook("guarded", c.url), deploymentDrift())
			r := h.next(t)
			if !c.check(r.err) {
				t.Fatalf("outcome %v", r.err)
			}
			if c.server != nil && len(c.server.got()) != 0 {
				t.Errorf("the refused destination got %d requests", len(c.server.got()))
			}
			for _, s := range []string{r.err.Error(), h.logs.String()} {
				if strings.Contains(s, "secretpath") || strings.Contains(s, "127.0.0.1") || strings.Contains(s, "169.254") || strings.Contains(s, port) {
					t.Errorf("%q shows the URL", s)
				}
			}
		})
	}

	// The same receiver is reached with the default policy.
	h := start(t, Options{})
	h.d.Send(webhook("local", local.URL), deploymentDrift())
	if r := h.next(t); r.err != nil {
		t.Fatalf("default policy: %v", r.err)
	}
}
