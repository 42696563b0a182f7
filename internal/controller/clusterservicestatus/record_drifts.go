package clusterservicestatus

import (
	"time"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/drift"
)

// Drifts become records of status.drifts: a verdict's record during the apply (driftDetail), and
// at the status patch (computeStatus) the drifts watches reported that are new (newDrifts) added
// to the bounded history (recordDrifts). The rules are package drift's (DetailFor, NewReported,
// Record); these functions gather their inputs from the scope.

// recordDrifts adds the drifts seen since the last reconcile (by watches, and by comparison in
// this one) to the bounded history, marking those of objects this reconcile put back, by a
// correction or a deploy, or found restored (drift.Record).
func recordDrifts(s *scope) {
	seen := append(append([]holdfastv1.DriftRecord{}, newDrifts(s)...), s.decisions.found...)
	back := drift.PutBack{Corrected: map[drift.Ref]bool{}, Restored: make(map[drift.Ref]holdfastv1.ChangeAuthor, len(s.decisions.restored))}
	for ref, od := range s.decisions.objects {
		if od.corrected {
			back.Corrected[driftRef(ref)] = true
		}
	}
	for ref, by := range s.decisions.restored {
		back.Restored[driftRef(ref)] = by
	}
	st := &s.css.Status
	if s.deployed {
		back.Deployed = st.Resources
	}
	h, ok := drift.Record(st.Drifts, seen, back, s.end)
	if !ok {
		return
	}
	s.freshDrifts = h.Fresh
	s.correctedDrifts = h.Corrected
	st.DriftCount += int64(len(seen))
	st.Drifts = h.Drifts
}

// newDrifts returns the drifts watches saw that are new (drift.NewReported), judged against the
// records as they are now and, when a deploy or correction read them, the status entries from
// before this reconcile.
func newDrifts(s *scope) []holdfastv1.DriftRecord {
	fresh, superseded := drift.NewReported(s.drifts, s.css.Status.Drifts, s.previous)
	ignoredSuperseded(superseded)
	return fresh
}

// driftDetail returns what is known about the drift of ref, on which a comparison at compared
// gave verdict v (drift.DetailFor): from the drifts watches reported, its status entry before
// this reconcile, the records, else new (isNew).
func (s *scope) driftDetail(ref apply.Ref, v drift.Verdict, compared time.Time) (detail *holdfastv1.DriftDetail, isNew bool) {
	var records []holdfastv1.DriftRecord
	if s.css != nil {
		records = s.css.Status.Drifts
	}
	return drift.DetailFor(driftRef(ref), v, compared, s.drifts, s.previous[driftRef(ref)].LastDrift, records)
}

// driftRef is the drift.Ref of ref.
func driftRef(ref apply.Ref) drift.Ref {
	return drift.Ref{Group: ref.Group, Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name}
}
