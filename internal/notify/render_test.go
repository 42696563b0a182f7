package notify

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// receiver is a test server, a stand-in for a receiver's API, answering every request with
// status and handing over what it got.
func receiver(t *testing.T, status int) (*httptest.Server, chan call) {
	t.Helper()
	got := make(chan call, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- call{method: r.Method, uri: r.RequestURI, header: r.Header.Clone(), body: b}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func TestWebhookDelivery(t *testing.T) {
	key := []byte("k3y-material")
	cases := []struct {
		name string
		key  []byte
	}{
		{"signed with the key", key},
		{"unsigned without a key", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, got := receiver(t, http.StatusNoContent)
			h := start(t, Options{})
			if !h.d.Send(Target{Name: "hook", Type: holdfastv1.NotificationWebhook, URL: srv.URL, HMACKey: c.key}, deploymentDrift()) {
				t.Fatal("Send dropped the event")
			}
			if r := h.next(t); r.err != nil || r.target != "hook" {
				t.Fatalf("outcome = %+v, want delivered to hook", r)
			}
			req := <-got
			var body map[string]any
			if err := json.Unmarshal(req.body, &body); err != nil {
				t.Fatalf("body is not JSON: %v", err)
			}
			if body["version"] != PayloadVersion || body["type"] != "DriftDetected" {
				t.Errorf("body = %s, want a versioned DriftDetected event", req.body)
			}
			if req.header.Get("Content-Type") != "application/json" || req.header.Get(HeaderEvent) != "DriftDetected" {
				t.Errorf("headers = %v, want JSON and the event type", req.header)
			}
			sig, ts := req.header.Get(HeaderSignature), req.header.Get(HeaderTimestamp)
			if c.key == nil {
				if sig != "" || ts != "" {
					t.Fatalf("%s = %q, %s = %q without a key, want neither", HeaderSignature, sig, HeaderTimestamp, ts)
				}
				return
			}
			// Verify as a receiver would, on the real clock.
			if err := Verify(c.key, req.header, req.body, time.Now(), DefaultTolerance); err != nil {
				t.Fatalf("the delivered request does not verify: %v", err)
			}
			if strings.Contains(sig, string(c.key)) {
				t.Fatalf("the signature header contains the key")
			}
		})
	}
}

// TestSlackDelivery sends to a Slack target whose Secret has an hmacKey: Slack incoming webhooks
// check no signature, so the message is sent unsigned.
func TestSlackDelivery(t *testing.T) {
	srv, got := receiver(t, http.StatusOK)
	h := start(t, Options{})
	h.d.Send(Target{Name: "chat", Type: holdfastv1.NotificationSlack, URL: srv.URL, HMACKey: []byte("k3y")}, deploymentDrift())
	if r := h.next(t); r.err != nil {
		t.Fatalf("Slack delivery failed: %v", r.err)
	}
	req := <-got
	var msg struct{ Text string }
	if err := json.Unmarshal(req.body, &msg); err != nil || !strings.Contains(msg.Text, ".spec.replicas: 3 → 5") {
		t.Fatalf("Slack body = %s (%v), want the summary in text", req.body, err)
	}
	for _, name := range []string{HeaderSignature, HeaderTimestamp} {
		if v := req.header.Get(name); v != "" {
			t.Errorf("Slack message has %s = %q, want it unsigned", name, v)
		}
	}
}

// TestSecretRedactedOnTheWire sends an unredacted Secret drift through both formats and looks
// for its values, in every spelling the caller used, in what the receivers got.
func TestSecretRedactedOnTheWire(t *testing.T) {
	const plain = "hunter2-s3cret"
	secrets := []string{plain, base64.StdEncoding.EncodeToString([]byte(plain)), "b2xkLXZhbHVl"}
	srv, got := receiver(t, http.StatusOK)
	h := start(t, Options{})
	for _, typ := range []holdfastv1.NotificationType{holdfastv1.NotificationWebhook, holdfastv1.NotificationSlack} {
		h.d.Send(Target{Name: string(typ), Type: typ, URL: srv.URL}, secretDrift(plain))
		if r := h.next(t); r.err != nil {
			t.Fatalf("%s delivery failed: %v", typ, r.err)
		}
		body := string((<-got).body)
		for _, s := range secrets {
			if strings.Contains(body, s) {
				t.Errorf("%s body contains the Secret value %q:\n%s", typ, s, body)
			}
		}
		if !strings.Contains(body, "redacted") {
			t.Errorf("%s body does not show that values were redacted:\n%s", typ, body)
		}
	}
}
