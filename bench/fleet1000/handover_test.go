package main

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"holdfast.dev/holdfast/internal/measure"
	"holdfast.dev/holdfast/internal/sharding"
)

// apply is an accepted server-side apply of a ConfigMap of cluster by replica at t.
func apply(replica, cluster, name string, t time.Time) write {
	u := &url.URL{Path: "/api/v1/namespaces/" + cluster + "/configmaps/" + name}
	r := measure.Classify(http.MethodPatch, u, "application/apply-patch+yaml")
	r.Code = http.StatusOK
	return write{replica: replica, cluster: cluster, at: t, req: r}
}

func TestAnalyseAttributesWritesToEdits(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	killed := at(10)
	owner := map[string]string{"sim-a": "replica-1", "sim-b": "replica-2"}
	r := &handoverResult{n: 2, replicas: 2, ids: []string{"replica-1", "replica-2"}, namespace: "fleet",
		victim: "replica-2", victimClusters: []string{"sim-b"}, began: t0, killed: killed, ended: at(30)}
	log := newWriteLog()
	log.writes = []write{
		apply("replica-1", "sim-a", "config-00", at(1.1)),  // corrects edit 1
		apply("replica-2", "sim-b", "config-00", at(2.1)),  // corrects edit 2
		apply("replica-1", "sim-a", "config-01", at(3.1)),  // corrects edit 3 ...
		apply("replica-2", "sim-a", "config-01", at(3.2)),  // ... and a second replica writes it too
		apply("replica-2", "sim-b", "config-01", at(11)),   // the killed replica after the kill
		apply("replica-1", "sim-b", "config-02", at(18)),   // the survivor's first on sim-b
		apply("replica-1", "sim-a", "config-00", at(20.1)), // corrects edit 5, which ends edit 1's window
	}
	log.first = map[string]map[string]time.Time{"replica-1": {"sim-b": at(17.5)}}
	edit := func(ns, name string, send, corrected float64) *measure.EditRun {
		e := &measure.EditRun{Namespace: ns, Name: name, TSend: at(send), T0: at(send + 0.01)}
		if corrected > 0 {
			e.Corrected = at(corrected)
		}
		return e
	}
	runs := []*measure.EditRun{
		edit("sim-a", "config-00", 1, 1.2),
		edit("sim-b", "config-00", 2, 2.2),
		edit("sim-a", "config-01", 3, 3.15),
		edit("sim-b", "config-02", 12, 18.1),
		edit("sim-a", "config-00", 20, 20.2),
		edit("sim-a", "config-02", 25, 0), // never corrected
	}
	r.analyse(log, runs, owner, sharding.NewView("replica-1"))

	if len(r.twice) != 1 || r.twiceByTwo != 1 {
		t.Errorf("written more than once: %q (by two replicas: %d), want only sim-a/config-01, by two replicas", r.twice, r.twiceByTwo)
	}
	if len(r.victimAfter) != 1 {
		t.Errorf("writes of the killed replica after the kill: %q, want 1", r.victimAfter)
	}
	if !r.firstWriteOK || r.firstWrite != 8*time.Second {
		t.Errorf("first write to a killed replica's cluster %s after the kill (found: %v), want 8s", r.firstWrite, r.firstWriteOK)
	}
	if r.reached != 1 || r.lastReached != 7500*time.Millisecond {
		t.Errorf("killed replica's clusters reached: %d, the last %s after the kill; want 1, 7.5s", r.reached, r.lastReached)
	}
	if len(r.uncorrected) != 1 || r.unwritten != 0 {
		t.Errorf("never corrected: %q, corrected without a write: %d; want sim-a/config-02 and 0", r.uncorrected, r.unwritten)
	}
	if n, failed, uncorrected := r.corrected(); n != 6 || failed != 0 || uncorrected != 1 {
		t.Errorf("edits %d, failed %d, never corrected %d; want 6, 0, 1", n, failed, uncorrected)
	}
}

func TestSharesFindsHandOverAndGaps(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	r := &handoverResult{n: 10, replicas: 2, ids: []string{"replica-1", "replica-2"}, victim: "replica-2", killed: at(10)}
	held := func(a, b int) map[string]int { return map[string]int{"replica-1": a, "replica-2": b} }
	r.shares([]gaugeSample{
		{at(1), held(6, 4)},
		{at(2), held(0, 4)}, // replica-1 could not renew its Lease
		{at(3), held(6, 4)},
		{at(10), held(6, 4)}, // the kill: the killed replica's gauge no longer counts
		{at(12), held(6, 0)},
		{at(17.5), held(10, 0)},
		{at(20), held(0, 0)},
		{at(21), held(10, 0)},
	})
	if !r.heldAllOK || r.heldAll != 7500*time.Millisecond {
		t.Errorf("survivors held every cluster %s after the kill (seen: %v), want 7.5s", r.heldAll, r.heldAllOK)
	}
	want := []gap{{from: at(2), to: at(3), fewest: 4}, {from: at(20), to: at(21), fewest: 0}}
	if len(r.gaps) != len(want) {
		t.Fatalf("gaps %+v, want %+v", r.gaps, want)
	}
	for i := range want {
		if r.gaps[i] != want[i] {
			t.Errorf("gap %d: %+v, want %+v", i, r.gaps[i], want[i])
		}
	}
	if r.phase(&handoverEdit{EditRun: &measure.EditRun{T0: at(12)}}) != 1 || r.phase(&handoverEdit{EditRun: &measure.EditRun{T0: at(18)}}) != 2 {
		t.Error("edits made during and after the hand-over are not told apart")
	}
}
