package metrics_test

import (
	"testing"

	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	// The Cluster controller records the cluster metrics defined here; loading it beside this
	// package must not register a holdfast_* name twice, which would panic when the binary starts.
	_ "holdfast.dev/holdfast/internal/controller/cluster"
	"holdfast.dev/holdfast/internal/metrics"
)

func TestRegistersBesideClusterController(t *testing.T) {
	metrics.SetManagedObjects("fleet/x", "web", 1)
	if _, err := ctrlmetrics.Registry.Gather(); err != nil {
		t.Fatalf("gathering holdfast metrics with the Cluster controller's: %v", err)
	}
}
