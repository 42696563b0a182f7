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
