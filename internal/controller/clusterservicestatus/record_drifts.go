package clusterservicestatus

import (
	"slices"
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
// correction or a deploy, or found restored (drift.Record), after the records earlier status
// patches could not write (s.unrecorded).
func recordDrifts(s *scope) {
	st := &s.css.Status
	records, added := withUnrecorded(st.Drifts, s.unrecorded)
	st.DriftCount += int64(added)
	st.Drifts = records
	h, seen, ok := driftHistory(s, st.Drifts)
	if !ok {
		return
	}
	s.freshDrifts = h.Fresh
	s.correctedDrifts = h.Corrected
	st.DriftCount += int64(seen)
	st.Drifts = h.Drifts
	for _, i := range h.Corrected {
		d := &st.Drifts[i]
		if prev, ok := s.previous.Of(d.ResourceRef); ok && prev.State == holdfastv1.ResourceContested && s.requested != "" {
			d.OnRequest = true
		}
	}
}

// driftHistory is the history records makes with the drifts seen since the last reconcile
// (drift.Record), and how many were seen; false when there is nothing to add or mark.
func driftHistory(s *scope, records []holdfastv1.DriftRecord) (drift.History, int, bool) {
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
	if s.deployed {
		back.Deployed = s.css.Status.Resources
	}
	h, ok := drift.Record(records, seen, back, s.end)
	return h, len(seen), ok
}

// withUnrecorded returns records (newest first) after the unrecorded records they do not hold
// yet, at most MaxDriftRecords, and how many it added.
func withUnrecorded(records, unrecorded []holdfastv1.DriftRecord) ([]holdfastv1.DriftRecord, int) {
	var out []holdfastv1.DriftRecord
	for _, d := range unrecorded {
		if !slices.ContainsFunc(records, func(r holdfastv1.DriftRecord) bool { return sameRecord(r, d) }) {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		return records, 0
	}
	added := len(out)
	out = append(out, records...)
	return out[:min(len(out), holdfastv1.MaxDriftRecords)], added
}

// sameRecord reports whether a and b record the same change: of the same object, seen in the same
// version at the same time.
func sameRecord(a, b holdfastv1.DriftRecord) bool {
	return a.ResourceRef == b.ResourceRef && a.ResourceVersion == b.ResourceVersion && a.DetectedTime.Equal(&b.DetectedTime)
}

// putBackRecords returns the records this reconcile made of the drifts it put back (corrected,
// or found restored), for a status patch that did not write them: memory keeps them until one
// does (memory.keepUnrecorded), as the next reconcile finds those objects in sync and would
// record nothing. They are the status computed's fresh records, or, when the patch failed before
// computing it (the status object could not be read), those made apart.
func putBackRecords(s *scope) []holdfastv1.DriftRecord {
	fresh := s.css.Status.Drifts[:s.freshDrifts]
	if !s.statusComputed {
		h, _, ok := driftHistory(s, nil)
		if !ok {
			return nil
		}
		fresh = h.Drifts[:h.Fresh]
	}
	var out []holdfastv1.DriftRecord
	for _, d := range fresh {
		if d.CorrectedTime != nil {
			out = append(out, d)
		}
	}
	return out
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
