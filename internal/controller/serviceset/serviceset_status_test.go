package serviceset

import (
	"errors"
	"maps"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/tenancy"
)

func TestDesiredKeepsToTheNamespace(t *testing.T) {
	ss := &holdfastv1.ServiceSet{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "apps", Generation: 3,
		Annotations: map[string]string{holdfastv1.ReconcileRequestedAtAnnotation: "now", "other": "x",
			holdfastv1.RolloutApproveAnnotation: "r2 t", holdfastv1.RolloutApprovedByAnnotation: "tina", holdfastv1.RolloutResumeAnnotation: "t1"}}}
	ss.Spec.ClusterSelector.MatchLabels = map[string]string{"env": "prod"}
	mcs := (&Reconciler{}).desired(ss)
	if mcs.Name != "team-a.apps" || tenancy.TenantOf(mcs) != "team-a" {
		t.Errorf("name %q, tenant %q", mcs.Name, tenancy.TenantOf(mcs))
	}
	if got := mcs.Spec.ClusterSelector.Namespaces; len(got) != 1 || got[0] != "team-a" {
		t.Errorf("namespaces %v, want only the ServiceSet's", got)
	}
	if mcs.Spec.ClusterSelector.MatchLabels["env"] != "prod" {
		t.Errorf("label selector %v lost", mcs.Spec.ClusterSelector.LabelSelector)
	}
	want := map[string]string{holdfastv1.ReconcileRequestedAtAnnotation: "now",
		holdfastv1.RolloutApproveAnnotation: "r2 t", holdfastv1.RolloutApprovedByAnnotation: "tina", holdfastv1.RolloutResumeAnnotation: "t1"}
	if !maps.Equal(mcs.Annotations, want) {
		t.Errorf("annotations %v, want only the requests %v", mcs.Annotations, want)
	}
	if ss.Spec.ClusterSelector.Namespaces != nil {
		t.Error("desired changed the ServiceSet")
	}
	if mcs.Spec.ServiceAccount != nil {
		t.Errorf("acts as %+v without a tenant ServiceAccount", mcs.Spec.ServiceAccount)
	}
	locked := (&Reconciler{Tenancy: tenancy.Policy{TenantServiceAccount: "deployer"}}).desired(ss)
	if sa := locked.Spec.ServiceAccount; sa == nil || sa.Namespace != "team-a" || sa.Name != "deployer" {
		t.Errorf("acts as %+v, want team-a/deployer", sa)
	}
}

func TestComputeStatus(t *testing.T) {
	ss := &holdfastv1.ServiceSet{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "apps", Generation: 2}}
	running := &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "team-a.apps", Generation: 5}}
	running.Status.ObservedGeneration, running.Status.MatchingClusters, running.Status.ReadyClusters = 5, 2, 1
	running.Status.Conditions = []metav1.Condition{{Type: holdfastv1.ReadyCondition, Status: metav1.ConditionFalse,
		Reason: holdfastv1.ClustersNotReadyReason, Message: "1 of 2 clusters ready"}}
	stale := running.DeepCopy()
	stale.Status.ObservedGeneration = 4

	cases := []struct {
		name     string
		s        scope
		reason   string
		stalled  metav1.ConditionStatus
		observed int64
	}{
		{"refused", scope{refused: errors.New(`template namespace "fleet"`)}, holdfastv1.CrossNamespaceReferenceReason, metav1.ConditionTrue, 0},
		{"not running yet", scope{}, holdfastv1.ProgressingReason, metav1.ConditionFalse, 0},
		{"its MultiClusterService has not caught up", scope{mcs: stale}, holdfastv1.ProgressingReason, metav1.ConditionFalse, 0},
		{"running: its Ready", scope{mcs: running}, holdfastv1.ClustersNotReadyReason, metav1.ConditionFalse, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.s.ss = ss.DeepCopy()
			computeStatus(&c.s)
			got := c.s.ss
			if r := conditions.Get(got, holdfastv1.ReadyCondition); r == nil || r.Reason != c.reason {
				t.Errorf("Ready %+v, want reason %s", r, c.reason)
			}
			if st := conditions.Get(got, holdfastv1.StalledCondition); st == nil || st.Status != c.stalled {
				t.Errorf("Stalled %+v, want %s", st, c.stalled)
			}
			if got.Status.ObservedGeneration != c.observed {
				t.Errorf("observedGeneration %d, want %d", got.Status.ObservedGeneration, c.observed)
			}
		})
	}
	s := scope{ss: ss.DeepCopy(), mcs: running}
	computeStatus(&s)
	if s.ss.Status.MatchingClusters != 2 || s.ss.Status.ReadyClusters != 1 || s.ss.Status.MultiClusterService != "team-a.apps" {
		t.Errorf("counts not copied: %+v", s.ss.Status)
	}
}

func TestDesiredCarriesTheServiceSetsLabelsButNotOverTheTenants(t *testing.T) {
	ss := &holdfastv1.ServiceSet{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "apps",
		Labels: map[string]string{"env": "prod", holdfastv1.TenantNamespaceLabel: "team-b"}}}
	mcs := (&Reconciler{}).desired(ss)
	if mcs.Labels["env"] != "prod" {
		t.Errorf("labels %v, want the ServiceSet's env=prod, which AlertRules select by", mcs.Labels)
	}
	if tenancy.TenantOf(mcs) != "team-a" {
		t.Errorf("tenant %q: a ServiceSet's own label must not name another tenant", tenancy.TenantOf(mcs))
	}
	if ss.Labels[holdfastv1.TenantNamespaceLabel] != "team-b" {
		t.Error("desired changed the ServiceSet's labels")
	}
}
