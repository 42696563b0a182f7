package clusterservicestatus

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/naming"
)

// TestHealthFollowsWatchEvents: an update of an object that is not drift (its status, say)
// brings a reconcile of its status object, once for a burst, while the health it recorded is not
// all healthy; not when it is, nor for an owner with no status object on that cluster.
func TestHealthFollowsWatchEvents(t *testing.T) {
	cluster := types.NamespacedName{Namespace: "fleet", Name: "c1"}
	withHealth := func(set string, status metav1.ConditionStatus) *holdfastv1.ClusterServiceStatus {
		css := &holdfastv1.ClusterServiceStatus{
			ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: naming.StatusName(set, "c1")},
			Spec:       holdfastv1.ClusterServiceStatusSpec{MultiClusterService: set, Cluster: "c1"},
		}
		css.Status.Conditions = []metav1.Condition{{Type: holdfastv1.HealthyCondition, Status: status, Reason: "x"}}
		return css
	}
	r := driftReconciler(t, withHealth("progressing", metav1.ConditionUnknown), withHealth("healthy", metav1.ConditionTrue))
	for range 5 {
		r.onUpdate(cluster, changed("progressing").Object)
	}
	r.onUpdate(cluster, changed("healthy").Object)
	r.onUpdate(cluster, changed("nobody").Object)
	select {
	case e := <-r.recheck:
		if e.Object.Name != naming.StatusName("progressing", "c1") {
			t.Fatalf("reconcile of %s, want the progressing status object", e.Object.Name)
		}
	case <-time.After(5 * healthEventDelay):
		t.Fatal("no reconcile after an update of a status object's object while it is not healthy")
	}
	select {
	case e := <-r.recheck:
		t.Fatalf("another reconcile: %s (a burst is one re-read; a healthy status object or an unknown owner none)", e.Object.Name)
	case <-time.After(2 * healthEventDelay):
	}
}
