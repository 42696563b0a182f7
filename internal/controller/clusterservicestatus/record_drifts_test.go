package clusterservicestatus

import (
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/drift"
)

// A drift a comparison finds is detected when the comparison was made, not when the reconcile
// began: a reconcile can read an object someone changed after it began, and a detection time
// before the change would be a lie (and would make the watch's report of the same change look
// like another drift).
func TestComparisonDriftDetectedWhenCompared(t *testing.T) {
	began := time.Date(2026, 11, 26, 16, 0, 0, 0, time.UTC)
	compared := began.Add(300 * time.Millisecond)
	s := &scope{now: began}
	ref := apply.Ref{Kind: "ConfigMap", Namespace: "shop", Name: "settings"}
	d, isNew := s.driftDetail(ref, drift.Verdict{Drifted: true}, compared)
	if !isNew || !d.DetectedTime.Time.Equal(compared) || d.Detection != holdfastv1.DriftDetectedByComparison {
		t.Fatalf("detail %+v (new %v), want detected at %s by comparison", d, isNew, compared)
	}

	watched := holdfastv1.DriftRecord{ResourceRef: fromRef(ref), DriftDetail: holdfastv1.DriftDetail{Type: holdfastv1.DriftChanged, Detection: holdfastv1.DriftDetectedByWatch}}
	s.drifts = []holdfastv1.DriftRecord{watched}
	if d, isNew := s.driftDetail(ref, drift.Verdict{Drifted: true}, compared); isNew || d.Detection != holdfastv1.DriftDetectedByWatch {
		t.Fatalf("a drift a watch reported is the watch's: %+v (new %v)", d, isNew)
	}
}

// Records of drifts put back while the status could not be written (the hub away) are kept, at
// most a history's worth per status object with the oldest dropped and counted, written once by
// the next status patch after those it holds, and forgotten once written.
func TestUnrecordedDriftsAreWrittenOnce(t *testing.T) {
	key := types.NamespacedName{Namespace: "edge", Name: "web.edge"}
	at := time.Date(2026, 11, 28, 15, 0, 0, 0, time.UTC)
	record := func(i int) holdfastv1.DriftRecord {
		return holdfastv1.DriftRecord{ResourceRef: holdfastv1.ResourceRef{Kind: "ConfigMap", Namespace: "apps", Name: "hello"},
			DriftDetail: holdfastv1.DriftDetail{Type: holdfastv1.DriftChanged, ResourceVersion: strconv.Itoa(i),
				DetectedTime: metav1.NewMicroTime(at.Add(time.Duration(i) * time.Second))}}
	}
	m := newMemory()
	dropped := droppedRecords(t)
	for i := range holdfastv1.MaxDriftRecords + 5 {
		m.keepUnrecorded(key, "edge", []holdfastv1.DriftRecord{record(i)})
	}
	kept := m.unrecordedDrifts(key)
	if len(kept) != holdfastv1.MaxDriftRecords || kept[0].ResourceVersion != strconv.Itoa(holdfastv1.MaxDriftRecords+4) {
		t.Fatalf("kept %d records, newest %s; want %d, the newest first", len(kept), kept[0].ResourceVersion, holdfastv1.MaxDriftRecords)
	}
	if got := droppedRecords(t) - dropped; got != 5 {
		t.Fatalf("dropped %v records, want 5 counted", got)
	}

	stored := []holdfastv1.DriftRecord{kept[0], record(-1)}
	merged, added := withUnrecorded(stored, kept[:3])
	if added != 2 || len(merged) != 4 || merged[0].ResourceVersion != kept[1].ResourceVersion || merged[2].ResourceVersion != kept[0].ResourceVersion {
		t.Fatalf("merged %d (added %d): %+v; want the two not stored yet before the stored ones", len(merged), added, merged)
	}

	m.forgetUnrecorded(key, "edge", kept[:3])
	if left := m.unrecordedDrifts(key); len(left) != holdfastv1.MaxDriftRecords-3 {
		t.Fatalf("%d records left after three were written, want %d", len(left), holdfastv1.MaxDriftRecords-3)
	}
	m.forgetUnrecorded(key, "edge", kept)
	if left := m.unrecordedDrifts(key); len(left) != 0 {
		t.Fatalf("%d records left after all were written", len(left))
	}
}

// droppedRecords reads holdfast_drift_records_dropped_total.
func droppedRecords(t *testing.T) float64 {
	t.Helper()
	mfs, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "holdfast_drift_records_dropped_total" {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}
