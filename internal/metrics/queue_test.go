package metrics

import (
	"testing"
	"time"
)

func TestQueueMetrics(t *testing.T) {
	labels := map[string]string{"controller": "test-queue", "trigger": "drift"}
	before, _ := value(t, "holdfast_reconciles_total", labels)
	ReconcileStarted("test-queue", "drift")
	ReconcileStarted("test-queue", "drift")
	if got := mustValue(t, "holdfast_reconciles_total", labels) - before; got != 2 {
		t.Errorf("holdfast_reconciles_total%v moved by %v after two reconciles, want 2", labels, got)
	}
	ObserveQueueWait("test-queue", 100, 30*time.Millisecond)
	ObserveQueueWait("test-queue", -100, time.Second)
	for priority, want := range map[string]float64{"100": 0.03, "-100": 1} {
		h := gatherHistogram(t, "holdfast_queue_wait_seconds", map[string]string{"controller": "test-queue", "priority": priority})
		if h.count != 1 || h.sum != want {
			t.Errorf("holdfast_queue_wait_seconds{priority=%q}: %d observations summing to %v, want 1 of %v", priority, h.count, h.sum, want)
		}
	}
}
