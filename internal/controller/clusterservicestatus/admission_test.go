package clusterservicestatus

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/admission"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/conditions"
)

// The Attribution condition, computed with the others: what a target can do, and removed when
// the service set switches attribution off.
func TestSetAttribution(t *testing.T) {
	auto := &holdfastv1.MultiClusterService{Spec: holdfastv1.MultiClusterServiceSpec{
		Drift: &holdfastv1.DriftPolicy{Attribution: holdfastv1.AttributionAuto}}}
	applied := serviceOutcome{name: admission.AttributionService, result: &apply.Result{Objects: []apply.ObjectResult{{Action: apply.Created}}}}
	cases := []struct {
		name     string
		mcs      *holdfastv1.MultiClusterService
		st       *admissionState
		services []serviceOutcome
		want     metav1.ConditionStatus
		reason   string
	}{
		{"unsupported target", auto, &admissionState{kind: &admissionKinds[0], unsupported: true}, nil, metav1.ConditionFalse, holdfastv1.AttributionUnsupportedReason},
		{"identity unknown", auto, &admissionState{kind: &admissionKinds[0], pending: &problem{holdfastv1.AttributionPendingReason, "x"}}, nil, metav1.ConditionUnknown, holdfastv1.AttributionPendingReason},
		{"applied", auto, &admissionState{kind: &admissionKinds[0]}, []serviceOutcome{applied}, metav1.ConditionTrue, holdfastv1.AttributionActiveReason},
		{"off", &holdfastv1.MultiClusterService{}, nil, nil, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			css := &holdfastv1.ClusterServiceStatus{}
			conditions.Set(css, metav1.Condition{Type: holdfastv1.AttributionCondition, Status: metav1.ConditionTrue, Reason: "Before"})
			s := &scope{css: css, mcs: c.mcs, deployed: true, services: c.services}
			if c.st != nil {
				s.admission = []*admissionState{c.st}
			}
			setAdmissionConditions(s)
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

// preventionOf: the set's mode with each service's override; services that opted out of drift
// handling or are disabled are never covered; ignore rules are passed on, and break-glass is the
// platform's and the set's.
func TestPreventionOf(t *testing.T) {
	setRule := holdfastv1.IgnoreRule{Paths: []string{"/data/rotated"}}
	svcRule := holdfastv1.IgnoreRule{Paths: []string{"/spec/replicas"}}
	mcs := &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "shop"}, Spec: holdfastv1.MultiClusterServiceSpec{
		Drift: &holdfastv1.DriftPolicy{Prevention: holdfastv1.PreventionDeny, Ignore: []holdfastv1.IgnoreRule{setRule},
			BreakGlass: &holdfastv1.BreakGlass{Groups: []string{"oncall"}}},
		Services: []holdfastv1.Service{
			{Name: "web", Drift: &holdfastv1.ServiceDriftPolicy{Ignore: []holdfastv1.IgnoreRule{svcRule}}},
			{Name: "docs", Drift: &holdfastv1.ServiceDriftPolicy{Prevention: holdfastv1.PreventionWarn}},
			{Name: "free", Drift: &holdfastv1.ServiceDriftPolicy{Prevention: holdfastv1.PreventionOff}},
			{Name: "opted-out", Drift: &holdfastv1.ServiceDriftPolicy{Disabled: true, Prevention: holdfastv1.PreventionDeny}},
			{Name: "withdrawn", Disabled: true},
		},
	}}
	got := preventionOf(mcs, admissionInputs{holdfast: []string{"holdfast"}, breakGlass: holdfastv1.BreakGlass{Groups: []string{"platform"}, Users: []string{"root"}}})
	want := admission.Prevention{ServiceSet: "shop", Holdfast: []string{"holdfast"}, BreakGlass: holdfastv1.BreakGlass{Groups: []string{"platform", "oncall"}, Users: []string{"root"}},
		Services: []admission.PreventedService{
			{Name: "web", Mode: holdfastv1.PreventionDeny, Ignore: []holdfastv1.IgnoreRule{setRule, svcRule}},
			{Name: "docs", Mode: holdfastv1.PreventionWarn, Ignore: []holdfastv1.IgnoreRule{setRule}},
		}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("preventionOf =\n%+v\nwant\n%+v", got, want)
	}
	if msg := preventionMessage(mcs); !strings.Contains(msg, "holdfast-prevention-shop-deny (Deny: [web])") || !strings.Contains(msg, "holdfast-prevention-shop-warn (Warn: [docs])") {
		t.Fatalf("message %q does not name the policies and their services", msg)
	}
	off := &holdfastv1.MultiClusterService{Spec: holdfastv1.MultiClusterServiceSpec{Services: []holdfastv1.Service{{Name: "web"}}}}
	if admissionKinds[1].wanted(off) {
		t.Fatal("prevention wanted by a service set that does not ask for it")
	}
}
