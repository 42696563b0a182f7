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
		Help: "Changes to labelled objects on target clusters that brought no reconcile, by reason: UnknownOwner (the owner annotation names no status object of the cluster), NotDeclared (not an object the service set declares on the cluster), Superseded (a version Holdfast wrote over or a record holds already: a watch behind, a second watch or comparison of one change).",
	}, []string{"reason"})
	driftRecordsDropped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "holdfast_drift_records_dropped_total",
		Help: "Drift records dropped unwritten: more than a status object's history holds (MaxDriftRecords) made while its status could not be written (the hub away), the oldest first.",
	})
	driftsByUser = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "holdfast_drifts_by_user_total",
		Help: "Drifts detected, by service set and the Kubernetes user who made them (drift.attribution): the first --drift-metrics-max-users distinct users of the process by name, later ones as other, drifts naming no user as unknown.",
	}, []string{labelServiceSet, "user"})
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

// DefaultMaxDriftUsers is how many distinct users holdfast_drifts_by_user_total names before
// it counts further ones as other.
const DefaultMaxDriftUsers = 50

// driftUsers bounds the user label of holdfast_drifts_by_user_total.
var driftUsers = newBoundedValues(DefaultMaxDriftUsers)

// SetMaxDriftUsers sets how many distinct users holdfast_drifts_by_user_total names, for the
// life of the process (users already named stay named); DefaultMaxDriftUsers when n < 1.
func SetMaxDriftUsers(n int) {
	if n < 1 {
		n = DefaultMaxDriftUsers
	}
	driftUsers.setMax(n)
}

// DriftByUser counts one drift of serviceSet made by user, empty when the record names none.
// It is a counter of its own, not a label of holdfast_drifts_detected_total, whose cluster,
// service, kind and type labels a user label would multiply.
func DriftByUser(serviceSet, user string) {
	driftsByUser.WithLabelValues(serviceSet, driftUsers.value(user)).Inc()
}

// DeleteDriftsByUser removes serviceSet's holdfast_drifts_by_user_total series, for a service
// set that was deleted. The users it named stay counted against the bound.
func DeleteDriftsByUser(serviceSet string) {
	driftsByUser.DeletePartialMatch(prometheus.Labels{labelServiceSet: serviceSet})
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
	IgnoredSuperseded   = "Superseded"
)

// DriftRecordsDropped counts n drift records dropped unwritten.
func DriftRecordsDropped(n int) {
	driftRecordsDropped.Add(float64(n))
}

// DriftEventIgnored counts one change to a labelled object that brought no reconcile.
func DriftEventIgnored(reason string) {
	driftEventsIgnored.WithLabelValues(reason).Inc()
}
