package alerting

import (
	"strings"
	"sync"
	"time"

	"k8s.io/utils/lru"

	"holdfast.dev/holdfast/internal/notify"
)

// maxLimited bounds the (rule, object, kind) keys the limiter remembers; the least recently seen
// is forgotten first, and its next event is sent as a first one.
const maxLimited = 50_000

// limiter allows one event per key in each window: the first is sent, the others until the
// window ends are held back and counted, and the first one after it carries that count.
type limiter struct {
	mu   sync.Mutex
	seen *lru.Cache
}

// window is what the limiter knows of one key: when its last event was sent, and how many
// were held back since.
type window struct {
	sent time.Time
	held int
}

func newLimiter() *limiter { return &limiter{seen: lru.New(maxLimited)} }

// allow reports whether an event of key at now may be sent with the rule's window, and how
// many of the key's events were held back before it (0 for the first).
func (l *limiter) allow(key string, now time.Time, every time.Duration) (bool, int) {
	if every <= 0 {
		return true, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if v, ok := l.seen.Get(key); ok {
		w := v.(*window)
		if now.Sub(w.sent) < every {
			w.held++
			return false, 0
		}
		held := w.held
		w.sent, w.held = now, 0
		return true, held
	}
	l.seen.Add(key, &window{sent: now})
	return true, 0
}

// limitKey is the key an event is rate-limited by for rule r: the rule, the kind of event and
// what it is about (service set, cluster, object).
func limitKey(r *Rule, e notify.Event) string {
	o := e.Object
	return strings.Join([]string{r.Namespace, r.Name, string(e.Type), e.MultiClusterService, e.Cluster.String(),
		o.Group, o.Kind, o.Namespace, o.Name}, "\x00")
}
