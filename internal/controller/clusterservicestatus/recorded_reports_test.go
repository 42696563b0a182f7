package clusterservicestatus

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/notify"
)

// TestRecordedEvents: the hub reports each record of a Pull cluster's agent newer than the last it
// reported: a drift detected since as DriftDetected (or DriftCorrected when already put back), a
// drift reported before and corrected since as DriftCorrected only, nothing older.
func TestRecordedEvents(t *testing.T) {
	since := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) metav1.MicroTime { return metav1.NewMicroTime(since.Add(d)) }
	ptr := func(m metav1.MicroTime) *metav1.MicroTime { return &m }
	record := func(name string, detected metav1.MicroTime, corrected *metav1.MicroTime) holdfastv1.DriftRecord {
		return holdfastv1.DriftRecord{ResourceRef: holdfastv1.ResourceRef{Kind: "ConfigMap", Name: name},
			DriftDetail: holdfastv1.DriftDetail{User: "alice", DetectedTime: detected}, CorrectedTime: corrected}
	}
	css := &holdfastv1.ClusterServiceStatus{}
	css.Namespace, css.Spec.Cluster, css.Spec.MultiClusterService = "holdfast-pull-edge", "edge", "web"
	css.Status.Drifts = []holdfastv1.DriftRecord{
		record("new-corrected", at(3*time.Second), ptr(at(3*time.Second+5*time.Millisecond))),
		record("new-waiting", at(2*time.Second), nil),
		record("old-corrected-now", at(-time.Minute), ptr(at(time.Second))),
		record("old", at(-2*time.Minute), ptr(at(-2*time.Minute+time.Millisecond))),
		record("at-since", at(0), nil),
	}
	events, through := recordedEvents(css, since)
	type got struct {
		name  string
		typ   notify.EventType
		fresh bool
	}
	var all []got
	for _, e := range events {
		all = append(all, got{e.Object.Name, e.Type, e.fresh})
		if e.Cluster.Name != "edge" || e.MultiClusterService != "web" || e.Drift.User != "alice" {
			t.Errorf("event %+v lacks the cluster, service set or author", e.Event)
		}
	}
	want := []got{
		{"new-corrected", notify.DriftCorrected, true},
		{"new-waiting", notify.DriftDetected, true},
		{"old-corrected-now", notify.DriftCorrected, false},
	}
	if len(all) != len(want) {
		t.Fatalf("events %+v, want %+v", all, want)
	}
	for i := range want {
		if all[i] != want[i] {
			t.Errorf("event %d: %+v, want %+v", i, all[i], want[i])
		}
	}
	if wantThrough := since.Add(3*time.Second + 5*time.Millisecond); !through.Equal(wantThrough) {
		t.Errorf("through %s, want %s", through, wantThrough)
	}
	if again, _ := recordedEvents(css, through); len(again) != 0 {
		t.Errorf("reported again: %+v", again)
	}
}

// TestMayReport: the hub reads a Pull cluster's whole status object to report from it only when
// its cached copy changed in a way that may bring a record or a state to report.
func TestMayReport(t *testing.T) {
	base := func() *holdfastv1.ClusterServiceStatus {
		css := &holdfastv1.ClusterServiceStatus{}
		css.ResourceVersion, css.Annotations = "1", map[string]string{WorkAnnotation: "a"}
		css.Status.DriftCount, css.Status.DriftedCount, css.Status.InSyncCount = 3, 0, 10
		css.Status.Conditions = []metav1.Condition{
			{Type: holdfastv1.ReadyCondition, Status: metav1.ConditionTrue, Reason: "Ready"},
			{Type: holdfastv1.DriftedCondition, Status: metav1.ConditionFalse, Reason: holdfastv1.InSyncReason},
		}
		return css
	}
	for _, tc := range []struct {
		name   string
		change func(*holdfastv1.ClusterServiceStatus)
		want   bool
	}{
		{"a template change applied", func(c *holdfastv1.ClusterServiceStatus) {
			c.Status.Conditions[0].Reason, c.Status.Revision, c.Status.InSyncCount = "Progressing", "r2", 4
		}, false},
		{"the hub's own annotations", func(c *holdfastv1.ClusterServiceStatus) { c.Annotations[NotifiedAnnotation] = "now" }, false},
		{"a drift seen", func(c *holdfastv1.ClusterServiceStatus) { c.Status.DriftCount++ }, true},
		{"an object drifted", func(c *holdfastv1.ClusterServiceStatus) { c.Status.DriftedCount, c.Status.InSyncCount = 1, 9 }, true},
		{"an object failed", func(c *holdfastv1.ClusterServiceStatus) { c.Status.FailedCount = 1 }, true},
		{"the Drifted condition", func(c *holdfastv1.ClusterServiceStatus) {
			c.Status.Conditions[1].Status, c.Status.Conditions[1].Reason = metav1.ConditionTrue, holdfastv1.CorrectionFailedReason
		}, true},
		{"an object Contested", func(c *holdfastv1.ClusterServiceStatus) {
			c.Status.Conditions = append(c.Status.Conditions, metav1.Condition{Type: holdfastv1.ContestedCondition, Status: metav1.ConditionTrue, Reason: "Contested"})
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, after := base(), base()
			after.ResourceVersion = "2"
			tc.change(after)
			if got := mayReport(before, after); got != tc.want {
				t.Errorf("mayReport = %t, want %t", got, tc.want)
			}
		})
	}
}
