package clusterservicestatus

import (
	"testing"
	"time"

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
