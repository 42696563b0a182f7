package metrics

import "github.com/prometheus/client_golang/prometheus"

// The Cluster controller's metrics are labelled with the Cluster's namespace and name as two
// labels, unlike the "cluster" label of the others.
const (
	labelNamespace = "namespace"
	labelName      = "name"
	labelReason    = "reason"
)

var (
	clusterConnected = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "holdfast_cluster_connected",
		Help: "1 while the Cluster's Connected condition is True, 0 otherwise.",
	}, []string{labelNamespace, labelName})
	clusterProbeFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "holdfast_cluster_probe_failures_total",
		Help: "Failed health probes of managed clusters, by reason.",
	}, []string{labelNamespace, labelName, labelReason})
)

// SetClusterConnected reports whether the Cluster's Connected condition is True.
func SetClusterConnected(namespace, name string, connected bool) {
	v := 0.0
	if connected {
		v = 1
	}
	clusterConnected.WithLabelValues(namespace, name).Set(v)
}

// ClusterProbeFailed counts one failed health probe of the Cluster; reason is the probe's
// condition reason.
func ClusterProbeFailed(namespace, name, reason string) {
	clusterProbeFailures.WithLabelValues(namespace, name, reason).Inc()
}

// ForgetClusterHealth removes the Cluster's connected gauge and probe failure counts, for a
// Cluster that was deleted. ForgetCluster removes the series of its other metrics.
func ForgetClusterHealth(namespace, name string) {
	clusterConnected.DeleteLabelValues(namespace, name)
	clusterProbeFailures.DeletePartialMatch(prometheus.Labels{labelNamespace: namespace, labelName: name})
}
