package agentaccess

import (
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestHeartbeatRoundTrip: what an agent reports in its Lease is what the hub reads.
func TestHeartbeatRoundTrip(t *testing.T) {
	r := Report{AgentVersion: "v0.9.0", KubernetesVersion: "v1.36.4", User: "system:serviceaccount:holdfast-system:holdfast-agent",
		ClusterID: "6f1c9a51-7f47-4a5e-9d3b-0f6c1b2d9e10", ValidatingAdmissionPolicies: true}
	renewed := metav1.NewMicroTime(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	h, err := HeartbeatOf(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Annotations: r.Annotations()}, Spec: coordinationv1.LeaseSpec{RenewTime: &renewed}})
	if err != nil {
		t.Fatal(err)
	}
	if h.Report != r || !h.Renewed.Equal(renewed.Time) {
		t.Fatalf("read %+v, want %+v renewed at %s", h, r, renewed)
	}
}

// TestHeartbeatDuration: the duration an agent's Lease claims is read, none when it claims none
// or a negative one, and bounded by MaxLeaseDuration (a Lease from a compromised cluster could
// claim a year and stay Connected while silent).
func TestHeartbeatDuration(t *testing.T) {
	for _, tc := range []struct {
		seconds *int32
		want    time.Duration
	}{
		{nil, 0},
		{ptr.To[int32](-5), 0},
		{ptr.To[int32](90), 90 * time.Second},
		{ptr.To[int32](365 * 24 * 3600), MaxLeaseDuration},
	} {
		h, err := HeartbeatOf(&coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: tc.seconds}})
		if err != nil {
			t.Fatal(err)
		}
		if h.Duration != tc.want {
			t.Errorf("leaseDurationSeconds %v: read %s, want %s", tc.seconds, h.Duration, tc.want)
		}
	}
}

// TestHeartbeatRefusesWhatIsNotAReport: the Lease is written by the cluster's agent, which may
// be compromised: an oversized value or a cluster ID that is not a UID is refused, naming the
// annotation, and nothing of it is passed on.
func TestHeartbeatRefusesWhatIsNotAReport(t *testing.T) {
	for name, annotations := range map[string]map[string]string{
		"a huge version":       {kubernetesVersionAnnotation: strings.Repeat("v", 10_000)},
		"a cluster ID with /":  {clusterIDAnnotation: "../../etc"},
		"a cluster ID too big": {clusterIDAnnotation: strings.Repeat("a", 300)},
	} {
		h, err := HeartbeatOf(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: LeaseName, Annotations: annotations}})
		if err == nil || !strings.Contains(err.Error(), "holdfast.dev/") {
			t.Errorf("%s: error %v, want one naming the annotation", name, err)
		}
		if h.Report != (Report{}) {
			t.Errorf("%s: %+v passed on", name, h.Report)
		}
	}
}
