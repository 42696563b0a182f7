package fleet

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Backoff of a cluster whose requests time out (see breaker).
const (
	// DefaultUnresponsiveBackoff is how long the first timeout makes a cluster's requests fail at
	// once; it doubles with each further timeout, up to MaxUnresponsiveBackoff.
	DefaultUnresponsiveBackoff = 10 * time.Second
	MaxUnresponsiveBackoff     = 5 * time.Minute
)

// UnresponsiveError is returned, at once and without sending anything, for a request to a
// cluster whose requests timed out lately: until Until, or while the one request let through
// to try it again is waiting. It is transient (a net.Error timing out), and names no address.
type UnresponsiveError struct {
	// Until is when requests are tried again; zero while the one request let through to try
	// is waiting.
	Until time.Time
}

func (e *UnresponsiveError) Error() string {
	if e.Until.IsZero() {
		return "the cluster's API server let requests time out; one request at a time is sent until one is answered"
	}
	return fmt.Sprintf("the cluster's API server let requests time out; none is sent until %s, then one at a time until one is answered",
		e.Until.UTC().Format(time.RFC3339))
}

// Timeout and Temporary make it a net.Error, which every caller retries with backoff.
func (e *UnresponsiveError) Timeout() bool   { return true }
func (e *UnresponsiveError) Temporary() bool { return true }

// breaker keeps one target cluster that answers slowly or not at all from holding the workers of
// the whole fleet: a request that timed out (the connection's RequestTimeout, not its caller
// giving up) opens it, and while it is open the cluster's requests other than watches fail at
// once with UnresponsiveError. When the backoff has passed, one request at a time is let
// through: an answer (any status) closes it, another timeout opens it again for twice as long.
// So a hanging cluster holds at most one worker at a time, for one request timeout per backoff.
// Probes do not go through it: they have their own timeout and say whether the cluster answers
// at all.
type breaker struct {
	clock clock.PassiveClock

	mu sync.Mutex
	// backoff is how long the last timeout opened the breaker for; 0 when closed.
	backoff time.Duration
	until   time.Time
	// trying: the one request let through after the backoff has not been answered yet.
	trying bool
}

// wrap returns rt behind the breaker; every client of the connection shares its state.
func (b *breaker) wrap(rt http.RoundTripper) http.RoundTripper {
	return &breakerTransport{breaker: b, next: rt}
}

type breakerTransport struct {
	*breaker
	next http.RoundTripper
}

func (t *breakerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if isWatch(req) {
		return t.next.RoundTrip(req)
	}
	trial, err := t.admit()
	if err != nil {
		return nil, err
	}
	resp, err := t.next.RoundTrip(req)
	t.settle(trial, req.Context(), err)
	return resp, err
}

// WrappedRoundTripper lets client-go find the transport under this one.
func (t *breakerTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

// admit lets a request through, as the trial when the breaker was open, or refuses it.
func (b *breaker) admit() (trial bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.backoff == 0:
		return false, nil
	case b.trying:
		return false, &UnresponsiveError{}
	case b.clock.Now().Before(b.until):
		return false, &UnresponsiveError{Until: b.until}
	}
	b.trying = true
	return true, nil
}

// settle records how a request ended: a timeout of the connection's own opens the breaker (for
// longer each time), an answer closes it. A caller that gave up (its context ended) or a
// request that failed otherwise (refused, reset: the probe judges those) teaches nothing,
// except that a trial that did not time out is over.
func (b *breaker) settle(trial bool, caller context.Context, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if trial {
		b.trying = false
	}
	switch {
	case err == nil:
		b.backoff, b.until = 0, time.Time{}
	case errors.Is(err, context.DeadlineExceeded) && caller.Err() == nil:
		b.backoff = min(max(2*b.backoff, DefaultUnresponsiveBackoff), MaxUnresponsiveBackoff)
		b.until = b.clock.Now().Add(b.backoff)
	}
}

// unresponsive reports whether the cluster's requests fail at once now, and when to look again:
// when the backoff ends, or, while a request is being tried, in a second.
func (b *breaker) unresponsive() (retry time.Time, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	switch {
	case b.backoff == 0:
		return time.Time{}, false
	case now.Before(b.until):
		return b.until, true
	case b.trying:
		return now.Add(time.Second), true
	}
	return time.Time{}, false
}

// Unresponsive reports whether the cluster let requests time out lately, so that its requests
// other than watches and probes fail at once (UnresponsiveError), and when to try again.
// Callers can say so and wait instead of sending requests bound to fail.
func (c *Connection) Unresponsive() (retry time.Time, ok bool) {
	if c.breaker == nil {
		return time.Time{}, false
	}
	return c.breaker.unresponsive()
}
