package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

var (
	driftsDetected = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "holdfast_drifts_detected_total",
		Help: "Drifts of managed objects seen on target clusters, by drift type (Changed, Deleted).",
	}, []string{labelCluster, labelService, labelKind, "type"})
	driftsCorrected = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "holdfast_drifts_corrected_total",
		Help: "Drifted managed objects Holdfast put back.",
	}, []string{labelCluster, labelService, labelKind})
	detectionSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "holdfast_drift_detection_seconds",
		Help:    "Time from a change on a target cluster to Holdfast noticing it as drift.",
		Buckets: LatencyBuckets,
	}, []string{labelKind})
	driftEventsIgnored = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "holdfast_drift_events_ignored_total",
		Help: "Changes to labelled objects on target clusters that brought no reconcile, by reason: UnknownOwner (the owner annotation names no status object of the cluster), NotDeclared (not an object the service set declares on the cluster).",
	}, []string{"reason"})
	correctionSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "holdfast_drift_correction_seconds",
		Help:    "Time from detecting a drift to the corrected object being applied.",
		Buckets: LatencyBuckets,
	}, []string{labelKind})
)

// DriftDetected counts one drift of an object of kind, declared by service, on cluster;
// driftType is Changed or Deleted.
func DriftDetected(cluster, service, kind, driftType string) {
	driftsDetected.WithLabelValues(cluster, service, kind, driftType).Inc()
}

// DriftCorrected counts one drifted object of kind that Holdfast put back.
func DriftCorrected(cluster, service, kind string) {
	driftsCorrected.WithLabelValues(cluster, service, kind).Inc()
}

// ObserveDetection records how long a drift of an object of kind took to be noticed. Only
// drifts seen through a watch have a meaningful change time to measure from.
func ObserveDetection(kind string, d time.Duration) {
	detectionSeconds.WithLabelValues(kind).Observe(d.Seconds())
}

// ObserveCorrection records how long a drift of an object of kind took to be corrected after
// it was detected.
func ObserveCorrection(kind string, d time.Duration) {
	correctionSeconds.WithLabelValues(kind).Observe(d.Seconds())
}

// Reasons of DriftEventIgnored.
const (
	IgnoredUnknownOwner = "UnknownOwner"
	IgnoredNotDeclared  = "NotDeclared"
)

// DriftEventIgnored counts one change to a labelled object that brought no reconcile.
func DriftEventIgnored(reason string) {
	driftEventsIgnored.WithLabelValues(reason).Inc()
}
