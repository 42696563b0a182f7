package metrics

import "testing"

func TestClusterHealth(t *testing.T) {
	gone := map[string]string{"namespace": "fleet", "name": "gone"}
	kept := map[string]string{"namespace": "fleet", "name": "kept"}
	withReason := func(labels map[string]string, reason string) map[string]string {
		out := map[string]string{"reason": reason}
		for k, v := range labels {
			out[k] = v
		}
		return out
	}

	SetClusterConnected("fleet", "gone", true)
	if got := mustValue(t, "holdfast_cluster_connected", gone); got != 1 {
		t.Errorf("connected = %v, want 1", got)
	}
	SetClusterConnected("fleet", "gone", false)
	if got := mustValue(t, "holdfast_cluster_connected", gone); got != 0 {
		t.Errorf("connected after losing the connection = %v, want 0", got)
	}
	SetClusterConnected("fleet", "kept", true)

	ClusterProbeFailed("fleet", "gone", "Unreachable")
	ClusterProbeFailed("fleet", "gone", "Unreachable")
	ClusterProbeFailed("fleet", "gone", "Unauthorized")
	ClusterProbeFailed("fleet", "kept", "Unreachable")
	if got := mustValue(t, "holdfast_cluster_probe_failures_total", withReason(gone, "Unreachable")); got != 2 {
		t.Errorf("Unreachable probe failures = %v, want 2", got)
	}
	if got := mustValue(t, "holdfast_cluster_probe_failures_total", withReason(gone, "Unauthorized")); got != 1 {
		t.Errorf("Unauthorized probe failures = %v, want 1", got)
	}

	ForgetClusterHealth("fleet", "gone")
	for _, name := range []string{"holdfast_cluster_connected", "holdfast_cluster_probe_failures_total"} {
		if _, ok := value(t, name, gone); ok {
			t.Errorf("%s still has a series for the forgotten Cluster", name)
		}
		if _, ok := value(t, name, kept); !ok {
			t.Errorf("ForgetClusterHealth removed another Cluster's %s", name)
		}
	}
}
