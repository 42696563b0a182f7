package clusterservicestatus

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/attribution"
	"holdfast.dev/holdfast/internal/conditions"
)

// The Attribution condition, computed with the others: what a target can do, and removed when
// the service set switches attribution off.
func TestSetAttribution(t *testing.T) {
	auto := &holdfastv1.MultiClusterService{Spec: holdfastv1.MultiClusterServiceSpec{
		Drift: &holdfastv1.DriftPolicy{Attribution: holdfastv1.AttributionAuto}}}
	applied := serviceOutcome{name: attribution.Service, result: &apply.Result{Objects: []apply.ObjectResult{{Action: apply.Created}}}}
	cases := []struct {
		name     string
		mcs      *holdfastv1.MultiClusterService
		st       *attributionState
		services []serviceOutcome
		want     metav1.ConditionStatus
		reason   string
	}{
		{"unsupported target", auto, &attributionState{auto: true, unsupported: true}, nil, metav1.ConditionFalse, holdfastv1.AttributionUnsupportedReason},
		{"identity unknown", auto, &attributionState{auto: true, pending: &problem{holdfastv1.AttributionPendingReason, "x"}}, nil, metav1.ConditionUnknown, holdfastv1.AttributionPendingReason},
		{"applied", auto, &attributionState{auto: true}, []serviceOutcome{applied}, metav1.ConditionTrue, holdfastv1.AttributionActiveReason},
		{"off", &holdfastv1.MultiClusterService{}, &attributionState{}, nil, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			css := &holdfastv1.ClusterServiceStatus{}
			conditions.Set(css, metav1.Condition{Type: holdfastv1.AttributionCondition, Status: metav1.ConditionTrue, Reason: "Before"})
			s := &scope{css: css, mcs: c.mcs, attribution: c.st, deployed: true, services: c.services}
			setAttribution(s)
			got := conditions.Get(css, holdfastv1.AttributionCondition)
			if c.want == "" {
				if got != nil {
					t.Fatalf("condition %+v kept with attribution Off", got)
				}
				return
			}
			if got == nil || got.Status != c.want || got.Reason != c.reason {
				t.Fatalf("condition = %+v, want %s %s", got, c.want, c.reason)
			}
		})
	}
}
