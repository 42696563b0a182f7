package notify

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"holdfast.dev/holdfast/internal/metrics"
	"holdfast.dev/holdfast/internal/netpolicy"
)

// Defaults of Options.
const (
	DefaultQueueSize      = 1000
	DefaultMaxAttempts    = 8
	DefaultInitialBackoff = time.Second
	DefaultMaxBackoff     = 2 * time.Minute
	DefaultTimeout        = 10 * time.Second
)

var (
	// ErrQueueFull is reported through Options.OnResult for an event dropped because its
	// target's queue was full.
	ErrQueueFull = errors.New("notification queue full")
	// ErrStopped is reported for an event sent after the Dispatcher stopped, or still queued
	// when it did.
	ErrStopped = errors.New("notification dispatcher stopped")
)

// Options configure a Dispatcher. Zero values take the defaults.
type Options struct {
	// Egress is the policy every connection to a receiver is held to: the HTTP client's by
	// default, and the SMTP server's of Email targets. nil is netpolicy.Default().
	Egress *netpolicy.Policy
	// HTTPClient sends the requests; NewHTTPClient(Egress) by default (no redirect to another
	// host). Its Timeout should be zero or longer than Timeout.
	HTTPClient *http.Client
	// QueueSize is how many events may wait per target; Send drops beyond it.
	QueueSize int
	// MaxAttempts bounds the attempts per event, the first included.
	MaxAttempts int
	// InitialBackoff is the wait after the first failed attempt; it doubles after each failure
	// (with jitter) up to MaxBackoff, which also caps a receiver's Retry-After.
	InitialBackoff, MaxBackoff time.Duration
	// Timeout bounds each attempt.
	Timeout time.Duration
	// Clock stamps each attempt of a signed message (HeaderTimestamp); the real clock by
	// default.
	Clock clock.PassiveClock
	// OnResult, when set, is called once per event with its outcome: nil when the receiver
	// accepted it, else why it was given up (*StatusError, a network error, ErrQueueFull,
	// ErrStopped). It is called from the target's worker, or from Send for a drop, and must
	// not block.
	OnResult func(target string, e Event, err error)
	// Logger defaults to controller-runtime's logger named "notify".
	Logger logr.Logger
}

func (o Options) withDefaults() Options {
	if o.HTTPClient == nil {
		o.HTTPClient = NewHTTPClient(o.Egress)
	}
	if o.QueueSize <= 0 {
		o.QueueSize = DefaultQueueSize
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.InitialBackoff <= 0 {
		o.InitialBackoff = DefaultInitialBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.MaxBackoff < o.InitialBackoff {
		o.MaxBackoff = o.InitialBackoff
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Logger.GetSink() == nil {
		o.Logger = ctrllog.Log.WithName("notify")
	}
	return o
}

// Dispatcher delivers events to their targets in the background: one worker and one bounded
// queue per target name, created on the first event for it, so that a slow or failing receiver
// delays only its own events, and each target gets its events in the order they were sent.
// Delivery is at least once per accepted event until MaxAttempts is reached (a receiver that
// times out after processing sees a retry; Event.ID is stable across retries).
type Dispatcher struct {
	opts Options
	log  logr.Logger

	// idle is how long a worker waits for an event before it exits, so that targets removed
	// from every MultiClusterService leave no goroutine behind.
	idle time.Duration

	mu      sync.Mutex
	ctx     context.Context // set by Start
	stopped bool
	workers map[string]*worker
	wg      sync.WaitGroup
}

// workerIdle is Dispatcher.idle.
const workerIdle = 10 * time.Minute

type worker struct {
	name string
	// queue holds pointers: its buffer is allocated in full for every target.
	queue chan *delivery
	// dropping is set while Send drops events for the target, so a burst is logged once.
	dropping bool
}

type delivery struct {
	target Target
	event  Event
}

// New returns a Dispatcher; events sent before Start wait in their queues.
func New(opts Options) *Dispatcher {
	opts = opts.withDefaults()
	return &Dispatcher{opts: opts, log: opts.Logger, idle: workerIdle, workers: map[string]*worker{}}
}

// Send queues e for t and returns at once: false when e was dropped because t's queue is full or
// the Dispatcher has stopped. Secret values in e are redacted first, and e is copied, so the
// caller may reuse it. The newest t is used for each event: a target whose URL or key changed
// takes effect from the next event.
func (d *Dispatcher) Send(t Target, e Event) bool {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e = redact(e)
	err := d.enqueue(t, e)
	if err == nil {
		return true
	}
	metrics.NotificationResult(t.Name, metrics.NotificationDropped)
	d.report(t.Name, e, err)
	return false
}

func (d *Dispatcher) enqueue(t Target, e Event) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return ErrStopped
	}
	w := d.workers[t.Name]
	if w == nil {
		w = &worker{name: t.Name, queue: make(chan *delivery, d.opts.QueueSize)}
		d.workers[t.Name] = w
		if d.ctx != nil {
			d.run(w)
		}
	}
	select {
	case w.queue <- &delivery{target: t, event: e}:
		w.dropping = false
		return nil
	default:
		if !w.dropping {
			d.log.Info("Notification queue full, dropping events until it drains", "target", t.Name, "queueSize", d.opts.QueueSize)
			w.dropping = true
		}
		return ErrQueueFull
	}
}

// Start delivers queued events until ctx is done; it is a controller-runtime Runnable. Events
// still queued then are not sent: they count as dropped and are reported with ErrStopped.
func (d *Dispatcher) Start(ctx context.Context) error {
	d.mu.Lock()
	if d.ctx != nil || d.stopped {
		d.mu.Unlock()
		return errors.New("notification dispatcher already started")
	}
	d.ctx = ctx
	for _, w := range d.workers {
		d.run(w)
	}
	d.mu.Unlock()

	<-ctx.Done()
	d.mu.Lock()
	d.stopped = true
	d.mu.Unlock()
	d.wg.Wait()
	// No Send queues anything any more and no worker reads: what is left was never attempted.
	for _, w := range d.workers {
		if n := len(w.queue); n > 0 {
			d.log.Info("Notifications not sent before shutdown", "target", w.name, "count", n)
		}
		for len(w.queue) > 0 {
			dl := <-w.queue
			metrics.NotificationResult(w.name, metrics.NotificationDropped)
			d.report(w.name, dl.event, ErrStopped)
		}
	}
	return nil
}

// run starts w's goroutine; d.mu is held.
func (d *Dispatcher) run(w *worker) {
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		idle := time.NewTimer(d.idle)
		defer idle.Stop()
		for {
			select {
			case <-d.ctx.Done():
				return
			case dl := <-w.queue:
				d.deliver(d.ctx, dl)
				idle.Reset(d.idle)
			case <-idle.C:
				if d.retire(w) {
					return
				}
				idle.Reset(d.idle)
			}
		}
	}()
}

// retire removes an idle worker unless an event arrived meanwhile; the next event for its
// target starts a new one.
func (d *Dispatcher) retire(w *worker) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(w.queue) > 0 {
		return false
	}
	delete(d.workers, w.name)
	return true
}

func (d *Dispatcher) report(target string, e Event, err error) {
	if d.opts.OnResult != nil {
		d.opts.OnResult(target, e, err)
	}
}
