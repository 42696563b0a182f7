package metrics

import (
	"testing"

	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The helpers below read metrics back from the registry the manager serves, which also shows
// that they are registered there. (Gathering, rather than prometheus/testutil, keeps the tests
// from adding a module requirement.)

// TestServedByManager checks that every metric is on the controller-runtime registry under the
// name docs/metrics.md gives it.
func TestServedByManager(t *testing.T) {
	DriftDetected("fleet/r", "web", "Deployment", "Changed")
	DriftCorrected("fleet/r", "web", "Deployment")
	ObserveDetection("Deployment", 1)
	ObserveCorrection("Deployment", 1)
	SetManagedObjects("fleet/r", "web", 1)
	SetContested("fleet/r", "web", 0)
	WatchStarted("fleet/r", "Deployment")
	SetClusterConnected("fleet", "r", true)
	ClusterProbeFailed("fleet", "r", "Unreachable")
	NotificationResult("r", NotificationSent)
	RenderCacheRequest(RenderHit)
	ObserveQueueWait("r", 0, 1)
	ReconcileStarted("r", "hub")
	for _, name := range []string{
		"holdfast_drifts_detected_total", "holdfast_drifts_corrected_total",
		"holdfast_drift_detection_seconds", "holdfast_drift_correction_seconds",
		"holdfast_managed_objects", "holdfast_contested_objects", "holdfast_watch_starts_total",
		"holdfast_cluster_connected", "holdfast_cluster_probe_failures_total",
		"holdfast_notifications_total",
		"holdfast_render_cache_requests_total", "holdfast_queue_wait_seconds", "holdfast_reconciles_total",
	} {
		if seriesCount(t, name) == 0 {
			t.Errorf("%s is not on the controller-runtime registry", name)
		}
	}
}

// value reads the counter or gauge series of name whose labels include want; ok is false when
// there is none.
func value(t *testing.T, name string, want map[string]string) (v float64, ok bool) {
	t.Helper()
	mfs, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	m, ok := first(named(mfs, name).GetMetric(), want)
	return m.GetCounter().GetValue() + m.GetGauge().GetValue(), ok
}

// mustValue is value for a series that must exist.
func mustValue(t *testing.T, name string, want map[string]string) float64 {
	t.Helper()
	v, ok := value(t, name, want)
	if !ok {
		t.Fatalf("no series of %s with labels %v", name, want)
	}
	return v
}

// seriesCount is the number of series of name.
func seriesCount(t *testing.T, name string) int {
	t.Helper()
	mfs, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	return len(named(mfs, name).GetMetric())
}

type histogram struct {
	count   uint64
	sum     float64
	buckets map[float64]uint64 // cumulative, by upper bound
}

// gatherHistogram reads the histogram series of name whose labels include want; empty when
// there is none.
func gatherHistogram(t *testing.T, name string, want map[string]string) histogram {
	t.Helper()
	mfs, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	m, _ := first(named(mfs, name).GetMetric(), want)
	mh := m.GetHistogram()
	h := histogram{count: mh.GetSampleCount(), sum: mh.GetSampleSum(), buckets: map[float64]uint64{}}
	for _, b := range mh.GetBucket() {
		h.buckets[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	return h
}

// The generic helpers below read the gathered protobuf messages through their getters, which
// return zero values on nil, so that a missing family or series reads as empty.

// named returns the family called name, or nil.
func named[F interface{ GetName() string }](families []F, name string) F {
	var none F
	for _, f := range families {
		if f.GetName() == name {
			return f
		}
	}
	return none
}

// first returns the first series whose labels include want.
func first[M interface{ GetLabel() []L }, L interface {
	GetName() string
	GetValue() string
}](series []M, want map[string]string) (M, bool) {
	var none M
	for _, m := range series {
		n := 0
		for _, l := range m.GetLabel() {
			if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
				n++
			}
		}
		if n == len(want) {
			return m, true
		}
	}
	return none, false
}
