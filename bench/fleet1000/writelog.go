package main

import (
	"net/http"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"holdfast.dev/holdfast/internal/measure"
)

// writeLog records what each controller replica sent to the simulated clusters, so that a
// correction can be attributed to the replica that sent it: every write (when it was sent, the
// request, its answer) and, per cluster, when the replica first sent it anything since the
// last mark (Mark). It is safe for concurrent use.
type writeLog struct {
	mu     sync.Mutex
	writes []write
	// first is, per replica and cluster, the first request sent at or after mark.
	first map[string]map[string]time.Time
	mark  time.Time
}

// write is one mutating request to a simulated cluster, health probes' reviews and dry runs
// left out (the API server persists nothing for them).
type write struct {
	replica, cluster string
	at               time.Time
	req              measure.Request
}

// ok reports whether the API server accepted the write.
func (w write) ok() bool { return w.req.Code >= 200 && w.req.Code < 300 }

func newWriteLog() *writeLog { return &writeLog{first: map[string]map[string]time.Time{}} }

// transport wraps replica's transports to the simulated clusters (controller.Options.TargetTransport).
func (l *writeLog) transport(replica string) func(types.NamespacedName, http.RoundTripper) http.RoundTripper {
	return func(cluster types.NamespacedName, next http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			at := time.Now()
			r := measure.Classify(req.Method, req.URL, req.Header.Get("Content-Type"))
			l.sent(replica, cluster.Name, at)
			resp, err := next.RoundTrip(req)
			if resp != nil {
				r.Code = resp.StatusCode
			}
			if r.Mutating() && !r.Review() && !r.DryRun {
				l.mu.Lock()
				l.writes = append(l.writes, write{replica: replica, cluster: cluster.Name, at: at, req: r})
				l.mu.Unlock()
			}
			return resp, err
		})
	}
}

func (l *writeLog) sent(replica, cluster string, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if at.Before(l.mark) {
		return
	}
	byCluster := l.first[replica]
	if byCluster == nil {
		byCluster = map[string]time.Time{}
		l.first[replica] = byCluster
	}
	if _, seen := byCluster[cluster]; !seen {
		byCluster[cluster] = at
	}
}

// Mark forgets the first requests seen so far: First tells those sent at or after t.
func (l *writeLog) Mark(t time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mark = t
	l.first = map[string]map[string]time.Time{}
}

// Writes are the writes sent at or after since, in the order they were answered.
func (l *writeLog) Writes(since time.Time) []write {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []write
	for _, w := range l.writes {
		if !w.at.Before(since) {
			out = append(out, w)
		}
	}
	return out
}

// First is when replica first sent cluster a request since the last mark.
func (l *writeLog) First(replica, cluster string) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, ok := l.first[replica][cluster]
	return t, ok
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
