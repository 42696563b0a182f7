package multiclusterservice

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/conditions"
	"holdfast.dev/holdfast/internal/rollout"
	"holdfast.dev/holdfast/internal/tenancy"
)

// generation is the MultiClusterService's generation in every computeStatus case.
const generation = 3

func clusters(names ...string) []holdfastv1.Cluster {
	out := make([]holdfastv1.Cluster, 0, len(names))
	for _, n := range names {
		out = append(out, holdfastv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: n}})
	}
	return out
}

// statusOf is a ClusterServiceStatus of cluster whose Ready condition (nil: none) was written
// for observed, the generation of the MultiClusterService it saw.
func statusOf(cluster string, observed int64, ready *metav1.Condition) holdfastv1.ClusterServiceStatus {
	css := holdfastv1.ClusterServiceStatus{
		ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "web-" + cluster},
		Spec:       holdfastv1.ClusterServiceStatusSpec{MultiClusterService: "web", Cluster: cluster},
	}
	css.Status.ObservedServiceSetGeneration = observed
	if ready != nil {
		css.Status.Conditions = []metav1.Condition{*ready}
	}
	return css
}

func ready(status metav1.ConditionStatus, reason string) *metav1.Condition {
	return &metav1.Condition{Type: holdfastv1.ReadyCondition, Status: status, Reason: reason}
}

func readyStatus(cluster string) holdfastv1.ClusterServiceStatus {
	return statusOf(cluster, generation, ready(metav1.ConditionTrue, holdfastv1.ReadyReason))
}

func drifted(css holdfastv1.ClusterServiceStatus, n int32) holdfastv1.ClusterServiceStatus {
	css.Status.DriftedCount = n
	return css
}

func handled(css holdfastv1.ClusterServiceStatus, at string) holdfastv1.ClusterServiceStatus {
	css.Status.LastHandledReconcileAt = at
	return css
}

func TestComputeStatus(t *testing.T) {
	type want struct {
		status   metav1.ConditionStatus
		reason   string
		message  string
		matching int32
		ready    int32
		failed   int32
		// driftedClusters and driftedObjects are the drift sums.
		driftedClusters, driftedObjects int32
		// observedGeneration is generation, or the previous value (1) when it must not move.
		observedGeneration int64
		lastHandled        string
	}
	notReconciled := make([]holdfastv1.ClusterServiceStatus, 0, 7)
	for i := 1; i <= 7; i++ {
		notReconciled = append(notReconciled, statusOf(fmt.Sprintf("c%d", i), generation, nil))
	}
	tests := []struct {
		name      string
		paused    bool
		policy    holdfastv1.DeletionPolicy
		requested string // the reconcile-requested-at annotation
		matching  []holdfastv1.Cluster
		statuses  []holdfastv1.ClusterServiceStatus
		invalid   error
		deleting  bool
		want      want
	}{
		{
			name: "no Cluster matches",
			want: want{status: metav1.ConditionTrue, reason: holdfastv1.NoMatchingClustersReason,
				message: "no Cluster matches spec.clusterSelector", observedGeneration: generation, lastHandled: "before"},
		},
		{
			name:     "every cluster Ready",
			matching: clusters("a", "b"),
			statuses: []holdfastv1.ClusterServiceStatus{readyStatus("a"), readyStatus("b")},
			want: want{status: metav1.ConditionTrue, reason: holdfastv1.ClustersReadyReason, message: "2 of 2 clusters ready",
				matching: 2, ready: 2, observedGeneration: generation, lastHandled: "before"},
		},
		{
			name:     "a status without Ready is waited for",
			matching: clusters("a", "b"),
			statuses: []holdfastv1.ClusterServiceStatus{readyStatus("a"), statusOf("b", generation, nil)},
			want: want{status: metav1.ConditionUnknown, reason: holdfastv1.ProgressingReason,
				message: "1 of 2 clusters ready; waiting for b (not reconciled yet)", matching: 2, ready: 1,
				observedGeneration: generation, lastHandled: "before"},
		},
		{
			name:     "Ready for an older generation is waited for",
			matching: clusters("a", "b"),
			statuses: []holdfastv1.ClusterServiceStatus{
				readyStatus("a"), statusOf("b", generation-1, ready(metav1.ConditionTrue, holdfastv1.ReadyReason)),
			},
			want: want{status: metav1.ConditionUnknown, reason: holdfastv1.ProgressingReason,
				message: "1 of 2 clusters ready; waiting for b (not reconciled yet)", matching: 2, ready: 1,
				observedGeneration: generation, lastHandled: "before"},
		},
		{
			name:     "a cluster that failed",
			matching: clusters("a", "b"),
			statuses: []holdfastv1.ClusterServiceStatus{
				readyStatus("a"), statusOf("b", generation, ready(metav1.ConditionFalse, holdfastv1.ApplyFailedReason)),
			},
			want: want{status: metav1.ConditionFalse, reason: holdfastv1.ClustersNotReadyReason,
				message: "1 of 2 clusters ready; not ready: b (ApplyFailed)", matching: 2, ready: 1, failed: 1,
				observedGeneration: generation, lastHandled: "before"},
		},
		{
			name:     "a cluster that waits is not ready but not failed",
			matching: clusters("a", "b"),
			statuses: []holdfastv1.ClusterServiceStatus{
				statusOf("b", generation, ready(metav1.ConditionFalse, holdfastv1.ClusterNotReadyReason)),
				statusOf("a", generation, nil),
			},
			want: want{status: metav1.ConditionFalse, reason: holdfastv1.ClustersNotReadyReason,
				message: "0 of 2 clusters ready; not ready: a (not reconciled yet), b (ClusterNotReady)", matching: 2,
				observedGeneration: generation, lastHandled: "before"},
		},
		{
			name:     "Ready Unknown is not failed, whatever its reason",
			matching: clusters("a"),
			statuses: []holdfastv1.ClusterServiceStatus{
				statusOf("a", generation, ready(metav1.ConditionUnknown, holdfastv1.RenderFailedReason)),
			},
			want: want{status: metav1.ConditionFalse, reason: holdfastv1.ClustersNotReadyReason,
				message: "0 of 1 clusters ready; not ready: a (RenderFailed)", matching: 1,
				observedGeneration: generation, lastHandled: "before"},
		},
		{
			name:     "more than five clusters waited for are counted, not named",
			matching: clusters("c1", "c2", "c3", "c4", "c5", "c6", "c7"),
			statuses: notReconciled,
			want: want{status: metav1.ConditionUnknown, reason: holdfastv1.ProgressingReason,
				message: "0 of 7 clusters ready; waiting for c1 (not reconciled yet), c2 (not reconciled yet), " +
					"c3 (not reconciled yet), c4 (not reconciled yet), c5 (not reconciled yet) and 2 more",
				matching: 7, observedGeneration: generation, lastHandled: "before"},
		},
		{
			name:     "drift is summed over the clusters",
			matching: clusters("a", "b", "c"),
			statuses: []holdfastv1.ClusterServiceStatus{
				drifted(readyStatus("a"), 3), readyStatus("b"), drifted(readyStatus("c"), 2),
			},
			want: want{status: metav1.ConditionTrue, reason: holdfastv1.ClustersReadyReason, message: "3 of 3 clusters ready",
				matching: 3, ready: 3, driftedClusters: 2, driftedObjects: 5, observedGeneration: generation, lastHandled: "before"},
		},
		{
			name:     "paused",
			paused:   true,
			matching: clusters("a", "b"),
			statuses: []holdfastv1.ClusterServiceStatus{
				readyStatus("a"), statusOf("b", generation, ready(metav1.ConditionFalse, holdfastv1.RenderFailedReason)),
			},
			want: want{status: metav1.ConditionFalse, reason: holdfastv1.PausedReason,
				message: "spec.paused is true: no cluster is changed", matching: 2, ready: 1, failed: 1,
				observedGeneration: generation, lastHandled: "before"},
		},
		{
			name:    "an invalid selector",
			invalid: errors.New("spec.clusterSelector is not a valid label selector: bad"),
			want: want{status: metav1.ConditionFalse, reason: holdfastv1.InvalidSelectorReason,
				message: "spec.clusterSelector is not a valid label selector: bad", observedGeneration: 1, lastHandled: "before"},
		},
		{
			name:      "deleting",
			deleting:  true,
			policy:    holdfastv1.DeletionOrphan,
			requested: "t1",
			matching:  clusters("a", "b"),
			statuses:  []holdfastv1.ClusterServiceStatus{handled(readyStatus("a"), "t1"), handled(readyStatus("b"), "t1")},
			want: want{status: metav1.ConditionFalse, reason: holdfastv1.DeletingReason,
				message: "withdrawing from 2 clusters (deletionPolicy Orphan)", matching: 2, ready: 2,
				observedGeneration: 1, lastHandled: "before"},
		},
		{
			name:      "a manual request every cluster handled",
			requested: "t1",
			matching:  clusters("a", "b"),
			statuses:  []holdfastv1.ClusterServiceStatus{handled(readyStatus("a"), "t1"), handled(readyStatus("b"), "t1")},
			want: want{status: metav1.ConditionTrue, reason: holdfastv1.ClustersReadyReason, message: "2 of 2 clusters ready",
				matching: 2, ready: 2, observedGeneration: generation, lastHandled: "t1"},
		},
		{
			name:      "a manual request one cluster has not handled yet",
			requested: "t1",
			matching:  clusters("a", "b"),
			statuses:  []holdfastv1.ClusterServiceStatus{handled(readyStatus("a"), "t1"), handled(readyStatus("b"), "t0")},
			want: want{status: metav1.ConditionTrue, reason: holdfastv1.ClustersReadyReason, message: "2 of 2 clusters ready",
				matching: 2, ready: 2, observedGeneration: generation, lastHandled: "before"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mcs := &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: generation}}
			mcs.Spec.Paused = tt.paused
			mcs.Spec.DeletionPolicy = tt.policy
			if tt.requested != "" {
				mcs.Annotations = map[string]string{holdfastv1.ReconcileRequestedAtAnnotation: tt.requested}
			}
			// Counts left from an earlier reconcile must not add up.
			mcs.Status = holdfastv1.MultiClusterServiceStatus{ObservedGeneration: 1, LastHandledReconcileAt: "before",
				MatchingClusters: 9, ReadyClusters: 9, FailedClusters: 9, DriftedClusters: 9, DriftedObjects: 9}

			computeStatus(&scope{mcs: mcs, matching: tt.matching, statuses: tt.statuses, invalid: tt.invalid, deleting: tt.deleting})

			st := mcs.Status
			got := conditions.Get(mcs, holdfastv1.ReadyCondition)
			if got == nil {
				t.Fatalf("no Ready condition; conditions %v", st.Conditions)
			}
			if got.Status != tt.want.status || got.Reason != tt.want.reason || got.Message != tt.want.message {
				t.Errorf("Ready = %s %s %q, want %s %s %q", got.Status, got.Reason, got.Message,
					tt.want.status, tt.want.reason, tt.want.message)
			}
			if got.ObservedGeneration != generation {
				t.Errorf("Ready.observedGeneration = %d, want %d", got.ObservedGeneration, generation)
			}
			if len(st.Conditions) != 4 || conditions.Get(mcs, holdfastv1.StalledCondition) == nil || conditions.Get(mcs, holdfastv1.ReconcilingCondition) == nil ||
				conditions.Get(mcs, holdfastv1.HealthyCondition) == nil {
				t.Errorf("conditions = %v, want Ready, Stalled, Reconciling and Healthy", st.Conditions)
			}
			counts := [5]int32{st.MatchingClusters, st.ReadyClusters, st.FailedClusters, st.DriftedClusters, st.DriftedObjects}
			wantCounts := [5]int32{tt.want.matching, tt.want.ready, tt.want.failed, tt.want.driftedClusters, tt.want.driftedObjects}
			if counts != wantCounts {
				t.Errorf("matching, ready, failed, drifted clusters, drifted objects = %v, want %v", counts, wantCounts)
			}
			if st.ObservedGeneration != tt.want.observedGeneration {
				t.Errorf("observedGeneration = %d, want %d", st.ObservedGeneration, tt.want.observedGeneration)
			}
			if st.LastHandledReconcileAt != tt.want.lastHandled {
				t.Errorf("lastHandledReconcileAt = %q, want %q", st.LastHandledReconcileAt, tt.want.lastHandled)
			}
		})
	}
}

func TestFailed(t *testing.T) {
	for _, tt := range []struct {
		reason string
		want   bool
	}{
		{holdfastv1.ProgressingReason, false},
		{holdfastv1.ProbingReason, false},
		{holdfastv1.ClusterNotReadyReason, false},
		{holdfastv1.ClusterPausedReason, false},
		{holdfastv1.PausedReason, false},
		{holdfastv1.DryRunReason, false},
		{holdfastv1.DeletingReason, false},
		{holdfastv1.ApplyFailedReason, true},
		{holdfastv1.RenderFailedReason, true},
		{holdfastv1.TemplateNotFoundReason, true},
		{holdfastv1.ConflictReason, true},
		{holdfastv1.ClusterNotFoundReason, true},
		{"", true},
	} {
		if got := holdfastv1.NeedsAttention(tt.reason); got != tt.want {
			t.Errorf("NeedsAttention(%q) = %t, want %t", tt.reason, got, tt.want)
		}
	}
}

func TestMatches(t *testing.T) {
	env := func(value string, namespaces ...string) holdfastv1.ClusterSelector {
		return holdfastv1.ClusterSelector{
			LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": value}},
			Namespaces:    namespaces,
		}
	}
	prod := holdfastv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "a", Labels: map[string]string{"env": "prod"}}}
	for _, tt := range []struct {
		name string
		sel  holdfastv1.ClusterSelector
		want bool
	}{
		{"labels match, any namespace", env("prod"), true},
		{"labels do not match", env("dev"), false},
		{"labels match in a listed namespace", env("prod", "other", "fleet"), true},
		{"labels match outside the listed namespaces", env("prod", "other"), false},
		{"an empty selector selects every Cluster", holdfastv1.ClusterSelector{}, true},
		{"an empty label selector, another namespace", holdfastv1.ClusterSelector{Namespaces: []string{"other"}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			selector, err := metav1.LabelSelectorAsSelector(&tt.sel.LabelSelector)
			if err != nil {
				t.Fatal(err)
			}
			mcs := &holdfastv1.MultiClusterService{Spec: holdfastv1.MultiClusterServiceSpec{ClusterSelector: tt.sel}}
			if got := (tenancy.Policy{PlatformNamespaces: []string{tenancy.AllNamespaces}}).Selects(mcs, selector, &prod); got != tt.want {
				t.Errorf("Selects = %t, want %t", got, tt.want)
			}
		})
	}
}

// TestHealthyRollsUpTheClusters: the service set is Healthy when every matching cluster's status
// object is; one Healthy False makes it False naming the clusters and why the first is not
// healthy; otherwise it waits (Unknown) naming those progressing.
func TestHealthyRollsUpTheClusters(t *testing.T) {
	withHealth := func(cluster string, status metav1.ConditionStatus, reason, msg string) holdfastv1.ClusterServiceStatus {
		css := readyStatus(cluster)
		css.Status.Conditions = append(css.Status.Conditions, metav1.Condition{Type: holdfastv1.HealthyCondition, Status: status, Reason: reason, Message: msg})
		return css
	}
	healthy := func(c string) holdfastv1.ClusterServiceStatus {
		return withHealth(c, metav1.ConditionTrue, holdfastv1.HealthyReason, "3 objects healthy")
	}
	cases := []struct {
		name     string
		statuses []holdfastv1.ClusterServiceStatus
		status   metav1.ConditionStatus
		reason   string
		message  string
		healthy  int32
	}{
		{"all healthy", []holdfastv1.ClusterServiceStatus{healthy("a"), healthy("b")},
			metav1.ConditionTrue, holdfastv1.HealthyReason, "2 of 2 clusters healthy", 2},
		{"one progressing, one not reconciled yet", []holdfastv1.ClusterServiceStatus{healthy("a"),
			withHealth("b", metav1.ConditionUnknown, holdfastv1.ProgressingReason, "Deployment x/web is InProgress: 0 of 1 updated")},
			metav1.ConditionUnknown, holdfastv1.ProgressingReason, "1 of 2 clusters healthy; waiting for b", 1},
		{"failures named, the first's reason given", []holdfastv1.ClusterServiceStatus{
			withHealth("c", metav1.ConditionFalse, holdfastv1.HealthTimeoutReason, "Deployment x/slow: not healthy"),
			healthy("a"),
			withHealth("b", metav1.ConditionFalse, holdfastv1.UnhealthyReason, "Deployment x/web: Progress deadline exceeded")},
			metav1.ConditionFalse, holdfastv1.UnhealthyReason,
			"1 of 3 clusters healthy; not healthy: b (Unhealthy), c (HealthTimeout); b: Deployment x/web: Progress deadline exceeded", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var names []string
			for _, css := range tc.statuses {
				names = append(names, css.Spec.Cluster)
			}
			s := &scope{mcs: &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: generation}},
				matching: clusters(names...), statuses: tc.statuses}
			computeStatus(s)
			c := conditions.Get(s.mcs, holdfastv1.HealthyCondition)
			if c == nil || c.Status != tc.status || c.Reason != tc.reason || c.Message != tc.message {
				t.Fatalf("Healthy = %+v, want %s %s %q", c, tc.status, tc.reason, tc.message)
			}
			if s.mcs.Status.HealthyClusters != tc.healthy {
				t.Errorf("healthyClusters = %d, want %d", s.mcs.Status.HealthyClusters, tc.healthy)
			}
		})
	}
}

// TestRolloutReady: while its rollout is not complete, a service set's Ready says where it is,
// whatever its clusters' readiness: RollingOut with the wave, RolloutHalted naming the failed
// clusters that count and how to go on, RolloutAborted; a revision that cannot be made is
// RevisionFailed; complete, the clusters decide.
func TestRolloutReady(t *testing.T) {
	waves := []holdfastv1.RolloutWaveStatus{{Name: "canary", Clusters: 1, Updated: 1, Healthy: 1}, {Name: "rest", Clusters: 2, Updated: 1, Failed: 1}}
	for _, tt := range []struct {
		name        string
		rollout     holdfastv1.RolloutStatus
		revisionErr error
		status      metav1.ConditionStatus
		reason      string
		says        []string
	}{
		{name: "rolling out", rollout: holdfastv1.RolloutStatus{Revision: "web-2", Phase: holdfastv1.RolloutProgressing, Wave: 1, Waves: waves},
			status: metav1.ConditionUnknown, reason: holdfastv1.RollingOutReason, says: []string{"wave 2 of 2 (rest): 1 of 2 clusters updated"}},
		{name: "halted", rollout: holdfastv1.RolloutStatus{Revision: "web-2", StableRevision: "web-1", Phase: holdfastv1.RolloutHalted, Wave: 1, Waves: waves, Failures: 1,
			FailedClusters: []holdfastv1.RolloutFailure{{Cluster: "fleet/c2", Reason: "Unhealthy", Message: "crash"}, {Cluster: "fleet/c9", Reason: "ApplyFailed", Resumed: true}}},
			status: metav1.ConditionFalse, reason: holdfastv1.RolloutHaltedReason, says: []string{"fleet/c2 (Unhealthy: crash)", "holdfast rollout resume web", "back to web-1"}},
		{name: "aborted", rollout: holdfastv1.RolloutStatus{Revision: "web-2", StableRevision: "web-1", Phase: holdfastv1.RolloutAborted, Waves: waves},
			status: metav1.ConditionFalse, reason: holdfastv1.RolloutAbortedReason, says: []string{"back on revision web-1"}},
		{name: "no revision", revisionErr: errors.New(`service "a": ServiceTemplate t/a not found`),
			status: metav1.ConditionFalse, reason: holdfastv1.RevisionFailedReason, says: []string{"t/a not found"}},
		{name: "complete", rollout: holdfastv1.RolloutStatus{Revision: "web-2", Phase: holdfastv1.RolloutComplete, Waves: waves},
			status: metav1.ConditionTrue, reason: holdfastv1.ClustersReadyReason},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mcs := &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: generation},
				Spec: holdfastv1.MultiClusterServiceSpec{Rollout: &holdfastv1.RolloutStrategy{}}}
			s := &scope{mcs: mcs, matching: clusters("c1"), statuses: []holdfastv1.ClusterServiceStatus{readyStatus("c1")}, revisionErr: tt.revisionErr}
			if tt.revisionErr == nil {
				s.plan = &rollout.Plan{Status: tt.rollout}
			}
			computeStatus(s)
			got := conditions.Get(mcs, holdfastv1.ReadyCondition)
			if got.Status != tt.status || got.Reason != tt.reason {
				t.Fatalf("Ready %s %s: %s; want %s %s", got.Status, got.Reason, got.Message, tt.status, tt.reason)
			}
			for _, w := range tt.says {
				if !strings.Contains(got.Message, w) {
					t.Errorf("Ready message %q lacks %q", got.Message, w)
				}
			}
			if strings.Contains(got.Message, "fleet/c9") {
				t.Errorf("a failure resumed before is named: %q", got.Message)
			}
		})
	}
}

// TestComputeStatusNameTaken: a matching Cluster whose status object's name another service
// set's status object has is not served, and Ready says so, naming that service set, its
// Cluster and what to rename, whatever the other clusters are.
func TestComputeStatusNameTaken(t *testing.T) {
	mcs := &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: "a", Generation: generation}}
	s := &scope{mcs: mcs, matching: clusters("c1", "b.c"), statuses: []holdfastv1.ClusterServiceStatus{readyStatus("c1")},
		taken: []nameTaken{{cluster: types.NamespacedName{Namespace: "fleet", Name: "b.c"},
			status: types.NamespacedName{Namespace: "fleet", Name: "a.b.c"}, otherSet: "a.b", otherOnto: "c"}}}
	computeStatus(s)
	got := conditions.Get(mcs, holdfastv1.ReadyCondition)
	want := "not served: Cluster fleet/b.c: ClusterServiceStatus fleet/a.b.c is MultiClusterService a.b's for Cluster fleet/c " +
		"(status objects are named <service set>.<cluster>, and a dot in either name can make two pairs meet); rename this service set or the Cluster"
	if got.Status != metav1.ConditionFalse || got.Reason != holdfastv1.StatusNameTakenReason || got.Message != want {
		t.Fatalf("Ready = %s %s %q, want False %s %q", got.Status, got.Reason, got.Message, holdfastv1.StatusNameTakenReason, want)
	}
	if !holdfastv1.NeedsAttention(got.Reason) {
		t.Errorf("%s does not need attention", got.Reason)
	}
	if mcs.Status.MatchingClusters != 2 || mcs.Status.ReadyClusters != 1 {
		t.Errorf("matching %d, ready %d, want 2 and 1", mcs.Status.MatchingClusters, mcs.Status.ReadyClusters)
	}
}
