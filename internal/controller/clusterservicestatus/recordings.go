package clusterservicestatus

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// A drift correction ends with recording it: the whole status object read from the hub and its
// status patched, two requests to a hub that may be busy (a template change rolling out to the
// fleet writes every status object meanwhile). A status object is reconciled by one worker at a
// time, so a correction that had to wait for the previous one's recording would wait for the
// hub, once per drift: bench/fleet1000 -bystander saw a cluster outside a 100-cluster rollout
// corrected 5–7× slower than at rest, most of it queued behind its own last recording.
//
// So a reconcile that only corrected drifts (scope.corrections) records in the background and
// gives its status object back to the queue at once, as soon as the drifted objects are put back:
// the next drift is put back while the last one is recorded. The recordings of one status object
// still happen one at a time and in order, each on what the previous one wrote (begin), and
// readWhole, the only place a reconcile reads the whole status object, waits for the recordings
// in flight first.

// recordings are the status objects being recorded in the background.
type recordings struct {
	mu sync.Mutex
	// inFlight holds, per status object, a channel closed when its recording is done.
	inFlight map[types.NamespacedName]chan struct{}
	// failed are the status objects whose last recording in the background failed: their next
	// reconcile records in the foreground, so that an error (the hub away) gets the queue's
	// backoff, which the reconcile that handed its recording over reset by succeeding.
	failed map[types.NamespacedName]bool
	// postponed are the status objects whose reconcile was put off until their recordings in
	// flight are done (postpone); onDone is told of each when they are.
	postponed map[types.NamespacedName]bool
	onDone    func(key types.NamespacedName)
	wg        sync.WaitGroup
}

// fail marks key's recording failed; recorded clears the mark; inBackground says whether key's
// next recording may be made in the background.
func (rs *recordings) fail(key types.NamespacedName) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.failed == nil {
		rs.failed = map[types.NamespacedName]bool{}
	}
	rs.failed[key] = true
}

func (rs *recordings) recorded(key types.NamespacedName) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	delete(rs.failed, key)
}

func (rs *recordings) inBackground(key types.NamespacedName) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return !rs.failed[key]
}

// begin makes key's recording the one in flight; the returned func ends it. prev, if not nil,
// is closed when the recording before it is done, which it waits for first: recordings of one
// status object are made in the order their reconciles ran.
func (rs *recordings) begin(key types.NamespacedName) (prev <-chan struct{}, end func()) {
	done := make(chan struct{})
	rs.mu.Lock()
	if rs.inFlight == nil {
		rs.inFlight = map[types.NamespacedName]chan struct{}{}
	}
	if p, ok := rs.inFlight[key]; ok {
		prev = p
	}
	rs.inFlight[key] = done
	rs.mu.Unlock()
	rs.wg.Add(1)
	return prev, func() {
		rs.mu.Lock()
		resume := false
		if rs.inFlight[key] == done {
			delete(rs.inFlight, key)
			resume = rs.postponed[key]
			delete(rs.postponed, key)
		}
		rs.mu.Unlock()
		close(done)
		if resume && rs.onDone != nil {
			rs.onDone(key)
		}
		rs.wg.Done()
	}
}

// postpone reports whether a recording of key is in flight, and if so marks key for onDone
// once every recording of it begun so far is done. A reconcile that would wait for them
// (readWhole) ends instead and comes back then: waiting, it would hold its status object, and
// a drift seen meanwhile would wait with it.
func (rs *recordings) postpone(key types.NamespacedName) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.inFlight[key] == nil {
		return false
	}
	if rs.postponed == nil {
		rs.postponed = map[types.NamespacedName]bool{}
	}
	rs.postponed[key] = true
	return true
}

// wait returns once key has no recording in flight (the last one begun is done, and with it
// those before), or ctx ended.
func (rs *recordings) wait(ctx context.Context, key types.NamespacedName) error {
	rs.mu.Lock()
	done := rs.inFlight[key]
	rs.mu.Unlock()
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// busy reports whether a recording of key is in flight.
func (rs *recordings) busy(key types.NamespacedName) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.inFlight[key] != nil
}

// drain waits for every recording in flight (on shutdown).
func (rs *recordings) drain() { rs.wg.Wait() }
