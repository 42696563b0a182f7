package scheduling

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/metrics"
)

// What brings a status object to a reconcile (holdfast_reconciles_total's trigger label), most
// urgent first: when several are coalesced into one reconcile (the queue holds a request once),
// that reconcile counts once, with the most urgent of them.
const (
	// TriggerDrift: a watch on the cluster saw one of its objects drift.
	TriggerDrift = "drift"
	// triggerRequest: holdfast.dev/reconcile-requested-at changed on the status object or its
	// service set.
	triggerRequest = "request"
	// triggerHub: a hub object it depends on changed: the status object, its service set, a
	// template or what one reads, the Cluster, a status object it is in conflict with.
	triggerHub = "hub"
	// TriggerRecheck: a comparison with the cluster was asked for: a watch of the cluster
	// (re)listed, its link recovered, another service set took its objects.
	TriggerRecheck = "recheck"
	// triggerStart: the initial list of a watch at start.
	triggerStart = "start"
	// triggerRequeue: the reconcile came back on its own: its next full reconcile, a correction
	// window, a retry, a backoff after an error.
	triggerRequeue = "requeue"
)

// urgency ranks triggers: higher wins a coalescing.
var urgency = map[string]int{
	triggerRequeue: 0, triggerStart: 1, TriggerRecheck: 2, triggerHub: 3, triggerRequest: 4, TriggerDrift: 5,
}

// Queue is the controller's work queue: controller-runtime's priority queue, which also records,
// for each request waiting in it, when it became ready and what brought it, so that a reconcile
// that starts counts its trigger and how long it waited by priority (controller-runtime's
// workqueue_queue_duration_seconds has no priority label). It holds one entry per request in
// the queue, taken when the request is: the queue's own size bounds it. It is safe for
// concurrent use.
type Queue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	controller  string
	rateLimiter workqueue.TypedRateLimiter[reconcile.Request]
	clock       clock.PassiveClock

	mu      sync.Mutex
	waiting map[reconcile.Request]enqueued
}

// enqueued is what the queue knows of a request waiting in it.
type enqueued struct {
	readyAt time.Time
	trigger string
}

// NewQueue is what controller.Options.NewQueue makes for the controller named name, with rate
// limiter rl: the priority queue, wrapped.
func NewQueue(c clock.PassiveClock, name string, rl workqueue.TypedRateLimiter[reconcile.Request]) *Queue {
	return &Queue{
		PriorityQueue: priorityqueue.New(name, func(o *priorityqueue.Opts[reconcile.Request]) { o.RateLimiter = rl }),
		controller:    name, rateLimiter: rl, clock: c, waiting: map[reconcile.Request]enqueued{},
	}
}

// Add, AddAfter, AddRateLimited and AddWithOpts are the additions of the controller itself (a
// reconcile coming back) and of sources not tagged with a trigger (see add).
func (q *Queue) Add(item reconcile.Request) { q.AddWithOpts(priorityqueue.AddOpts{}, item) }

func (q *Queue) AddAfter(item reconcile.Request, after time.Duration) {
	q.AddWithOpts(priorityqueue.AddOpts{After: after}, item)
}

func (q *Queue) AddRateLimited(item reconcile.Request) {
	q.AddWithOpts(priorityqueue.AddOpts{RateLimited: true}, item)
}

func (q *Queue) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	trigger := triggerHub
	if o.After > 0 || o.RateLimited {
		trigger = triggerRequeue
	}
	q.add(trigger, o, items...)
}

// add adds items brought by trigger; one added at handler.LowPriority comes from a watch's
// initial list (controller-runtime's handlers give those that priority), whatever the source.
func (q *Queue) add(trigger string, o priorityqueue.AddOpts, items ...reconcile.Request) {
	if o.Priority != nil && *o.Priority == handler.LowPriority {
		trigger = triggerStart
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, item := range items {
		opts := o
		if opts.RateLimited {
			// What the priority queue would do, done here to know when the item is ready: the
			// rate limiter's delay, if shorter than the one asked for.
			if after := q.rateLimiter.When(item); opts.After == 0 || after < opts.After {
				opts.After = after
			}
			opts.RateLimited = false
		}
		in := enqueued{readyAt: q.clock.Now().Add(opts.After), trigger: trigger}
		if prev, ok := q.waiting[item]; ok {
			// The queue keeps the request once, ready at the earliest of its additions.
			if prev.readyAt.Before(in.readyAt) {
				in.readyAt = prev.readyAt
			}
			if urgency[prev.trigger] > urgency[in.trigger] {
				in.trigger = prev.trigger
			}
		}
		q.waiting[item] = in
		q.PriorityQueue.AddWithOpts(opts, item)
	}
}

// GetWithPriority takes a request for a reconcile, and counts its trigger and wait. A request
// the queue holds no entry for (added again as it was being taken) counts as a requeue and no
// wait.
func (q *Queue) GetWithPriority() (reconcile.Request, int, bool) {
	item, priority, shutdown := q.PriorityQueue.GetWithPriority()
	if shutdown {
		return item, priority, shutdown
	}
	q.mu.Lock()
	in, ok := q.waiting[item]
	delete(q.waiting, item)
	q.mu.Unlock()
	if !ok {
		metrics.ReconcileStarted(q.controller, triggerRequeue)
		return item, priority, shutdown
	}
	metrics.ReconcileStarted(q.controller, in.trigger)
	metrics.ObserveQueueWait(q.controller, priority, max(q.clock.Since(in.readyAt), 0))
	return item, priority, shutdown
}

// Get is GetWithPriority without the priority.
func (q *Queue) Get() (reconcile.Request, bool) {
	item, _, shutdown := q.GetWithPriority()
	return item, shutdown
}

// tagged is the queue as a source's handler sees it: its additions carry trigger.
type tagged struct {
	*Queue
	trigger string
}

func (t tagged) Add(item reconcile.Request) { t.AddWithOpts(priorityqueue.AddOpts{}, item) }

func (t tagged) AddAfter(item reconcile.Request, after time.Duration) {
	t.AddWithOpts(priorityqueue.AddOpts{After: after}, item)
}

func (t tagged) AddRateLimited(item reconcile.Request) {
	t.AddWithOpts(priorityqueue.AddOpts{RateLimited: true}, item)
}

func (t tagged) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	t.add(t.trigger, o, items...)
}

// Triggered makes what h adds to the queue carry the trigger trigger returns for each event,
// given the object before and after it (the zero value where there is none: before a create or
// a generic event, after a delete).
func Triggered[T any](h handler.TypedEventHandler[T, reconcile.Request], trigger func(before, after T) string) handler.TypedEventHandler[T, reconcile.Request] {
	return &triggeredHandler[T]{h: h, trigger: trigger}
}

type triggeredHandler[T any] struct {
	h       handler.TypedEventHandler[T, reconcile.Request]
	trigger func(before, after T) string
}

type rateLimitingQueue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// tag returns q with its additions carrying trigger, or q if it is not the controller's queue.
func tag(q rateLimitingQueue, trigger string) rateLimitingQueue {
	if cq, ok := q.(*Queue); ok {
		return tagged{Queue: cq, trigger: trigger}
	}
	return q
}

func (t *triggeredHandler[T]) Create(ctx context.Context, e event.TypedCreateEvent[T], q rateLimitingQueue) {
	var zero T
	t.h.Create(ctx, e, tag(q, t.trigger(zero, e.Object)))
}

func (t *triggeredHandler[T]) Update(ctx context.Context, e event.TypedUpdateEvent[T], q rateLimitingQueue) {
	t.h.Update(ctx, e, tag(q, t.trigger(e.ObjectOld, e.ObjectNew)))
}

func (t *triggeredHandler[T]) Delete(ctx context.Context, e event.TypedDeleteEvent[T], q rateLimitingQueue) {
	var zero T
	t.h.Delete(ctx, e, tag(q, t.trigger(e.Object, zero)))
}

func (t *triggeredHandler[T]) Generic(ctx context.Context, e event.TypedGenericEvent[T], q rateLimitingQueue) {
	var zero T
	t.h.Generic(ctx, e, tag(q, t.trigger(zero, e.Object)))
}

// Always is a trigger function for a source whose every event brings the same trigger.
func Always[T any](trigger string) func(before, after T) string {
	return func(T, T) string { return trigger }
}

// RequestOrHub is the trigger of a service set's events: request when its
// holdfast.dev/reconcile-requested-at changed, hub otherwise.
func RequestOrHub(before, after client.Object) string {
	if before != nil && after != nil && before.GetAnnotations()[holdfastv1.ReconcileRequestedAtAnnotation] != after.GetAnnotations()[holdfastv1.ReconcileRequestedAtAnnotation] {
		return triggerRequest
	}
	return triggerHub
}

// maxErrorBackoff bounds how long a status object whose reconcile failed (the hub unreachable, a
// status patch refused) waits before it is tried again. controller-runtime's default backoff
// grows to 1,000 s: drift a watch reported during a hub outage, kept in memory, then waited for
// as long after the hub was back, since nothing else brings its reconcile (test/soak: a
// Report-mode drift made while the hub was down reported 15 s after it was back).
const maxErrorBackoff = 5 * time.Second

// RateLimiter is controller-runtime's default (per-item exponential backoff from 5 ms, and 10
// retries a second overall, in bursts of 100) with the per-item backoff capped at
// maxErrorBackoff.
func RateLimiter() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Millisecond, maxErrorBackoff),
		&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}

// NoteRequests passes every event; an update of a status object's
// holdfast.dev/reconcile-requested-at marks its coming addition to the queue (by the status
// object's own source, which cannot be tagged like the others) as a request. queue returns the
// controller's queue, nil before it started.
func NoteRequests(queue func() *Queue) predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		if q := queue(); q != nil && RequestOrHub(e.ObjectOld, e.ObjectNew) == triggerRequest {
			q.note(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(e.ObjectNew)}, triggerRequest)
		}
		return true
	}}
}

// note records trigger for a request about to be added.
func (q *Queue) note(item reconcile.Request, trigger string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	in, ok := q.waiting[item]
	if !ok {
		in.readyAt = q.clock.Now()
	}
	if !ok || urgency[trigger] > urgency[in.trigger] {
		in.trigger = trigger
	}
	q.waiting[item] = in
}
