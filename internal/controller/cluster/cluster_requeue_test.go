package cluster

import (
	"errors"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"

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
		name       string
		before     *holdfastv1.Cluster
		sinceOK    time.Duration
		probeErr   *fleet.ProbeError
		connErr    *reasonError
		leaseGrace time.Duration
		wantAfter  time.Duration
	}{
		{name: "healthy", before: connectedAt(t0), sinceOK: 0, wantAfter: 10 * time.Second},
		{name: "failing within the grace", before: connectedAt(t0), sinceOK: 5 * time.Second, probeErr: failed, wantAfter: 2 * time.Second},
		{name: "failing past the grace", before: connectedAt(t0), sinceOK: grace, probeErr: failed, wantAfter: 10 * time.Second},
		{name: "never connected", before: &holdfastv1.Cluster{}, probeErr: failed, wantAfter: 10 * time.Second},
		{name: "declaration error waits for a change", before: connectedAt(t0), connErr: &reasonError{reason: holdfastv1.SecretNotFoundReason}},
		{name: "Pull: when its Lease would expire", before: pull(connectedAt(t0)), sinceOK: 5 * time.Second, wantAfter: grace - 5*time.Second},
		{name: "Pull: Lease about to expire, the retry interval at least", before: pull(connectedAt(t0)), sinceOK: grace - time.Second, wantAfter: 2 * time.Second},
		{name: "Pull: its Lease claims longer than the grace", before: pull(connectedAt(t0)), sinceOK: 5 * time.Second, leaseGrace: 90 * time.Second, wantAfter: 85 * time.Second},
		{name: "Pull: not reporting", before: pull(connectedAt(t0)), sinceOK: grace, probeErr: &fleet.ProbeError{Reason: holdfastv1.AgentNotReportingReason, Err: errors.New("silent")}, wantAfter: 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &scope{cluster: tt.before.DeepCopy(), before: tt.before, now: t0.Add(tt.sinceOK), probed: true,
				probeErr: tt.probeErr, connectErr: tt.connErr, leaseGrace: tt.leaseGrace}
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

// pull makes c a Pull cluster.
func pull(c *holdfastv1.Cluster) *holdfastv1.Cluster {
	c = c.DeepCopy()
	c.Spec.Mode = holdfastv1.ClusterModePull
	return c
}

// TestLeaseChanged: an agent's Lease renewed with the same report wakes no reconcile of its
// Cluster; a new report, a new holder, a renewal after a silence of the grace or more, and a
// Lease created or deleted do.
func TestLeaseChanged(t *testing.T) {
	lease := func(renewed time.Time, version string) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "holdfast-pull-edge", Name: "holdfast-agent",
			Annotations: map[string]string{"holdfast.dev/agent-version": version}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("agent"), RenewTime: &metav1.MicroTime{Time: renewed}}}
	}
	p := leaseChanged(grace)
	update := func(old, renewed *coordinationv1.Lease) bool {
		return p.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: renewed})
	}
	if update(lease(t0, "v1"), lease(t0.Add(10*time.Second), "v1")) {
		t.Error("a renewal alone woke a reconcile")
	}
	if !update(lease(t0, "v1"), lease(t0.Add(10*time.Second), "v2")) {
		t.Error("a new report did not wake a reconcile")
	}
	other := lease(t0.Add(10*time.Second), "v1")
	other.Spec.HolderIdentity = ptr.To("another")
	if !update(lease(t0, "v1"), other) {
		t.Error("a new holder did not wake a reconcile")
	}
	if !update(lease(t0, "v1"), lease(t0.Add(grace), "v1")) {
		t.Error("a renewal after a silence of the grace did not wake a reconcile")
	}
	if !p.Create(event.CreateEvent{Object: lease(t0, "v1")}) || !p.Delete(event.DeleteEvent{Object: lease(t0, "v1")}) {
		t.Error("a Lease created or deleted did not wake a reconcile")
	}
}
