package metrics

import "github.com/prometheus/client_golang/prometheus"

var (
	managedObjects = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "holdfast_managed_objects",
		Help: "Objects a MultiClusterService manages on a cluster (its inventory).",
	}, []string{labelCluster, labelServiceSet})
	contestedObjects = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "holdfast_contested_objects",
		Help: "Contested objects: another field manager kept reverting Holdfast's corrections (corrected with a backoff, or not at all with fight action Stop).",
	}, []string{labelCluster, labelServiceSet})
	watchStarts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "holdfast_watch_starts_total",
		Help: "Watch requests started on a target cluster, first starts and restarts alike.",
	}, []string{labelCluster, labelKind})
)

// SetManagedObjects reports how many objects serviceSet manages on cluster.
func SetManagedObjects(cluster, serviceSet string, n int) {
	managedObjects.WithLabelValues(cluster, serviceSet).Set(float64(n))
}

// SetContested reports how many of serviceSet's objects on cluster are Contested.
func SetContested(cluster, serviceSet string, n int) {
	contestedObjects.WithLabelValues(cluster, serviceSet).Set(float64(n))
}

// DeleteManagedObjects removes the pair's gauges (managed and contested objects), for a
// ClusterServiceStatus that was deleted.
func DeleteManagedObjects(cluster, serviceSet string) {
	managedObjects.DeleteLabelValues(cluster, serviceSet)
	contestedObjects.DeleteLabelValues(cluster, serviceSet)
}

// WatchStarted counts one watch request for kind on cluster. Call it for every request, the
// first and each restart after the API server closed the watch or the cluster came back: a
// series above 1 is a kind whose watch restarted, and the sum over a cluster minus the number of
// kinds watched is its restart count.
func WatchStarted(cluster, kind string) {
	watchStarts.WithLabelValues(cluster, kind).Inc()
}
