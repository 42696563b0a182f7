package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Label names shared by several metrics.
const (
	labelCluster    = "cluster"
	labelServiceSet = "multiclusterservice"
	labelService    = "service"
	labelKind       = "kind"
)

// LatencyBuckets cover drift detection and correction from a millisecond (a watch event on a
// nearby cluster) to a minute (a comparison after a slow full reconcile). The web view's
// latency chart uses them too, whichever source it draws from.
var LatencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

func init() {
	ctrlmetrics.Registry.MustRegister(
		driftsDetected, driftsCorrected, detectionSeconds, correctionSeconds, driftEventsIgnored, driftRecordsDropped, driftsByUser,
		managedObjects, contestedObjects, watchStarts,
		clusterConnected, clusterProbeFailures,
		notifications,
		alertsHeldBack,
		renderCacheRequests, queueWait, reconciles, inventoryReads,
		rolloutHalted, rolloutWave,
		targetCacheCollector,
	)
}

// ForgetCluster removes every series labelled with cluster, for a Cluster that was deleted, so
// that its last values are not reported forever.
func ForgetCluster(cluster string) {
	l := prometheus.Labels{labelCluster: cluster}
	for _, v := range []interface{ DeletePartialMatch(prometheus.Labels) int }{
		driftsDetected, driftsCorrected, managedObjects, contestedObjects, watchStarts,
	} {
		v.DeletePartialMatch(l)
	}
}
