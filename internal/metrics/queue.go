package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// queueWaitBuckets cover a wait in a controller's queue from a millisecond (an idle controller)
// to ten minutes (a rollout to a large fleet queued behind one worker).
var queueWaitBuckets = []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

var (
	queueWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "holdfast_queue_wait_seconds",
		Help:    "Time from a request being ready in a controller's queue (added, or its delay over) to the start of its reconcile, by the priority it had when taken.",
		Buckets: queueWaitBuckets,
	}, []string{"controller", "priority"})
	reconciles = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "holdfast_reconciles_total",
		Help: "Reconciles started, by what brought them: drift, request, hub, recheck, start, requeue (the most urgent, when several were coalesced into one).",
	}, []string{"controller", "trigger"})
)

// ObserveQueueWait records how long a request of controller waited, ready, in its queue before
// its reconcile started; priority is the priority it had when taken.
func ObserveQueueWait(controller string, priority int, d time.Duration) {
	queueWait.WithLabelValues(controller, strconv.Itoa(priority)).Observe(d.Seconds())
}

// ReconcileStarted counts one reconcile of controller brought by trigger.
func ReconcileStarted(controller, trigger string) {
	reconciles.WithLabelValues(controller, trigger).Inc()
}
