// Package scheduling decides when the status controller's work runs: its queue, the priorities
// in it, and the workers kept free for drift corrections.
//
// A drift a watch saw must be corrected in seconds even while a template change is rolling out
// to the whole fleet. Two things make that so. The queue is controller-runtime's priority queue
// (priority.go): a drifted status object is queued at DriftPriority, before routine work, and a
// reconcile that comes back later on its own asks for RoutinePriority (WithRoutinePriority). A
// queue only orders what waits, though: the controller has DriftWorkers workers beyond
// --concurrency, and routine reconciles take one of --concurrency RoutineSlots first
// (workers.go), so that a worker is free for a correction as soon as it is queued.
//
// The queue is wrapped (Queue, queue.go) to record when each status object became ready in it
// and what brought it: the controller's sources tag what they add (Triggered), and the
// reconcile that takes it counts its wait by priority and its trigger
// (holdfast_queue_wait_seconds, holdfast_reconciles_total), the most urgent one when several
// were coalesced. A failed reconcile is retried with a backoff capped at a few seconds
// (RateLimiter), so that drift kept in memory during a hub outage is recorded soon after.
//
// It is a package of its own because none of this is about what a reconcile does: it is shared
// state that every worker, source and watch goroutine touches, with its own bounds and tests,
// and the controller only wires it (controller.Options.NewQueue, the sources' handlers) and asks
// for a slot at the start of a reconcile.
package scheduling
