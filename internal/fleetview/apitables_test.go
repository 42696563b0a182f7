package fleetview

import (
	"bytes"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// TestServiceStatusesShowHealth: each service's row gives its health, and a service in place but
// not healthy says why in the message column.
func TestServiceStatusesShowHealth(t *testing.T) {
	css := &holdfastv1.ClusterServiceStatus{
		ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "web.c1"},
		Spec:       holdfastv1.ClusterServiceStatusSpec{MultiClusterService: "web", Cluster: "c1"},
	}
	css.Status.Services = []holdfastv1.ServiceStatus{
		{Name: "api", Ready: metav1.ConditionTrue, Reason: holdfastv1.AppliedReason, Objects: 3,
			Health: holdfastv1.HealthInProgress, HealthMessage: "apps/v1 Deployment demo/api: 0 of 2 replicas ready"},
		{Name: "config", Ready: metav1.ConditionTrue, Reason: holdfastv1.AppliedReason, Objects: 1, Health: holdfastv1.HealthCurrent},
	}
	var out bytes.Buffer
	if err := PrintServiceStatuses(&out, []*holdfastv1.ClusterServiceStatus{css}, time.Now()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "HEALTH") {
		t.Fatalf("output:\n%s\nwant a HEALTH header and one row per service", out.String())
	}
	if !strings.Contains(lines[1], "InProgress") || !strings.Contains(lines[1], "0 of 2 replicas") {
		t.Errorf("api row %q: want its health and why", lines[1])
	}
	if !strings.Contains(lines[2], "Current") {
		t.Errorf("config row %q: want Current", lines[2])
	}
}
