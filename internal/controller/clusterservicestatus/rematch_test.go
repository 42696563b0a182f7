package clusterservicestatus

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/inventory"
)

// TestDriftRecords: the deletion of an object the status object never applied is no drift of
// it (a quick rematch: the namespace its withdrawal deleted goes after the new status object
// deployed), and an older record of an object a deploy put back is marked corrected.
func TestDriftRecords(t *testing.T) {
	ref := func(kind, name string) holdfastv1.ResourceRef {
		return holdfastv1.ResourceRef{Version: "v1", Kind: kind, Namespace: "demo", Name: name}
	}
	record := func(kind, name string, typ holdfastv1.DriftType) holdfastv1.DriftRecord {
		return holdfastv1.DriftRecord{ResourceRef: ref(kind, name), Service: "app", DriftDetail: holdfastv1.DriftDetail{Type: typ}}
	}
	resources := []holdfastv1.ResourceStatus{
		{ResourceRef: ref("Namespace", "demo"), Service: "app", State: holdfastv1.ResourceFailed, Message: "being deleted"},
		{ResourceRef: ref("ConfigMap", "a"), Service: "app", State: holdfastv1.ResourceMissing, Desired: "d1"},
		{ResourceRef: ref("ConfigMap", "b"), Service: "app", State: holdfastv1.ResourceInSync, Desired: "d2"},
		// A comparison found c gone (recorded, the correction refused) before the watch's event came.
		{ResourceRef: ref("ConfigMap", "c"), Service: "app", State: holdfastv1.ResourceUncorrectable, Desired: "d3",
			LastDrift: &holdfastv1.DriftDetail{Type: holdfastv1.DriftDeleted, Detection: holdfastv1.DriftDetectedByComparison}},
	}
	css := statusObject("fleet", "web.c1", "web", "c1")
	css.Status.Resources = resources
	css.Status.Drifts = []holdfastv1.DriftRecord{record("ConfigMap", "c", holdfastv1.DriftDeleted), // by the comparison
		record("ConfigMap", "b", holdfastv1.DriftDeleted)} // left by Report mode
	s := &scope{css: css, deployed: true, previous: inventory.IndexOf(resources), end: time.Now(),
		drifts: []holdfastv1.DriftRecord{record("Namespace", "demo", holdfastv1.DriftDeleted), record("ConfigMap", "a", holdfastv1.DriftDeleted),
			record("ConfigMap", "c", holdfastv1.DriftDeleted)}}
	recordDrifts(s)

	var got []string // name: corrected
	for _, d := range css.Status.Drifts {
		got = append(got, fmt.Sprintf("%s: %v", d.Name, d.CorrectedTime != nil))
	}
	want := []string{"a: false", "c: false", "b: true"}
	if !slices.Equal(got, want) {
		t.Fatalf("records (name: corrected) = %v, want %v", got, want)
	}
	if css.Status.DriftCount != 1 {
		t.Fatalf("driftCount = %d, want 1 (the namespace's deletion is none, c's is recorded already)", css.Status.DriftCount)
	}
}

// TestWithdrawalAwaitingTheConnectionComesBackSoon: after a restart the Cluster is Connected but
// this process has not connected yet; a status object being deleted then waits as long as one
// deploying (connectionWait, unless the registry reports the connection sooner), not
// DefaultClusterWait (test/soak saw a withdrawal wait 61 s).
func TestWithdrawalAwaitingTheConnectionComesBackSoon(t *testing.T) {
	for _, awaiting := range []bool{true, false} {
		css := statusObject("fleet", "web.c1", "web", "c1")
		css.Finalizers = []string{holdfastv1.CleanupFinalizer}
		css.DeletionTimestamp = new(metav1.Now())
		css.Status.Resources = []holdfastv1.ResourceStatus{{ResourceRef: holdfastv1.ResourceRef{Version: "v1", Kind: "ConfigMap", Namespace: "demo", Name: "a"},
			Service: "app", Desired: "d1", State: holdfastv1.ResourceInSync}}
		r := driftReconciler(t, css)
		r.APIReader = r.Client
		s := &scope{css: css, before: css.DeepCopy(), cluster: &holdfastv1.Cluster{}, awaitingConnection: awaiting,
			clusterProblem: &problem{holdfastv1.ClusterNotReadyReason, "no connection to Cluster fleet/c1 yet"}}
		res, err := r.reconcileDelete(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		want := DefaultClusterWait
		if awaiting {
			want = connectionWait
		}
		if res.RequeueAfter != want {
			t.Fatalf("awaiting the connection %v: comes back after %v, want %v", awaiting, res.RequeueAfter, want)
		}
	}
}

// TestAwaitingTheConnectionKeepsTheRecordedStatus: a status object whose Cluster is Connected
// but which this process has not connected to yet (a restart, a cluster taken over from another
// replica) keeps what was recorded, Ready included, and the drifts taken for the reconcile go
// back to memory; one that never had a status gets the wait written.
func TestAwaitingTheConnectionKeepsTheRecordedStatus(t *testing.T) {
	for _, recorded := range []bool{true, false} {
		css := statusObject("fleet", "web.c1", "web", "c1")
		if recorded {
			css.Status.Conditions = []metav1.Condition{{Type: holdfastv1.ReadyCondition, Status: metav1.ConditionTrue,
				Reason: holdfastv1.ReadyCondition, LastTransitionTime: metav1.Now()}}
		}
		r := driftReconciler(t, css)
		r.APIReader = r.Client
		key := client.ObjectKeyFromObject(css)
		before := &holdfastv1.ClusterServiceStatus{}
		if err := r.Client.Get(context.Background(), key, before); err != nil {
			t.Fatal(err)
		}
		drift := holdfastv1.DriftRecord{ResourceRef: holdfastv1.ResourceRef{Version: "v1", Kind: "ConfigMap", Namespace: "demo", Name: "a"},
			Service: "app", DriftDetail: holdfastv1.DriftDetail{Type: holdfastv1.DriftChanged}}
		s := &scope{css: before.DeepCopy(), before: before.DeepCopy(), cluster: &holdfastv1.Cluster{}, awaitingConnection: true,
			clusterProblem: &problem{holdfastv1.ClusterNotReadyReason, "no connection to Cluster fleet/c1 yet"},
			drifts:         []holdfastv1.DriftRecord{drift}}
		if err := r.patchStatus(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		after := &holdfastv1.ClusterServiceStatus{}
		if err := r.Client.Get(context.Background(), key, after); err != nil {
			t.Fatal(err)
		}
		ready := conditions.Get(after, holdfastv1.ReadyCondition)
		switch {
		case recorded && after.ResourceVersion != before.ResourceVersion:
			t.Errorf("recorded status: written while awaiting the connection (Ready now %+v)", ready)
		case recorded && !r.memory.hasDrifts(key):
			t.Error("recorded status: the drifts taken for the reconcile were not returned to memory")
		case !recorded && (ready == nil || ready.Reason != holdfastv1.ClusterNotReadyReason):
			t.Errorf("no status yet: Ready = %+v, want False with reason %s", ready, holdfastv1.ClusterNotReadyReason)
		}
	}
}
