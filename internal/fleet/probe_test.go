package fleet

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// bodyMarker stands for what an internal endpoint answers: it must never reach a probe's error.
const bodyMarker = "internal-secret-marker-123"

const versionJSON = `{"major":"1","minor":"36","gitVersion":"v1.36.4"}`

// answer writes a response with the content type and code.
func answer(w http.ResponseWriter, contentType string, code int, body string) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(code)
	_, _ = fmt.Fprint(w, body)
}

// status is a Kubernetes Status as an API server sends it.
func status(code int, reason, message string) string {
	return fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":%d,"reason":%q,"message":%q}`, code, reason, message)
}

// reviewing answers /version as an API server and the SelfSubjectReview with review.
func reviewing(review http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/version" {
			answer(w, "application/json", http.StatusOK, versionJSON)
			return
		}
		review(w, r)
	}
}

// probeServer probes, through a registry connection, a TLS server that answers with handler.
func probeServer(t *testing.T, handler http.HandlerFunc) (ProbeResult, error) {
	t.Helper()
	srv := httptest.NewTLSServer(handler)
	t.Cleanup(srv.Close)
	r := NewRegistry(Options{})
	t.Cleanup(r.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	conn, err := r.Connect(types.NamespacedName{Namespace: "fleet", Name: "c"}, "", kubeconfig(t, func(c *clientcmdapi.Config) {
		c.Clusters["c"].Server, c.Clusters["c"].CertificateAuthorityData = srv.URL, ca
	}))
	if err != nil {
		t.Fatal(err)
	}
	return conn.Probe(context.Background())
}

// TestProbeErrorsQuoteNoBody: a Cluster's server can be any HTTP endpoint the controller reaches.
// What it answers is reported by status code; only a Kubernetes Status's message is kept, bounded.
func TestProbeErrorsQuoteNoBody(t *testing.T) {
	text := func(code int) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			answer(w, "text/plain", code, "secret stuff: "+bodyMarker)
		}
	}
	cases := []struct {
		name       string
		handler    http.HandlerFunc
		wantReason string // "" for a successful probe
		wantIn     string
	}{
		{name: "500 on /version", handler: text(http.StatusInternalServerError),
			wantReason: holdfastv1.UnreachableReason, wantIn: "reading the server version: HTTP 500 Internal Server Error: the server is not a Kubernetes API server"},
		{name: "403 on /version, which client-go quotes", handler: text(http.StatusForbidden),
			wantReason: holdfastv1.UnreachableReason, wantIn: "HTTP 403 Forbidden"},
		{name: "401 text on /version", handler: text(http.StatusUnauthorized),
			wantReason: holdfastv1.CredentialsRejectedReason, wantIn: "HTTP 401 Unauthorized"},
		{name: "JSON that is not a Status", handler: func(w http.ResponseWriter, _ *http.Request) {
			answer(w, "application/json", http.StatusBadGateway, `{"error":"`+bodyMarker+`"}`)
		}, wantReason: holdfastv1.UnreachableReason, wantIn: "HTTP 502 Bad Gateway"},
		{name: "a version that is no JSON", handler: func(w http.ResponseWriter, _ *http.Request) {
			answer(w, "text/html", http.StatusOK, "<html>"+bodyMarker+"</html>")
		}, wantReason: holdfastv1.UnreachableReason, wantIn: "could not be read as a Kubernetes API response"},
		{name: "502 on the review", handler: reviewing(text(http.StatusBadGateway)),
			wantReason: holdfastv1.UnreachableReason, wantIn: "reviewing the kubeconfig's identity: HTTP 502 Bad Gateway"},
		{name: "a review that is no JSON", handler: reviewing(func(w http.ResponseWriter, _ *http.Request) {
			answer(w, "application/json", http.StatusCreated, `{"status": `+bodyMarker)
		}), wantReason: holdfastv1.UnreachableReason, wantIn: "could not be read as a Kubernetes API response"},
		{name: "a review that is HTML", handler: reviewing(func(w http.ResponseWriter, _ *http.Request) {
			answer(w, "text/html", http.StatusCreated, "<html>"+bodyMarker+"</html>")
		}), wantReason: holdfastv1.UnreachableReason, wantIn: "could not be read as a Kubernetes API response"},
		{name: "a body cannot pass for an anonymous identity", handler: reviewing(func(w http.ResponseWriter, _ *http.Request) {
			answer(w, "text/plain", http.StatusForbidden, `User "system:anonymous" cannot `+bodyMarker)
		})}, // a 403 is RBAC denying the review to an accepted identity
		{name: "a Status message is kept", handler: reviewing(func(w http.ResponseWriter, _ *http.Request) {
			answer(w, "application/json", http.StatusUnauthorized, status(http.StatusUnauthorized, "Unauthorized", "Unauthorized"))
		}), wantReason: holdfastv1.CredentialsRejectedReason, wantIn: "reviewing the kubeconfig's identity: Unauthorized"},
		{name: "a Status naming the anonymous user", handler: reviewing(func(w http.ResponseWriter, _ *http.Request) {
			answer(w, "application/json", http.StatusForbidden, status(http.StatusForbidden, "Forbidden",
				`selfsubjectreviews.authentication.k8s.io is forbidden: User "system:anonymous" cannot create resource`))
		}), wantReason: holdfastv1.CredentialsRejectedReason, wantIn: "treats the kubeconfig's credentials as anonymous"},
		{name: "a long Status message is cut", handler: reviewing(func(w http.ResponseWriter, _ *http.Request) {
			answer(w, "application/json", http.StatusInternalServerError,
				status(http.StatusInternalServerError, "InternalError", "oops "+strings.Repeat("x", 10000)+bodyMarker))
		}), wantReason: holdfastv1.UnreachableReason, wantIn: "oops xxx"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := probeServer(t, tc.handler)
			if tc.wantReason == "" {
				if err != nil {
					t.Fatalf("probe failed: %v", err)
				}
				return
			}
			var pe *ProbeError
			if !errors.As(err, &pe) {
				t.Fatalf("probe error %v (%T), want a *ProbeError", err, err)
			}
			msg := pe.Error()
			if pe.Reason != tc.wantReason {
				t.Errorf("reason %s, want %s (%s)", pe.Reason, tc.wantReason, msg)
			}
			if !strings.Contains(msg, tc.wantIn) {
				t.Errorf("message %q does not say %q", msg, tc.wantIn)
			}
			if strings.Contains(fmt.Sprintf("%+v %#v", err, err), bodyMarker) {
				t.Errorf("the error quotes the body: %.300q", msg)
			}
			if len(msg) > maxProbeMessage+100 {
				t.Errorf("message of %d bytes", len(msg))
			}
		})
	}
}

func TestRedact(t *testing.T) {
	long := &url.Error{Op: "Get", URL: "https://c.example/version", Err: errors.New(strings.Repeat("é", 1000))}
	refused := &url.Error{Op: "Get", URL: "https://127.0.0.1:1/version", Err: errors.New("dial tcp 127.0.0.1:1: connect: connection refused")}
	reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	cases := []struct {
		name      string
		err       error
		want      string
		transient bool
	}{
		{name: "no answer", err: refused, want: refused.Error()},
		{name: "timeout", err: fmt.Errorf("waiting: %w", context.DeadlineExceeded), want: "waiting: context deadline exceeded"},
		{name: "a long message is cut on a rune boundary", err: long,
			want: `Get "https://c.example/version": ` + strings.Repeat("é", (maxProbeMessage-len(`Get "https://c.example/version": `)-len(" …(truncated)"))/2) + " …(truncated)"},
		{name: "anything else", err: errors.New("Object 'Kind' is missing in '" + bodyMarker + "'"),
			want: "the answer could not be read as a Kubernetes API response: " + notAnAPIServer},
		{name: "a connection reset while the answer was read", err: fmt.Errorf("decoding: %w", reset),
			want: "the connection failed while the answer was read: " + reset.Error(), transient: true},
		{name: "an answer cut short", err: fmt.Errorf("decoding '%s': %w", bodyMarker, io.ErrUnexpectedEOF),
			want: "the answer was cut short: unexpected EOF", transient: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := redact(tc.err)
			if got.Error() != tc.want {
				t.Errorf("redact = %q\nwant      %q", got.Error(), tc.want)
			}
			// The fault stays in the chain (package apply tells transient faults apart so).
			var netErr net.Error
			if tc.transient && !errors.As(got, &netErr) && !errors.Is(got, io.ErrUnexpectedEOF) {
				t.Errorf("redact(%v) is not transient any more", tc.err)
			}
		})
	}
}

// TestProbeReviewsIdentityOncePerInterval: a connection's probes ask who its credentials are
// once per reviewInterval, the version every time; an anonymous answer is never kept.
func TestProbeReviewsIdentityOncePerInterval(t *testing.T) {
	var reviews int
	user := "alice"
	srv := httptest.NewServer(reviewing(func(w http.ResponseWriter, _ *http.Request) {
		reviews++
		answer(w, "application/json", http.StatusCreated, fmt.Sprintf(`{"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1","status":{"userInfo":{"username":%q}}}`, user))
	}))
	t.Cleanup(srv.Close)
	cs, err := newProbeClient(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	known := &reviewed{}
	now := time.Now()
	expect := func(step string, at time.Time, wantReviews int, wantUser string, wantErr bool) {
		t.Helper()
		res, err := probe(context.Background(), cs, known, at)
		if (err != nil) != wantErr || reviews != wantReviews || (!wantErr && res.User != wantUser) {
			t.Fatalf("%s: user %q, error %v, %d reviews; want user %q, error %t, %d reviews", step, res.User, err, reviews, wantUser, wantErr, wantReviews)
		}
	}
	expect("first probe", now, 1, "alice", false)
	expect("within the interval", now.Add(reviewInterval/2), 1, "alice", false)
	user = anonymousUser
	expect("after the interval", now.Add(reviewInterval), 2, "", true)
	expect("after an anonymous answer", now.Add(reviewInterval+time.Second), 3, "", true)
}
