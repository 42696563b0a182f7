package metrics_test

import (
	"testing"

	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	// The Cluster controller registers its own holdfast_* metrics on the same registry; a name
	// registered twice with other labels would panic when the binary starts.
	_ "holdfast.dev/holdfast/internal/controller/cluster"
	"holdfast.dev/holdfast/internal/metrics"
)

func TestRegistersBesideClusterController(t *testing.T) {
	metrics.SetManagedObjects("fleet/x", "web", 1)
	if _, err := ctrlmetrics.Registry.Gather(); err != nil {
		t.Fatalf("gathering holdfast metrics with the Cluster controller's: %v", err)
	}
}
