package clusterservicestatus_test

import (
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// metricSeries reads the series of the metric name whose labels include labels from the
// controller's registry, nil when there is none (its getters then read 0).
func metricSeries(g Gomega, name string, labels map[string]string) *dto.Metric {
	families, err := ctrlmetrics.Registry.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if hasLabels(m, labels) {
				return m
			}
		}
	}
	return nil
}

// hasLabels reports whether m carries every label of labels with its value.
func hasLabels(m *dto.Metric, labels map[string]string) bool {
	have := map[string]string{}
	for _, l := range m.GetLabel() {
		have[l.GetName()] = l.GetValue()
	}
	for k, v := range labels {
		if have[k] != v {
			return false
		}
	}
	return true
}
