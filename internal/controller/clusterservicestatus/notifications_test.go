package clusterservicestatus

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/notify"
)

func TestClusterEventsAreSentWhenAStateBegins(t *testing.T) {
	withConditions := func(cs ...metav1.Condition) *holdfastv1.ClusterServiceStatus {
		css := &holdfastv1.ClusterServiceStatus{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "web-eu-1"}}
		css.Spec.Cluster, css.Spec.MultiClusterService = "eu-1", "web"
		css.Status.Conditions = cs
		return css
	}
	ready := metav1.Condition{Type: holdfastv1.ReadyCondition, Status: metav1.ConditionTrue, Reason: holdfastv1.ReadyReason}
	unreachable := metav1.Condition{Type: holdfastv1.ReadyCondition, Status: metav1.ConditionFalse, Reason: holdfastv1.ClusterNotReadyReason, Message: "Cluster fleet/eu-1 is not Connected"}
	healthy := metav1.Condition{Type: holdfastv1.HealthyCondition, Status: metav1.ConditionTrue, Reason: "Healthy"}
	unhealthy := metav1.Condition{Type: holdfastv1.HealthyCondition, Status: metav1.ConditionFalse, Reason: holdfastv1.UnhealthyReason, Message: "apps/v1 Deployment web/web: failed"}
	cases := []struct {
		name          string
		before, after *holdfastv1.ClusterServiceStatus
		want          []notify.EventType
	}{
		{"nothing changed", withConditions(ready, healthy), withConditions(ready, healthy), nil},
		{"the cluster became unreachable", withConditions(ready, healthy), withConditions(unreachable, healthy), []notify.EventType{notify.ClusterUnreachable}},
		{"still unreachable", withConditions(unreachable, healthy), withConditions(unreachable, healthy), nil},
		{"objects became unhealthy", withConditions(ready, healthy), withConditions(ready, unhealthy), []notify.EventType{notify.Unhealthy}},
		{"both at once", withConditions(ready, healthy), withConditions(unreachable, unhealthy), []notify.EventType{notify.ClusterUnreachable, notify.Unhealthy}},
		{"unhealthy from the first visit", withConditions(), withConditions(ready, unhealthy), []notify.EventType{notify.Unhealthy}},
		{"back to ready", withConditions(unreachable, unhealthy), withConditions(ready, healthy), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := clusterEvents(&scope{css: tc.after, before: tc.before})
			if len(got) != len(tc.want) {
				t.Fatalf("events %v, want %v", got, tc.want)
			}
			for i, e := range got {
				if e.Type != tc.want[i] || e.Cluster.String() != "fleet/eu-1" || e.MultiClusterService != "web" || e.Message == "" {
					t.Errorf("event %d: %+v, want %s on fleet/eu-1 of web with the condition's message", i, e, tc.want[i])
				}
			}
		})
	}
}
