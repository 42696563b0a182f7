package metrics

import (
	"testing"
	"time"
)

func TestDriftCounters(t *testing.T) {
	cases := []struct {
		name, metric string
		labels       map[string]string
		move         func()
	}{
		{"DriftDetected", "holdfast_drifts_detected_total",
			map[string]string{"cluster": "fleet/a", "service": "web", "kind": "Deployment", "type": "Changed"},
			func() { DriftDetected("fleet/a", "web", "Deployment", "Changed") }},
		{"DriftDetected, another type", "holdfast_drifts_detected_total",
			map[string]string{"cluster": "fleet/a", "service": "web", "kind": "Deployment", "type": "Deleted"},
			func() { DriftDetected("fleet/a", "web", "Deployment", "Deleted") }},
		{"DriftEventIgnored", "holdfast_drift_events_ignored_total", map[string]string{"reason": "NotDeclared"},
			func() { DriftEventIgnored(IgnoredNotDeclared) }},
		{"DriftRecordsDropped", "holdfast_drift_records_dropped_total", nil, func() { DriftRecordsDropped(1) }},
		{"DriftCorrected", "holdfast_drifts_corrected_total",
			map[string]string{"cluster": "fleet/a", "service": "web", "kind": "Deployment"},
			func() { DriftCorrected("fleet/a", "web", "Deployment") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before, _ := value(t, c.metric, c.labels)
			c.move()
			c.move()
			if got := mustValue(t, c.metric, c.labels) - before; got != 2 {
				t.Fatalf("%s%v moved by %v after two calls, want 2", c.metric, c.labels, got)
			}
		})
	}
}

func TestLatencyHistograms(t *testing.T) {
	cases := []struct {
		name, metric string
		observe      func(kind string, d time.Duration)
	}{
		{"ObserveDetection", "holdfast_drift_detection_seconds", ObserveDetection},
		{"ObserveCorrection", "holdfast_drift_correction_seconds", ObserveCorrection},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			labels := map[string]string{"kind": "Kind" + c.name}
			before := gatherHistogram(t, c.metric, labels)
			c.observe(labels["kind"], 200*time.Millisecond)
			c.observe(labels["kind"], 45*time.Second)
			h := gatherHistogram(t, c.metric, labels)
			if got := h.count - before.count; got != 2 {
				t.Fatalf("%s count moved by %d, want 2", c.metric, got)
			}
			if got := h.sum - before.sum; got < 45.19 || got > 45.21 {
				t.Fatalf("%s sum moved by %v, want 45.2 (seconds)", c.metric, got)
			}
			for le, want := range map[float64]uint64{0.001: 0, 0.1: 0, 0.25: 1, 30: 1, 60: 2} {
				if got := h.buckets[le] - before.buckets[le]; got != want {
					t.Errorf("%s bucket le=%v moved by %d, want %d", c.metric, le, got, want)
				}
			}
			if len(h.buckets) != len(LatencyBuckets) {
				t.Errorf("%s has %d buckets, want the %d latency buckets from 1ms to 60s", c.metric, len(h.buckets), len(LatencyBuckets))
			}
		})
	}
}

// TestDriftsByUser: drifts are counted by service set and user, a drift naming no user as
// unknown, users past the bound as other; a deleted service set's series go.
func TestDriftsByUser(t *testing.T) {
	const metric = "holdfast_drifts_by_user_total"
	t.Cleanup(func() { SetMaxDriftUsers(0) })
	series := func(user string) map[string]string {
		return map[string]string{"multiclusterservice": "set-by-user", "user": user}
	}
	DriftByUser("set-by-user", "alice")
	DriftByUser("set-by-user", "alice")
	DriftByUser("set-by-user", "")
	if got := mustValue(t, metric, series("alice")); got != 2 {
		t.Errorf("alice: %v, want 2", got)
	}
	if got := mustValue(t, metric, series(ValueUnknown)); got != 1 {
		t.Errorf("unknown: %v, want 1", got)
	}

	SetMaxDriftUsers(1) // alice is the one user named; anyone else is other
	DriftByUser("set-by-user", "bob")
	DriftByUser("set-by-user", "alice")
	if _, ok := value(t, metric, series("bob")); ok {
		t.Error("bob has a series of his own past the bound")
	}
	if got := mustValue(t, metric, series(ValueOther)); got != 1 {
		t.Errorf("other: %v, want 1", got)
	}
	if got := mustValue(t, metric, series("alice")); got != 3 {
		t.Errorf("alice: %v, want 3", got)
	}

	DeleteDriftsByUser("set-by-user")
	for _, u := range []string{"alice", ValueOther, ValueUnknown} {
		if _, ok := value(t, metric, series(u)); ok {
			t.Errorf("the series of %s is left after the service set was deleted", u)
		}
	}
}
