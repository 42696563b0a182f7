package scheduling

import (
	"context"
	"sync"
)

// DriftWorkers are the workers the controller has beyond --concurrency, kept for drift
// corrections. The priority queue puts a drifted status object before routine work, but a queue
// only orders what waits: with every worker busy applying a template change to the fleet, a
// correction would still wait for one of them to finish a whole reconcile (seen in
// bench/fleet1000: p99 5.5× the ideal corrector's during a 100-cluster rollout). Routine
// reconciles — anything but a status object with drifts the watches saw — take one of
// --concurrency routine slots first, so at least DriftWorkers workers are always free to take a
// correction as soon as it is queued.
const DriftWorkers = 2

// RoutineSlots bound the routine reconciles running at once. A worker that took a routine
// reconcile while every slot is held waits for a slot, and gives the reconcile back to the queue
// when a drift arrives meanwhile, so that the worker is free for it: the queue hands it the
// correction first, by priority. Nothing spins: a worker waits on a slot or on a drift.
type RoutineSlots struct {
	slots chan struct{}
	mu    sync.Mutex
	// drift is closed, and replaced, when a drifted status object is queued.
	drift chan struct{}
}

// NewRoutineSlots returns n routine slots, at least one.
func NewRoutineSlots(n int) *RoutineSlots {
	return &RoutineSlots{slots: make(chan struct{}, max(n, 1)), drift: make(chan struct{})}
}

// Acquire takes a routine slot; release gives it back. ok is false, and nothing is held, when a
// drift was queued (or ctx ended) before a slot was free: the caller gives its reconcile back.
func (s *RoutineSlots) Acquire(ctx context.Context) (release func(), ok bool) {
	release = func() { <-s.slots }
	select {
	case s.slots <- struct{}{}:
		return release, true
	default:
	}
	s.mu.Lock()
	drift := s.drift
	s.mu.Unlock()
	select {
	case s.slots <- struct{}{}:
		return release, true
	case <-drift:
		return nil, false
	case <-ctx.Done():
		return nil, false
	}
}

// DriftQueued wakes the workers waiting for a routine slot: one of them is needed for the drift
// just queued.
func (s *RoutineSlots) DriftQueued() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.drift)
	s.drift = make(chan struct{})
}
