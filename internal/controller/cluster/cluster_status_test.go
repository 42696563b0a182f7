package cluster

import (
	"errors"
	"strings"
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

func TestAdmissionPoliciesMessage(t *testing.T) {
	tests := []struct {
		name         string
		id           fleet.Identity
		wantStatus   metav1.ConditionStatus
		wantReason   string
		wantInMsg    []string
		wantNotInMsg []string
	}{
		{name: "both served", id: fleet.Identity{MutatingAdmissionPolicies: true, ValidatingAdmissionPolicies: true},
			wantStatus: metav1.ConditionTrue, wantReason: holdfastv1.AdmissionPoliciesServedReason,
			wantInMsg: []string{"mutatingadmissionpolicies and validatingadmissionpolicies"}},
		{name: "no mutating (1.30 to 1.35)", id: fleet.Identity{ValidatingAdmissionPolicies: true},
			wantStatus: metav1.ConditionFalse, wantReason: holdfastv1.AdmissionPoliciesUnsupportedReason,
			wantInMsg:    []string{"mutatingadmissionpolicies (Kubernetes 1.36 or later)", "drift.attribution names the field manager only", "still detected and corrected"},
			wantNotInMsg: []string{"validatingadmissionpolicies", "prevention"}},
		{name: "no validating", id: fleet.Identity{MutatingAdmissionPolicies: true},
			wantStatus: metav1.ConditionFalse, wantReason: holdfastv1.AdmissionPoliciesUnsupportedReason,
			wantInMsg:    []string{"validatingadmissionpolicies (Kubernetes 1.30 or later)", "drift.prevention is not enforced"},
			wantNotInMsg: []string{"mutatingadmissionpolicies", "attribution"}},
		{name: "neither", id: fleet.Identity{},
			wantStatus: metav1.ConditionFalse, wantReason: holdfastv1.AdmissionPoliciesUnsupportedReason,
			wantInMsg: []string{"mutatingadmissionpolicies (Kubernetes 1.36 or later) or validatingadmissionpolicies (Kubernetes 1.30 or later)",
				"drift.attribution names the field manager only", "drift.prevention is not enforced"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, reason, msg := admissionPolicies(tt.id)
			if status != tt.wantStatus || reason != tt.wantReason {
				t.Errorf("got %s/%s (%s), want %s/%s", status, reason, msg, tt.wantStatus, tt.wantReason)
			}
			for _, want := range tt.wantInMsg {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q does not say %q", msg, want)
				}
			}
			for _, not := range tt.wantNotInMsg {
				if strings.Contains(msg, not) {
					t.Errorf("message %q names %q, which is not missing", msg, not)
				}
			}
		})
	}
}

// TestAdmissionPoliciesThroughConnectionLoss: the answer read on a connection stands through a
// probe failure within the grace, turns Unknown once the cluster is not Connected, and never
// touches Ready.
func TestAdmissionPoliciesThroughConnectionLoss(t *testing.T) {
	s := &scope{cluster: &holdfastv1.Cluster{}, now: t0, probed: true, probe: fleet.ProbeResult{Version: "v1.35.2"},
		lastConnected: t0, admission: &fleet.Identity{ValidatingAdmissionPolicies: true}}
	s.before = s.cluster.DeepCopy()
	computeStatus(s, grace, heartbeat)
	c := s.cluster
	if got := conditions.Get(c, holdfastv1.AdmissionPoliciesCondition); got.Status != metav1.ConditionFalse || got.Reason != holdfastv1.AdmissionPoliciesUnsupportedReason {
		t.Fatalf("AdmissionPolicies = %s/%s, want False/AdmissionPoliciesUnsupported", got.Status, got.Reason)
	}
	if !conditions.IsTrue(c, holdfastv1.ReadyCondition) {
		t.Errorf("a cluster without MutatingAdmissionPolicy is not Ready: %+v", conditions.Get(c, holdfastv1.ReadyCondition))
	}

	refused := errors.New("connection refused")
	within := probeAt(c, t0.Add(time.Second), t0, refused)
	if got := conditions.Get(within, holdfastv1.AdmissionPoliciesCondition); got.Status != metav1.ConditionFalse {
		t.Errorf("within the grace AdmissionPolicies = %s/%s, want the last answer (False)", got.Status, got.Reason)
	}
	past := probeAt(within, t0.Add(grace), t0, refused)
	if got := conditions.Get(past, holdfastv1.AdmissionPoliciesCondition); got.Status != metav1.ConditionUnknown || got.Reason != holdfastv1.ProbingReason {
		t.Errorf("past the grace AdmissionPolicies = %s/%s, want Unknown/Probing", got.Status, got.Reason)
	}

	failed := &scope{cluster: c.DeepCopy(), before: c.DeepCopy(), now: t0.Add(time.Second), probed: true, lastConnected: t0,
		admissionErr: errors.New("the answer could not be read as a Kubernetes API response")}
	computeStatus(failed, grace, heartbeat)
	if got := conditions.Get(failed.cluster, holdfastv1.AdmissionPoliciesCondition); got.Status != metav1.ConditionUnknown || !strings.Contains(got.Message, "could not be read") {
		t.Errorf("a failed read: AdmissionPolicies = %s/%s (%s), want Unknown saying why", got.Status, got.Reason, got.Message)
	}
}
