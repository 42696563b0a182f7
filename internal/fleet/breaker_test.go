package fleet

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// scriptedTransport answers each request with the next error of its script (nil: 200 OK) and
// counts what reached it.
type scriptedTransport struct {
	errs []error
	sent int
}

func (t *scriptedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.sent++
	if len(t.errs) > 0 {
		err := t.errs[0]
		t.errs = t.errs[1:]
		if err != nil {
			return nil, err
		}
	}
	rec := httptest.NewRecorder()
	rec.WriteHeader(http.StatusOK)
	return rec.Result(), nil
}

func get(t *testing.T, rt http.RoundTripper, ctx context.Context, url string) error {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, url, nil).WithContext(ctx)
	resp, err := rt.RoundTrip(req)
	if err == nil {
		_ = resp.Body.Close()
	}
	return err
}

// TestBreakerSparesWorkersOfUnresponsiveClusters: a request the connection's own timeout ended
// makes the cluster's next requests fail at once, without being sent, for a backoff that
// doubles with each timeout; then one request at a time is tried, and an answer closes it.
// Watches always go through, and a caller giving up teaches nothing.
func TestBreakerSparesWorkersOfUnresponsiveClusters(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC))
	inner := &scriptedTransport{}
	b := &breaker{clock: clk}
	rt := b.wrap(inner)
	ctx := context.Background()
	const url = "https://target/api/v1/namespaces/a/configmaps/b"

	// A caller that gave up (its own deadline) does not open it.
	gaveUp, cancel := context.WithCancel(ctx)
	cancel()
	inner.errs = []error{context.Canceled}
	_ = get(t, rt, gaveUp, url)
	if _, open := b.unresponsive(); open {
		t.Fatal("a caller that gave up opened the breaker")
	}
	// Nor does a refused connection (the probe judges those).
	inner.errs = []error{&net.OpError{Op: "dial", Err: errors.New("connection refused")}}
	_ = get(t, rt, ctx, url)
	if _, open := b.unresponsive(); open {
		t.Fatal("a refused connection opened the breaker")
	}

	// The connection's request timeout opens it.
	inner.errs = []error{context.DeadlineExceeded}
	if err := get(t, rt, ctx, url); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v", err)
	}
	until, open := b.unresponsive()
	if !open || !until.Equal(clk.Now().Add(DefaultUnresponsiveBackoff)) {
		t.Fatalf("unresponsive = %v %v, want until %v", until, open, clk.Now().Add(DefaultUnresponsiveBackoff))
	}
	sent := inner.sent
	err := get(t, rt, ctx, url)
	var ue *UnresponsiveError
	if !errors.As(err, &ue) || !ue.Until.Equal(until) {
		t.Fatalf("error while open = %v, want an UnresponsiveError until %v", err, until)
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatal("UnresponsiveError is not a net.Error timing out: callers would not retry it")
	}
	if inner.sent != sent {
		t.Fatal("a request was sent while the breaker was open")
	}
	if err := get(t, rt, ctx, url+"?watch=true"); err != nil {
		t.Fatalf("a watch was refused: %v", err)
	}

	// After the backoff one request is tried; while it waits, others fail at once.
	clk.Step(DefaultUnresponsiveBackoff)
	trial, err := b.admit()
	if !trial || err != nil {
		t.Fatalf("admit after the backoff = %v %v, want the trial", trial, err)
	}
	if err := get(t, rt, ctx, url); !errors.As(err, &ue) || !ue.Until.IsZero() {
		t.Fatalf("second request during the trial = %v, want an UnresponsiveError", err)
	}
	// The trial times out too: open for twice as long.
	b.settle(trial, ctx, context.DeadlineExceeded)
	if until, _ := b.unresponsive(); !until.Equal(clk.Now().Add(2 * DefaultUnresponsiveBackoff)) {
		t.Fatalf("second backoff until %v, want %v", until, clk.Now().Add(2*DefaultUnresponsiveBackoff))
	}
	// Backoffs are capped.
	for range 10 {
		clk.Step(MaxUnresponsiveBackoff)
		inner.errs = []error{context.DeadlineExceeded}
		_ = get(t, rt, ctx, url)
	}
	if until, _ := b.unresponsive(); until.Sub(clk.Now()) != MaxUnresponsiveBackoff {
		t.Fatalf("backoff %v, want the cap %v", until.Sub(clk.Now()), MaxUnresponsiveBackoff)
	}
	// An answer closes it.
	clk.Step(MaxUnresponsiveBackoff)
	if err := get(t, rt, ctx, url); err != nil {
		t.Fatalf("trial: %v", err)
	}
	if _, open := b.unresponsive(); open {
		t.Fatal("still open after an answer")
	}
	if err := get(t, rt, ctx, url); err != nil {
		t.Fatalf("request after closing: %v", err)
	}
}
