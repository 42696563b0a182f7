package clusterservicestatus

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// TestHealthWait: objects becoming healthy are looked at again every few seconds while their
// revision is young and less often as it ages, at most every unhealthyRetry; failed ones every
// unhealthyRetry; healthy ones not at all.
func TestHealthWait(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	entry := func(h holdfastv1.HealthStatus) holdfastv1.ResourceStatus {
		return holdfastv1.ResourceStatus{ResourceRef: holdfastv1.ResourceRef{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "demo", Name: "web"},
			Service: "web", State: holdfastv1.ResourceInSync, Health: h}
	}
	cases := []struct {
		name   string
		health holdfastv1.HealthStatus
		age    time.Duration
		want   time.Duration
	}{
		{"healthy", holdfastv1.HealthCurrent, time.Minute, 0},
		{"progressing, revision just applied", holdfastv1.HealthInProgress, 10 * time.Second, healthRetry},
		{"progressing for two minutes", holdfastv1.HealthInProgress, 2 * time.Minute, 20 * time.Second},
		{"progressing for four minutes", holdfastv1.HealthInProgress, 4 * time.Minute, 40 * time.Second},
		{"timed out", holdfastv1.HealthInProgress, 10 * time.Minute, unhealthyRetry},
		{"failed", holdfastv1.HealthFailed, 10 * time.Second, unhealthyRetry},
	}
	for _, tc := range cases {
		css := &holdfastv1.ClusterServiceStatus{}
		css.Status.Services = []holdfastv1.ServiceStatus{{Name: "web", RevisionTime: &metav1.Time{Time: now.Add(-tc.age)}}}
		s := &scope{css: css, now: now, resources: []holdfastv1.ResourceStatus{entry(tc.health)}}
		if got := healthWait(s); got != tc.want {
			t.Errorf("%s: healthWait = %s, want %s", tc.name, got, tc.want)
		}
	}
}
