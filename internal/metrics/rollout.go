package metrics

import "github.com/prometheus/client_golang/prometheus"

var (
	rolloutHalted = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "holdfast_rollout_halted",
		Help: "1 while the rollout of a MultiClusterService's new revision is halted at its failure threshold, else 0.",
	}, []string{labelServiceSet})
	rolloutWave = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "holdfast_rollout_wave",
		Help: "The wave (1-based) a MultiClusterService's rollout is at; 0 when it is complete or aborted.",
	}, []string{labelServiceSet})
)

// SetRollout reports where serviceSet's rollout is: halted or not, and its wave (1-based; 0
// when none is being rolled out).
func SetRollout(serviceSet string, halted bool, wave int) {
	h := 0.0
	if halted {
		h = 1
	}
	rolloutHalted.WithLabelValues(serviceSet).Set(h)
	rolloutWave.WithLabelValues(serviceSet).Set(float64(wave))
}

// DeleteRollout removes serviceSet's rollout gauges, for a MultiClusterService without a rollout
// or deleted.
func DeleteRollout(serviceSet string) {
	rolloutHalted.DeleteLabelValues(serviceSet)
	rolloutWave.DeleteLabelValues(serviceSet)
}
