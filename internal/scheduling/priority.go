package scheduling

import (
	"context"

	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// Priorities in the controller's queue (controller-runtime's priority queue: higher first).
// A drift a watch saw goes before routine work: a template change rolling out to every cluster,
// periodic full reconciles and the hub's own events (default priority, 0) and the initial list
// of every status object at start (handler.LowPriority) never delay a correction.
const (
	// DriftPriority is the priority of a status object whose objects drifted.
	DriftPriority = 100
	// RoutinePriority is the priority a reconcile asks for when it comes back later on its own
	// (next full reconcile, a correction window, a backoff): whatever brought it in, the visit
	// due later is routine. A retry after an error keeps the priority it had.
	RoutinePriority = 0
	// TidyPriority is the priority of a visit that only tidies up after work done (the older
	// works of a Pull cluster, deleted once its new one is published): after everything routine,
	// so that during a fleet-wide change every cluster's new work is published first.
	TidyPriority = -10
)

// EnqueueDrifted queues the status objects sent on the drift channel at DriftPriority, then calls
// queued (RoutineSlots.DriftQueued: a worker waiting for a routine slot gives it back).
func EnqueueDrifted(queued func()) handler.TypedEventHandler[*holdfastv1.ClusterServiceStatus, reconcile.Request] {
	return handler.TypedFuncs[*holdfastv1.ClusterServiceStatus, reconcile.Request]{
		GenericFunc: func(_ context.Context, e event.TypedGenericEvent[*holdfastv1.ClusterServiceStatus], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(e.Object)}
			if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
				pq.AddWithOpts(priorityqueue.AddOpts{Priority: new(DriftPriority)}, req)
			} else {
				q.Add(req)
			}
			queued()
		},
	}
}

// WithRoutinePriority gives a result that comes back later the routine priority.
func WithRoutinePriority(res ctrl.Result) ctrl.Result {
	if res.RequeueAfter > 0 && res.Priority == nil {
		res.Priority = new(RoutinePriority)
	}
	return res
}
