package metrics

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// TargetCacheUsage is what the drift watches' caches keep for one target cluster (package drift,
// Applied.Usage).
type TargetCacheUsage struct {
	Cluster string
	// Snapshots and SnapshotBytes: full snapshots of objects Holdfast applied, and the bytes
	// they keep beyond their fixed size. Oversized: objects over the per-object bound, kept as
	// stubs. Foreign: stubs of labelled objects Holdfast did not apply. Refused: such objects
	// refused past the per-cluster bound, since the start. Over: past that bound now.
	Snapshots, SnapshotBytes, Oversized, Foreign, Refused int64
	Over                                                  bool
}

// targetCaches reads what the target caches keep at each scrape, so no series outlives its
// cluster's record.
type targetCaches struct {
	source atomic.Pointer[func() []TargetCacheUsage]
}

var (
	targetCacheObjects = prometheus.NewDesc("holdfast_target_cache_objects",
		"Objects the drift watches' caches keep for a target cluster, by how: snapshot (applied by Holdfast), "+
			"oversized (applied, over the per-object bound, kept as a stub) or foreign (labelled but not applied by Holdfast, a stub).",
		[]string{labelCluster, "kept"}, nil)
	targetCacheBytes = prometheus.NewDesc("holdfast_target_cache_snapshot_bytes",
		"Bytes the full snapshots of a target cluster's objects keep beyond their fixed size (text, Holdfast's labels, "+
			"annotations and field sets, shared ones counted per object).",
		[]string{labelCluster}, nil)
	targetCacheRefused = prometheus.NewDesc("holdfast_target_cache_refused_objects_total",
		"Labelled objects Holdfast did not apply that a target cluster's watches refused past the per-cluster bound.",
		[]string{labelCluster}, nil)
	targetCacheOver = prometheus.NewDesc("holdfast_target_cache_over_limit",
		"1 while a target cluster holds more labelled objects Holdfast did not apply than its watches keep (drift there is found by full reconciles).",
		[]string{labelCluster}, nil)

	targetCacheCollector = &targetCaches{}
)

// ReportTargetCaches makes the target cache metrics report what source returns at each scrape
// (the last call wins: one controller per process).
func ReportTargetCaches(source func() []TargetCacheUsage) { targetCacheCollector.source.Store(&source) }

// Describe implements prometheus.Collector.
func (t *targetCaches) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{targetCacheObjects, targetCacheBytes, targetCacheRefused, targetCacheOver} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (t *targetCaches) Collect(ch chan<- prometheus.Metric) {
	source := t.source.Load()
	if source == nil {
		return
	}
	for _, u := range (*source)() {
		ch <- prometheus.MustNewConstMetric(targetCacheObjects, prometheus.GaugeValue, float64(u.Snapshots), u.Cluster, "snapshot")
		ch <- prometheus.MustNewConstMetric(targetCacheObjects, prometheus.GaugeValue, float64(u.Oversized), u.Cluster, "oversized")
		ch <- prometheus.MustNewConstMetric(targetCacheObjects, prometheus.GaugeValue, float64(u.Foreign), u.Cluster, "foreign")
		ch <- prometheus.MustNewConstMetric(targetCacheBytes, prometheus.GaugeValue, float64(u.SnapshotBytes), u.Cluster)
		ch <- prometheus.MustNewConstMetric(targetCacheRefused, prometheus.CounterValue, float64(u.Refused), u.Cluster)
		over := 0.0
		if u.Over {
			over = 1
		}
		ch <- prometheus.MustNewConstMetric(targetCacheOver, prometheus.GaugeValue, over, u.Cluster)
	}
}
