package cluster

import (
	"errors"
	"testing"
	"time"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/fleet"
)

// TestProbeRetryInterval: while probes fail within the grace, the next probe comes after the
// retry interval, so the end of a short partition is seen within seconds; otherwise after the
// probe interval.
func TestProbeRetryInterval(t *testing.T) {
	r := &Reconciler{ProbeInterval: 10 * time.Second, ProbeRetryInterval: 2 * time.Second, ConnectionGrace: grace}
	failed := &fleet.ProbeError{Reason: holdfastv1.UnreachableReason, Err: errors.New("connection refused")}
	tests := []struct {
		name      string
		before    *holdfastv1.Cluster
		sinceOK   time.Duration
		probeErr  *fleet.ProbeError
		connErr   *reasonError
		wantAfter time.Duration
	}{
		{name: "healthy", before: connectedAt(t0), sinceOK: 0, wantAfter: 10 * time.Second},
		{name: "failing within the grace", before: connectedAt(t0), sinceOK: 5 * time.Second, probeErr: failed, wantAfter: 2 * time.Second},
		{name: "failing past the grace", before: connectedAt(t0), sinceOK: grace, probeErr: failed, wantAfter: 10 * time.Second},
		{name: "never connected", before: &holdfastv1.Cluster{}, probeErr: failed, wantAfter: 10 * time.Second},
		{name: "declaration error waits for a change", before: connectedAt(t0), connErr: &reasonError{reason: holdfastv1.SecretNotFoundReason}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &scope{cluster: tt.before.DeepCopy(), before: tt.before, now: t0.Add(tt.sinceOK), probed: true,
				probeErr: tt.probeErr, connectErr: tt.connErr}
			if !tt.before.Status.LastConnectedTime.IsZero() {
				s.lastConnected = t0
			}
			got := r.requeueAfter(s)
			if got < tt.wantAfter || got > tt.wantAfter+tt.wantAfter/10 {
				t.Errorf("next probe after %s, want %s (+10%% jitter)", got, tt.wantAfter)
			}
		})
	}
}
