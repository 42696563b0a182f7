package cluster

import (
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/fleet"
)

const (
	grace     = 40 * time.Second
	heartbeat = time.Minute
)

var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// connectedAt returns a Cluster that was last probed successfully at t.
func connectedAt(t time.Time) *holdfastv1.Cluster {
	s := &scope{cluster: &holdfastv1.Cluster{}, now: t, probed: true, probe: fleet.ProbeResult{Version: "v1.36.4", User: "admin"}, lastConnected: t}
	s.before = s.cluster.DeepCopy()
	computeStatus(s, grace, heartbeat)
	return s.cluster
}

func probeAt(c *holdfastv1.Cluster, now, lastConnected time.Time, probeErr error) *holdfastv1.Cluster {
	s := &scope{cluster: c.DeepCopy(), before: c.DeepCopy(), now: now, probed: true, lastConnected: lastConnected}
	if probeErr != nil {
		s.probeErr = &fleet.ProbeError{Reason: holdfastv1.UnreachableReason, Err: probeErr}
	} else {
		s.probe = fleet.ProbeResult{Version: "v1.36.4", User: "admin"}
	}
	computeStatus(s, grace, heartbeat)
	return s.cluster
}

func TestConnectionGrace(t *testing.T) {
	refused := errors.New("connection refused")
	tests := []struct {
		name       string
		failAfter  time.Duration
		wantStatus metav1.ConditionStatus
		wantReason string
	}{
		{name: "failure right after success keeps Connected", failAfter: time.Second, wantStatus: metav1.ConditionTrue, wantReason: holdfastv1.ConnectedReason},
		{name: "failure just inside grace keeps Connected", failAfter: grace - time.Millisecond, wantStatus: metav1.ConditionTrue, wantReason: holdfastv1.ConnectedReason},
		{name: "failure past grace is Unreachable", failAfter: grace, wantStatus: metav1.ConditionFalse, wantReason: holdfastv1.UnreachableReason},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := probeAt(connectedAt(t0), t0.Add(tt.failAfter), t0, refused)
			got := conditions.Get(c, holdfastv1.ClusterConnectedCondition)
			if got.Status != tt.wantStatus || got.Reason != tt.wantReason {
				t.Errorf("Connected = %s/%s (%s), want %s/%s", got.Status, got.Reason, got.Message, tt.wantStatus, tt.wantReason)
			}
			if !*c.Status.Initialization.Provisioned {
				t.Error("provisioned was set back")
			}
		})
	}
}

func TestNeverConnectedFailsAtOnce(t *testing.T) {
	c := &holdfastv1.Cluster{}
	c = probeAt(c, t0, time.Time{}, errors.New("connection refused"))
	got := conditions.Get(c, holdfastv1.ClusterConnectedCondition)
	if got.Status != metav1.ConditionFalse || got.Reason != holdfastv1.UnreachableReason {
		t.Errorf("Connected = %s/%s, want False/Unreachable", got.Status, got.Reason)
	}
	if c.Status.Initialization != nil {
		t.Error("a cluster never connected is not provisioned")
	}
}

func TestStatusHeartbeat(t *testing.T) {
	first := connectedAt(t0)

	// A healthy probe shortly after changes nothing that needs writing.
	soon := probeAt(first, t0.Add(10*time.Second), t0.Add(10*time.Second), nil)
	if !soon.Status.LastProbeTime.Time.Equal(t0) {
		t.Errorf("LastProbeTime written within the heartbeat: %s", soon.Status.LastProbeTime)
	}
	// After the heartbeat the times are written again.
	later := probeAt(first, t0.Add(heartbeat), t0.Add(heartbeat), nil)
	if !later.Status.LastProbeTime.Time.Equal(t0.Add(heartbeat)) {
		t.Errorf("LastProbeTime not refreshed after the heartbeat: %s", later.Status.LastProbeTime)
	}
	// A change of state is written at once, with its probe time.
	failed := probeAt(first, t0.Add(50*time.Second), t0, errors.New("connection refused"))
	if !failed.Status.LastProbeTime.Time.Equal(t0.Add(50 * time.Second)) {
		t.Errorf("LastProbeTime not written with a state change: %s", failed.Status.LastProbeTime)
	}
}
