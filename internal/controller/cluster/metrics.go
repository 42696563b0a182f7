package cluster

import (
	holdfastmetrics "holdfast.dev/holdfast/internal/metrics"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

var (
	connectedGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "holdfast_cluster_connected",
		Help: "1 while the Cluster's Connected condition is True, 0 otherwise.",
	}, []string{"namespace", "name"})
	probeFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "holdfast_cluster_probe_failures_total",
		Help: "Failed health probes of managed clusters, by reason.",
	}, []string{"namespace", "name", "reason"})
)

func init() {
	metrics.Registry.MustRegister(connectedGauge, probeFailures)
}

func recordMetrics(s *scope) {
	c := s.cluster
	v := 0.0
	for _, cond := range c.Status.Conditions {
		if cond.Type == holdfastv1.ClusterConnectedCondition && cond.Status == "True" {
			v = 1
		}
	}
	connectedGauge.WithLabelValues(c.Namespace, c.Name).Set(v)
	if s.probeErr != nil {
		probeFailures.WithLabelValues(c.Namespace, c.Name, s.probeErr.Reason).Inc()
	}
}

func forgetMetrics(key client.ObjectKey) {
	connectedGauge.DeleteLabelValues(key.Namespace, key.Name)
	probeFailures.DeletePartialMatch(prometheus.Labels{"namespace": key.Namespace, "name": key.Name})
	holdfastmetrics.ForgetCluster(key.String())
}
