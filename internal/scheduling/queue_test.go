package scheduling

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// queueMetrics reads, for controller, holdfast_reconciles_total by trigger and the number of
// holdfast_queue_wait_seconds observations by priority.
func queueMetrics(t *testing.T, controller string) (triggers map[string]float64, waits map[string]uint64) {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	triggers, waits = map[string]float64{}, map[string]uint64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["controller"] != controller {
				continue
			}
			switch f.GetName() {
			case "holdfast_reconciles_total":
				triggers[labels["trigger"]] = m.GetCounter().GetValue()
			case "holdfast_queue_wait_seconds":
				waits[labels["priority"]] = m.GetHistogram().GetSampleCount()
			}
		}
	}
	return triggers, waits
}

func request(name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "fleet", Name: name}}
}

// TestQueueCountsTriggersAndWaits: each reconcile counts once, with what brought it — the most
// urgent trigger when several were coalesced — and its wait by the priority it was taken at,
// measured from when it was ready (a delayed addition waits from the end of its delay).
func TestQueueCountsTriggersAndWaits(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 26, 2, 0, 0, 0, time.UTC))
	pq := NewQueue(clk, "test-triggers", workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer pq.ShutDown()
	var q workqueue.TypedRateLimitingInterface[reconcile.Request] = pq
	ctx := context.Background()

	queued := 0
	drifted := Triggered(EnqueueDrifted(func() { queued++ }), Always[*holdfastv1.ClusterServiceStatus](TriggerDrift))
	css := func(name string) *holdfastv1.ClusterServiceStatus {
		c := &holdfastv1.ClusterServiceStatus{}
		c.Namespace, c.Name = "fleet", name
		return c
	}
	drifted.Generic(ctx, event.TypedGenericEvent[*holdfastv1.ClusterServiceStatus]{Object: css("drifted")}, q)
	q.Add(request("hub"))                                                                       // a hub source's addition
	pq.AddWithOpts(priorityqueue.AddOpts{Priority: new(handler.LowPriority)}, request("start")) // initial list
	pq.AddWithOpts(priorityqueue.AddOpts{After: time.Millisecond, Priority: new(RoutinePriority)}, request("requeue"))
	q.AddRateLimited(request("backoff"))
	// Coalesced: a hub change, then a drift, then a delayed requeue: one reconcile, a drift.
	q.Add(request("coalesced"))
	drifted.Generic(ctx, event.TypedGenericEvent[*holdfastv1.ClusterServiceStatus]{Object: css("coalesced")}, q)
	q.AddAfter(request("coalesced"), time.Hour)
	if queued != 2 {
		t.Errorf("the waiting routine reconciles were woken %d times for 2 drifts queued", queued)
	}
	// A request noted by the status object's predicate, then its addition.
	pq.note(request("requested"), triggerRequest)
	q.Add(request("requested"))
	// A service set's annotation changed: request; its spec: hub.
	mcsHandler := Triggered(handler.TypedFuncs[*holdfastv1.MultiClusterService, reconcile.Request]{
		UpdateFunc: func(_ context.Context, e event.TypedUpdateEvent[*holdfastv1.MultiClusterService], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			q.Add(request("set-" + e.ObjectNew.Name))
		},
	}, func(before, after *holdfastv1.MultiClusterService) string { return RequestOrHub(before, after) })
	old, annotated := &holdfastv1.MultiClusterService{}, &holdfastv1.MultiClusterService{}
	old.Name, annotated.Name = "annotated", "annotated"
	// (controller-runtime's handlers give an update with an unchanged resourceVersion, a resync,
	// the low priority of the initial list.)
	old.ResourceVersion, annotated.ResourceVersion = "1", "2"
	annotated.Annotations = map[string]string{holdfastv1.ReconcileRequestedAtAnnotation: "1"}
	mcsHandler.Update(ctx, event.TypedUpdateEvent[*holdfastv1.MultiClusterService]{ObjectOld: old, ObjectNew: annotated}, q)
	respecced := annotated.DeepCopy()
	respecced.Name = "respecced"
	before := respecced.DeepCopy()
	respecced.ResourceVersion, respecced.Generation = "3", 2
	mcsHandler.Update(ctx, event.TypedUpdateEvent[*holdfastv1.MultiClusterService]{ObjectOld: before, ObjectNew: respecced}, q)

	const items = 9
	triggers0, waits0 := queueMetrics(t, "test-triggers")
	taken := map[string]int{}
	for range items {
		item, priority, shutdown := q.(priorityqueue.PriorityQueue[reconcile.Request]).GetWithPriority()
		if shutdown {
			t.Fatal("queue shut down")
		}
		taken[item.Name] = priority
		q.Done(item)
	}
	if taken["drifted"] != DriftPriority || taken["coalesced"] != DriftPriority {
		t.Errorf("priorities taken: %v", taken)
	}
	triggers, waits := queueMetrics(t, "test-triggers")
	want := map[string]float64{TriggerDrift: 2, triggerHub: 2, triggerStart: 1, triggerRequeue: 2, triggerRequest: 2, TriggerRecheck: 0}
	for trigger, n := range want {
		if got := triggers[trigger] - triggers0[trigger]; got != n {
			t.Errorf("reconciles by %s: %v, want %v (all: %v)", trigger, got, n, triggers)
		}
	}
	if got := waits["100"] - waits0["100"]; got != 2 {
		t.Errorf("waits at priority 100: %d, want 2 (all: %v)", got, waits)
	}
	if got := waits["-100"] - waits0["-100"]; got != 1 {
		t.Errorf("waits at priority -100: %d, want 1 (all: %v)", got, waits)
	}
	if len(pq.waiting) != 0 {
		t.Errorf("entries left after every request was taken: %v", pq.waiting)
	}
}

// TestQueueWaitsFromReadiness: a request's wait starts when it is ready — at once, or when its
// delay is over — and the earliest readiness of coalesced additions counts.
func TestQueueWaitsFromReadiness(t *testing.T) {
	start := time.Date(2026, 11, 26, 2, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(start)
	q := NewQueue(clk, "test-readiness", workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	q.AddAfter(request("a"), time.Hour)
	q.Add(request("a"))
	q.AddAfter(request("b"), time.Millisecond)
	if got := q.waiting[request("a")].readyAt; !got.Equal(start) {
		t.Errorf("a: ready at %v, want %v (the earliest addition)", got, start)
	}
	if got := q.waiting[request("b")].readyAt; !got.Equal(start.Add(time.Millisecond)) {
		t.Errorf("b: ready at %v, want its delay's end", got)
	}
	if got := q.waiting[request("a")].trigger; got != triggerHub {
		t.Errorf("a: trigger %s, want hub (more urgent than its requeue)", got)
	}
}

// A status object whose reconciles kept failing (the hub was down) is tried again within
// maxErrorBackoff once it is back, not after controller-runtime's default of up to 1,000 s:
// drift kept in memory meanwhile waits for that reconcile.
func TestErrorBackoffIsCapped(t *testing.T) {
	rl := RateLimiter()
	item := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "fleet", Name: "web.c1"}}
	var last time.Duration
	for range 30 { // 5 ms doubled 30 times is days
		last = rl.When(item)
	}
	if last != maxErrorBackoff {
		t.Fatalf("after 30 failures: tried again after %s, want %s", last, maxErrorBackoff)
	}
	rl.Forget(item)
	if d := rl.When(item); d > 10*time.Millisecond {
		t.Fatalf("after a success: %s", d)
	}
}
