package scheduling

import (
	"context"
	"testing"
	"time"
)

func TestRoutineSlotsLeaveWorkersForDrift(t *testing.T) {
	s := NewRoutineSlots(2)
	ctx := context.Background()
	release1, ok1 := s.Acquire(ctx)
	_, ok2 := s.Acquire(ctx)
	if !ok1 || !ok2 {
		t.Fatal("free slots were not given")
	}

	// A third routine reconcile waits while both slots are held...
	got := make(chan bool, 1)
	go func() {
		_, ok := s.Acquire(ctx)
		got <- ok
	}()
	select {
	case ok := <-got:
		t.Fatalf("a routine reconcile went ahead (%v) with every slot held", ok)
	case <-time.After(50 * time.Millisecond):
	}
	// ...and gives its worker back when a drift is queued.
	s.DriftQueued()
	select {
	case ok := <-got:
		if ok {
			t.Fatal("the waiting routine reconcile took a slot no one released")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a drift did not free the worker waiting for a routine slot")
	}

	// A waiting one takes the slot another releases.
	go func() {
		_, ok := s.Acquire(ctx)
		got <- ok
	}()
	time.Sleep(20 * time.Millisecond)
	release1()
	select {
	case ok := <-got:
		if !ok {
			t.Fatal("a released slot was not given to the waiting reconcile")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a released slot was not given to the waiting reconcile")
	}

	// A context that ends frees the worker too.
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		_, ok := s.Acquire(cctx)
		got <- ok
	}()
	cancel()
	if ok := <-got; ok {
		t.Fatal("a cancelled wait took a slot")
	}
}
