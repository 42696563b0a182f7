package interrupt

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestResult(t *testing.T) {
	if ended, err := Result(context.Background()); ended || err != nil {
		t.Fatalf("a live context: %v, %v", ended, err)
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	if ended, err := Result(canceled); !ended || err != nil {
		t.Fatalf("a shutdown: %v, %v; want ended without an error", ended, err)
	}
	timedOut, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-timedOut.Done()
	if ended, err := Result(timedOut); !ended || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a timeout: %v, %v; want ended with an error to retry", ended, err)
	}
	// A shutdown while a reconcile's deadline is still ahead is a shutdown.
	parent, stop := context.WithCancel(context.Background())
	child, cancelChild := context.WithTimeout(parent, time.Hour)
	defer cancelChild()
	stop()
	if ended, err := Result(child); !ended || err != nil {
		t.Fatalf("a shutdown under a deadline: %v, %v", ended, err)
	}
}

func TestUnstoppable(t *testing.T) {
	type key struct{}
	parent, stop := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	reconcileCtx, cancelReconcile := context.WithTimeout(parent, time.Hour)
	defer cancelReconcile()
	ctx, cancel := Unstoppable(reconcileCtx, time.Minute)
	defer cancel()
	stop()
	if err := ctx.Err(); err != nil {
		t.Fatalf("ended by a shutdown: %v", err)
	}
	if ctx.Value(key{}) != "v" {
		t.Fatal("the reconcile's values are lost")
	}
	if d, _ := ctx.Deadline(); !d.After(time.Now().Add(59 * time.Minute)) {
		t.Fatalf("deadline %v: want the reconcile's own, an hour away", d)
	}
	// Without a deadline of its own, limit bounds it.
	bounded, cancelBounded := Unstoppable(context.Background(), time.Millisecond)
	defer cancelBounded()
	<-bounded.Done()
	if !errors.Is(bounded.Err(), context.DeadlineExceeded) {
		t.Fatalf("without a deadline: %v", bounded.Err())
	}
	// The reconcile's timeout still ends it.
	short, cancelShort := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancelShort()
	timed, cancelTimed := Unstoppable(short, time.Hour)
	defer cancelTimed()
	<-timed.Done()
	if !errors.Is(timed.Err(), context.DeadlineExceeded) {
		t.Fatalf("past the reconcile's timeout: %v", timed.Err())
	}
}
