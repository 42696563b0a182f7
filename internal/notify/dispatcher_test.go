package notify

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

type hit struct {
	at     time.Time
	header http.Header
	body   []byte
}

// scripted is a test server whose n-th request (from 0) is answered by answer; it records the
// requests.
type scripted struct {
	*httptest.Server
	mu   sync.Mutex
	hits []hit
}

func newScripted(t *testing.T, answer func(n int, w http.ResponseWriter, r *http.Request)) *scripted {
	t.Helper()
	s := &scripted{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.hits)
		s.hits = append(s.hits, hit{at: time.Now(), header: r.Header.Clone(), body: b})
		s.mu.Unlock()
		answer(n, w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *scripted) got() []hit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]hit(nil), s.hits...)
}

func webhook(name, url string) Target {
	return Target{Name: name, Type: holdfastv1.NotificationWebhook, URL: url, HMACKey: []byte("k")}
}

func TestRetries(t *testing.T) {
	status := func(codes ...int) func(int, http.ResponseWriter, *http.Request) {
		return func(n int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(codes[min(n, len(codes)-1)]) }
	}
	cases := []struct {
		name         string
		answer       func(int, http.ResponseWriter, *http.Request)
		maxAttempts  int
		wantRequests int
		wantStatus   int // of the final error; 0 for success
	}{
		{"500 then success", status(500, 502, 200), 0, 3, 0},
		{"408 is retried", status(408, 200), 0, 2, 0},
		{"400 is not retried", status(400, 200), 0, 1, 400},
		{"404 is not retried", status(404, 200), 0, 1, 404},
		{"gives up after MaxAttempts", status(503), 3, 3, 503},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newScripted(t, c.answer)
			h := start(t, Options{MaxAttempts: c.maxAttempts})
			name := "retry-" + strings.ReplaceAll(c.name, " ", "-")
			retried, sent, failed := notifications(t, name, "retried"), notifications(t, name, "sent"), notifications(t, name, "failed")

			h.d.Send(webhook(name, srv.URL), deploymentDrift())
			r := h.next(t)
			hits := srv.got()
			if len(hits) != c.wantRequests {
				t.Fatalf("receiver got %d requests, want %d", len(hits), c.wantRequests)
			}
			for _, hh := range hits[1:] {
				if string(hh.body) != string(hits[0].body) {
					t.Fatalf("a retry sent another body:\n%s\n%s", hh.body, hits[0].body)
				}
			}
			var se *StatusError
			switch {
			case c.wantStatus == 0 && r.err != nil:
				t.Fatalf("outcome %v, want delivered", r.err)
			case c.wantStatus != 0 && (!errors.As(r.err, &se) || se.StatusCode != c.wantStatus):
				t.Fatalf("outcome %v, want a %d StatusError", r.err, c.wantStatus)
			}
			if got := notifications(t, name, "retried") - retried; got != float64(c.wantRequests-1) {
				t.Errorf("retried counted %v times, want %d", got, c.wantRequests-1)
			}
			wantSent, wantFailed := 1.0, 0.0
			if c.wantStatus != 0 {
				wantSent, wantFailed = 0, 1
			}
			if notifications(t, name, "sent")-sent != wantSent || notifications(t, name, "failed")-failed != wantFailed {
				t.Errorf("sent/failed counted %v/%v, want %v/%v", notifications(t, name, "sent")-sent, notifications(t, name, "failed")-failed, wantSent, wantFailed)
			}
			if c.wantStatus >= 400 && c.wantStatus < 500 && !strings.Contains(h.logs.String(), `"status"=`+strconv.Itoa(c.wantStatus)) {
				t.Errorf("the rejection is not logged with its status:\n%s", h.logs)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	cases := []struct {
		name       string
		retryAfter string
		maxBackoff time.Duration
		minWait    time.Duration
		maxWait    time.Duration
	}{
		{"waits as long as the receiver asks", "1", 5 * time.Second, 900 * time.Millisecond, 4 * time.Second},
		{"capped by MaxBackoff", "3600", 20 * time.Millisecond, 0, 2 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newScripted(t, func(n int, w http.ResponseWriter, _ *http.Request) {
				if n == 0 {
					w.Header().Set("Retry-After", c.retryAfter)
					w.WriteHeader(http.StatusTooManyRequests)
				}
			})
			h := start(t, Options{MaxBackoff: c.maxBackoff})
			h.d.Send(webhook("limited", srv.URL), deploymentDrift())
			if r := h.next(t); r.err != nil {
				t.Fatalf("outcome %v, want delivered after the 429", r.err)
			}
			hits := srv.got()
			if len(hits) != 2 {
				t.Fatalf("receiver got %d requests, want 2", len(hits))
			}
			if wait := hits[1].at.Sub(hits[0].at); wait < c.minWait || wait > c.maxWait {
				t.Fatalf("retried after %v, want between %v and %v", wait, c.minWait, c.maxWait)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	d := New(Options{InitialBackoff: 100 * time.Millisecond, MaxBackoff: time.Second})
	for attempt, want := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond, 5: time.Second, 60: time.Second} {
		for range 20 {
			if got := d.backoff(attempt, errors.New("refused")); got < want/2 || got > want {
				t.Fatalf("backoff after attempt %d = %v, want within [%v, %v]", attempt, got, want/2, want)
			}
		}
	}
}

// TestSendDoesNotBlock fills the queue of a target whose receiver hangs.
func TestSendDoesNotBlock(t *testing.T) {
	arrived := make(chan struct{}, 10)
	srv := newScripted(t, func(_ int, _ http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-r.Context().Done()
	})
	other, otherGot := receiver(t, http.StatusOK)
	h := start(t, Options{QueueSize: 2, Timeout: time.Minute})
	dropped := notifications(t, "stuck", "dropped")

	h.d.Send(webhook("stuck", srv.URL), deploymentDrift())
	<-arrived // the worker is busy with the first event; the queue is empty
	began := time.Now()
	accepted := []bool{
		h.d.Send(webhook("stuck", srv.URL), deploymentDrift()),
		h.d.Send(webhook("stuck", srv.URL), deploymentDrift()),
		h.d.Send(webhook("stuck", srv.URL), deploymentDrift()),
	}
	if took := time.Since(began); took > time.Second {
		t.Fatalf("three Sends took %v with the receiver hanging, want no waiting", took)
	}
	if !accepted[0] || !accepted[1] || accepted[2] {
		t.Fatalf("Send returned %v with a queue of 2, want true, true, false", accepted)
	}
	if r := h.next(t); !errors.Is(r.err, ErrQueueFull) {
		t.Fatalf("outcome %v, want ErrQueueFull for the dropped event", r.err)
	}
	if got := notifications(t, "stuck", "dropped") - dropped; got != 1 {
		t.Fatalf("dropped counted %v times, want 1", got)
	}

	// Another target has its own worker and is not held up.
	h.d.Send(webhook("other", other.URL), deploymentDrift())
	if r := h.next(t); r.err != nil || r.target != "other" {
		t.Fatalf("outcome %+v, want the other target delivered", r)
	}
	<-otherGot
}

// TestOrderPerTarget sends numbered events; the third fails once, and still no later event
// overtakes it.
func TestOrderPerTarget(t *testing.T) {
	srv := newScripted(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	h := start(t, Options{})
	const count = 10
	for i := range count {
		e := deploymentDrift()
		e.Message = strconv.Itoa(i)
		if !h.d.Send(webhook("ordered", srv.URL), e) {
			t.Fatalf("event %d dropped", i)
		}
	}
	for i := range count {
		if r := h.next(t); r.err != nil || r.event.Message != strconv.Itoa(i) {
			t.Fatalf("outcome %d = %q %v, want event %d delivered", i, r.event.Message, r.err, i)
		}
	}
	var got []string
	for _, hh := range srv.got() {
		var p struct{ Message string }
		if err := json.Unmarshal(hh.body, &p); err != nil {
			t.Fatal(err)
		}
		got = append(got, p.Message)
	}
	if want := "0 1 2 2 3 4 5 6 7 8 9"; strings.Join(got, " ") != want {
		t.Fatalf("receiver got events %v, want %s", got, want)
	}
}

// TestTargetChange sends through one target name with a new URL: the next event goes to it.
func TestTargetChange(t *testing.T) {
	before, beforeGot := receiver(t, http.StatusOK)
	after, afterGot := receiver(t, http.StatusOK)
	h := start(t, Options{})
	h.d.Send(webhook("moving", before.URL), deploymentDrift())
	h.next(t)
	h.d.Send(webhook("moving", after.URL), deploymentDrift())
	h.next(t)
	if len(beforeGot) != 1 || len(afterGot) != 1 {
		t.Fatalf("old URL got %d, new URL got %d requests, want one each", len(beforeGot), len(afterGot))
	}
}

// TestNetworkErrorsDoNotLeak fails deliveries without a response and searches the outcome and
// the logs for the URL.
func TestNetworkErrorsDoNotLeak(t *testing.T) {
	refused := httptest.NewServer(http.NotFoundHandler())
	refused.Close()
	hang := newScripted(t, func(_ int, _ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	cases := []struct {
		name, url, reason string
	}{
		{"connection refused", refused.URL + "/hooks/XXXXsecretpath", "connection refused"},
		{"timeout", hang.URL + "/hooks/XXXXsecretpath", "timed out"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := start(t, Options{MaxAttempts: 2, Timeout: 50 * time.Millisecond})
			h.d.Send(webhook("down", c.url), deploymentDrift())
			r := h.next(t)
			if r.err == nil || !strings.Contains(r.err.Error(), c.reason) {
				t.Fatalf("outcome %v, want %q", r.err, c.reason)
			}
			host := strings.TrimPrefix(refused.URL, "http://")
			port := host[strings.LastIndex(host, ":"):]
			if c.name == "timeout" {
				port = hang.URL[strings.LastIndex(hang.URL, ":"):]
			}
			for _, s := range []string{r.err.Error(), h.logs.String()} {
				if strings.Contains(s, "secretpath") || strings.Contains(s, "127.0.0.1") || strings.Contains(s, port) {
					t.Errorf("%q shows the URL", s)
				}
			}
			if !strings.Contains(h.logs.String(), `"target"="down"`) {
				t.Errorf("the failure is not logged with the target name:\n%s", h.logs)
			}
		})
	}
}

// TestShutdown stops the Dispatcher with one event in flight and two queued.
func TestShutdown(t *testing.T) {
	arrived := make(chan struct{}, 10)
	srv := newScripted(t, func(_ int, _ http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-r.Context().Done()
	})
	h := start(t, Options{Timeout: time.Minute})
	for range 3 {
		h.d.Send(webhook("closing", srv.URL), deploymentDrift())
	}
	<-arrived // Start is running
	if err := h.d.Start(t.Context()); err == nil {
		t.Fatalf("a second Start succeeded")
	}
	h.stop()
	for range 3 {
		if r := h.next(t); !errors.Is(r.err, ErrStopped) {
			t.Fatalf("outcome %v, want ErrStopped", r.err)
		}
	}
	if h.d.Send(webhook("closing", srv.URL), deploymentDrift()) {
		t.Fatalf("Send accepted an event after the Dispatcher stopped")
	}
}

// TestIdleWorkerRetires lets a target's worker go idle: it exits, and the target's next event
// starts another.
func TestIdleWorkerRetires(t *testing.T) {
	srv, got := receiver(t, http.StatusOK)
	h := start(t, Options{})
	h.d.idle = 10 * time.Millisecond
	workers := func() int {
		h.d.mu.Lock()
		defer h.d.mu.Unlock()
		return len(h.d.workers)
	}
	h.d.Send(webhook("rare", srv.URL), deploymentDrift())
	h.next(t)
	deadline := time.Now().Add(5 * time.Second)
	for workers() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the idle worker is still there")
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.d.Send(webhook("rare", srv.URL), deploymentDrift())
	if r := h.next(t); r.err != nil {
		t.Fatalf("outcome %v after the worker retired, want delivered", r.err)
	}
	if len(got) != 2 {
		t.Fatalf("receiver got %d requests, want 2", len(got))
	}
}
