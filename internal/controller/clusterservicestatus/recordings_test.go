package clusterservicestatus

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestRecordingsAreOrderedAndAwaited(t *testing.T) {
	var rs recordings
	key := types.NamespacedName{Namespace: "ns", Name: "set.cluster"}
	other := types.NamespacedName{Namespace: "ns", Name: "set.other"}

	prev1, end1 := rs.begin(key)
	if prev1 != nil {
		t.Fatal("the first recording has one before it")
	}
	prev2, end2 := rs.begin(key)
	if prev2 == nil {
		t.Fatal("the second recording does not wait for the first")
	}
	if !rs.busy(key) || rs.busy(other) {
		t.Fatalf("busy: %v for the key, %v for another; want true, false", rs.busy(key), rs.busy(other))
	}
	if err := rs.wait(context.Background(), other); err != nil {
		t.Fatalf("waiting for a status object with no recording: %v", err)
	}

	waited := make(chan error, 1)
	go func() { waited <- rs.wait(context.Background(), key) }()
	end1()
	select {
	case <-prev2:
	case <-time.After(5 * time.Second):
		t.Fatal("the first recording's end did not let the second go on")
	}
	select {
	case err := <-waited:
		t.Fatalf("wait returned (%v) with the second recording still in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	end2()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("wait: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("wait did not return once every recording was done")
	}
	if rs.busy(key) {
		t.Fatal("still busy after every recording ended")
	}

	_, end3 := rs.begin(key)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := rs.wait(ctx, key); err == nil {
		t.Fatal("wait with an ended context returned no error")
	}
	end3()
	rs.drain()

	// A failed recording sends the next one to the foreground until one succeeds there.
	if !rs.inBackground(key) {
		t.Fatal("a status object whose recordings never failed is recorded in the foreground")
	}
	rs.fail(key)
	if rs.inBackground(key) || !rs.inBackground(other) {
		t.Fatal("after a failed recording: recorded in the background still, or another status object not")
	}
	rs.recorded(key)
	if !rs.inBackground(key) {
		t.Fatal("a recording that succeeded in the foreground did not send the next one back to the background")
	}
}

// TestPostponedReconcileComesBackAfterTheRecordings: a reconcile put off while its status
// object's recordings are in flight is asked for again once all of them are done, once; with no
// recording in flight nothing is put off.
func TestPostponedReconcileComesBackAfterTheRecordings(t *testing.T) {
	var resumed []types.NamespacedName
	rs := recordings{onDone: func(key types.NamespacedName) { resumed = append(resumed, key) }}
	key := types.NamespacedName{Namespace: "ns", Name: "set.cluster"}

	if rs.postpone(key) {
		t.Fatal("a reconcile was put off with no recording in flight")
	}
	_, end1 := rs.begin(key)
	_, end2 := rs.begin(key)
	for range 2 { // two reconciles put off: one comes back
		if !rs.postpone(key) {
			t.Fatal("a reconcile was not put off while recordings are in flight")
		}
	}
	end1()
	if len(resumed) != 0 {
		t.Fatalf("resumed %v while a recording is still in flight", resumed)
	}
	end2()
	if len(resumed) != 1 || resumed[0] != key {
		t.Fatalf("resumed %v after the last recording, want %v once", resumed, key)
	}
	_, end3 := rs.begin(key)
	end3()
	if len(resumed) != 1 {
		t.Fatalf("resumed %v after a recording nothing was put off for", resumed)
	}
}
