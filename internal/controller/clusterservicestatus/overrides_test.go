package clusterservicestatus

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/render"
)

// TestOverridesForSelectsAndRefusesBadSelectors: the overrides a cluster's labels select are
// given to the render in order; one whose clusterSelector is not a valid selector (which the
// API server lets through) fails the service with reason OverrideFailed naming it.
func TestOverridesForSelectsAndRefusesBadSelectors(t *testing.T) {
	cluster := &holdfastv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: map[string]string{"env": "prod"}}}
	svc := holdfastv1.Service{Name: "web", Overrides: []holdfastv1.ServiceOverride{
		{Name: "all"},
		{Name: "dev", ClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}},
		{Name: "prod", ClusterSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
			Patches: []holdfastv1.OverridePatch{{Patch: "p", Target: &holdfastv1.PatchTarget{Kind: "ConfigMap", LabelSelector: "a=b"}}}},
	}}
	got, err := overridesFor(svc, cluster)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "all" || got[1].Name != "prod" ||
		got[1].Patches[0].Target.Kind != "ConfigMap" || got[1].Patches[0].Target.LabelSelector != "a=b" {
		t.Fatalf("overrides for the prod cluster: %+v", got)
	}

	svc.Overrides = append(svc.Overrides, holdfastv1.ServiceOverride{Name: "bad", ClusterSelector: metav1.LabelSelector{
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Near", Values: []string{"x"}}}}})
	_, err = overridesFor(svc, cluster)
	p, transient := renderProblem(err)
	if p.reason != render.ReasonOverrideFailed || transient || !strings.Contains(p.message, `override "bad"`) {
		t.Fatalf("a bad selector: %+v (transient %v)", p, transient)
	}
}
