package clusterservicestatus

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/drift"
	"holdfast.dev/holdfast/internal/fleet"
)

// TestComparisonDue: in drift-detection mode a status object compares with the cluster the
// first time, after a reconnect, and after its connection recovered since the last comparison
// (a partition too short to disconnect the Cluster).
func TestComparisonDue(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	key := types.NamespacedName{Namespace: "fleet", Name: "web.c1"}
	tests := []struct {
		name      string
		mode      holdfastv1.SyncMode
		compared  time.Time // zero: never in this process
		connected time.Time // last transition of Connected
		recovered time.Time // zero: never
		want      bool
	}{
		{name: "first time", mode: holdfastv1.SyncModeContinuousWithDriftDetection, connected: t0, want: true},
		{name: "compared since", mode: holdfastv1.SyncModeContinuousWithDriftDetection, compared: t0.Add(time.Minute), connected: t0},
		{name: "reconnected since", mode: holdfastv1.SyncModeContinuousWithDriftDetection, compared: t0, connected: t0.Add(time.Minute), want: true},
		{name: "recovered since", mode: holdfastv1.SyncModeContinuousWithDriftDetection, compared: t0.Add(time.Minute), connected: t0,
			recovered: t0.Add(time.Minute + time.Millisecond), want: true},
		{name: "recovered before", mode: holdfastv1.SyncModeContinuousWithDriftDetection, compared: t0.Add(time.Minute), connected: t0,
			recovered: t0.Add(time.Minute - time.Millisecond)},
		{name: "not watched", mode: holdfastv1.SyncModeContinuous, compared: t0.Add(time.Minute), connected: t0, recovered: t0.Add(2 * time.Minute)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Reconciler{memory: newMemory(), fights: &drift.Fights{}}
			if !tt.compared.IsZero() {
				r.memory.setCompared(key, "c1", tt.compared)
			}
			conn := &fleet.Connection{}
			if !tt.recovered.IsZero() {
				conn.MarkProbeFailed()
				conn.MarkConnected(tt.recovered)
			}
			cluster := &holdfastv1.Cluster{}
			cluster.Status.Conditions = []metav1.Condition{{Type: holdfastv1.ClusterConnectedCondition, Status: metav1.ConditionTrue,
				LastTransitionTime: metav1.NewTime(tt.connected)}}
			css := &holdfastv1.ClusterServiceStatus{}
			css.Namespace, css.Name = key.Namespace, key.Name
			mcs := &holdfastv1.MultiClusterService{Spec: holdfastv1.MultiClusterServiceSpec{SyncMode: tt.mode}}
			s := &scope{css: css, mcs: mcs, cluster: cluster, conn: conn, now: t0.Add(time.Hour)}
			if got := r.comparisonDue(s); got != tt.want {
				t.Errorf("comparisonDue = %v, want %v", got, tt.want)
			}
		})
	}
}
