package drift

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// DetailOf is the drift record of a verdict, as status keeps it: the type, who made the change
// (not known for a deletion), at most MaxDriftFields fields, when and how it was detected.
func DetailOf(v Verdict, detected time.Time, by holdfastv1.DriftDetection) holdfastv1.DriftDetail {
	d := holdfastv1.DriftDetail{Type: holdfastv1.DriftChanged, DetectedTime: metav1.NewMicroTime(detected), Detection: by,
		ResourceVersion: v.ResourceVersion}
	if v.Deleted {
		d.Type = holdfastv1.DriftDeleted
		return d
	}
	d.Manager, d.Operation, d.Subresource, d.User = v.Author.Manager, v.Author.Operation, v.Author.Subresource, v.Author.User
	for i, f := range v.Fields {
		if i == holdfastv1.MaxDriftFields {
			break
		}
		d.Fields = append(d.Fields, holdfastv1.FieldChange{Path: f.Path, Old: f.Old, New: f.New})
	}
	return d
}

// DetailFor returns what is known about the drift of the object ref, on which a comparison gave
// verdict v: the newest drift a watch reported in this reconcile (reported, oldest first), else
// the one its status entry holds (last: the object stayed drifted), else the one of the records
// (the status object's drift history, newest first) about the verdict's version of it, else a
// new one from the verdict (isNew: it goes into the history if it counts), detected at compared,
// when the comparison was made: a reconcile can read an object changed after it began, so its
// start could precede the change.
//
// A drift a record holds is not new, even when the object's status entry no longer says so: an
// apply that failed (the cluster unreachable) leaves the entry Failed, without its drift, and
// the object found still drifted afterwards is the same change (test/soak saw it recorded twice,
// by a watch and by the comparison after the cluster came back).
func DetailFor(ref Ref, v Verdict, compared time.Time, reported []holdfastv1.DriftRecord, last *holdfastv1.DriftDetail,
	records []holdfastv1.DriftRecord) (detail *holdfastv1.DriftDetail, isNew bool) {
	for i := len(reported) - 1; i >= 0; i-- {
		if RefOf(reported[i].ResourceRef) == ref {
			d := reported[i].DriftDetail
			return &d, false
		}
	}
	if last != nil {
		return last, false
	}
	if rec := recordOfVersion(records, ref, v.ResourceVersion); rec != nil {
		d := rec.DriftDetail
		return &d, false
	}
	d := DetailOf(v, compared, holdfastv1.DriftDetectedByComparison)
	return &d, true
}

// recordOfVersion returns the newest of records (newest first) about version resourceVersion of
// ref, nil if none or the version is unknown.
func recordOfVersion(records []holdfastv1.DriftRecord, ref Ref, resourceVersion string) *holdfastv1.DriftRecord {
	if resourceVersion == "" {
		return nil
	}
	for i := range records {
		if rec := &records[i]; rec.ResourceVersion == resourceVersion && RefOf(rec.ResourceRef) == ref {
			return rec
		}
	}
	return nil
}

// PutBack is what a reconcile did to drifted objects, which Record marks in their records.
type PutBack struct {
	// Corrected are the objects a drift correction put back.
	Corrected map[Ref]bool
	// Deployed are the status entries a deploy left, nil without one: an object it left InSync
	// (a new revision, a requested full reconcile) is corrected as much as one a drift
	// correction put back.
	Deployed []holdfastv1.ResourceStatus
	// Restored are the objects someone else put back as declared while their drift waited,
	// with who did.
	Restored map[Ref]holdfastv1.ChangeAuthor
}

// History is the drift history Record made.
type History struct {
	// Drifts are the records, newest first, at most MaxDriftRecords.
	Drifts []holdfastv1.DriftRecord
	// Fresh is how many of Drifts (the first ones) are new, and Corrected the indices of those
	// of Drifts marked corrected now.
	Fresh     int
	Corrected []int
}

// Record adds the drifts seen since the last reconcile (seen, oldest first: by watches, and by
// comparison in this one) to the bounded history (records, newest first), newest first, each
// marked corrected at now when its object was put back; older records of objects put back now
// are marked too, and the drift of an object someone else put back is marked restored by them.
// It reports false, and makes no history, when there is nothing to add or mark.
func Record(records, seen []holdfastv1.DriftRecord, back PutBack, now time.Time) (History, bool) {
	putBack := map[Ref]bool{}
	for ref, ok := range back.Corrected {
		if ok {
			putBack[ref] = true
		}
	}
	for _, rs := range back.Deployed {
		if rs.State == holdfastv1.ResourceInSync {
			putBack[RefOf(rs.ResourceRef)] = true
		}
	}
	if len(seen) == 0 && len(putBack) == 0 && len(back.Restored) == 0 {
		return History{}, false
	}
	at := metav1.NewMicroTime(now)
	h := History{Drifts: make([]holdfastv1.DriftRecord, 0, len(seen)+len(records))}
	add := func(d holdfastv1.DriftRecord, correctNow bool) {
		if len(h.Drifts) >= holdfastv1.MaxDriftRecords {
			h.Drifts = append(h.Drifts, d)
			return
		}
		if by, ok := back.Restored[RefOf(d.ResourceRef)]; ok && d.CorrectedTime == nil {
			d.CorrectedTime, d.Resolution, d.RestoredBy = &at, holdfastv1.DriftRestored, &by
		} else if correctNow {
			d.CorrectedTime, d.Resolution = &at, holdfastv1.DriftCorrected
			h.Corrected = append(h.Corrected, len(h.Drifts))
		}
		h.Drifts = append(h.Drifts, d)
	}
	for i := len(seen) - 1; i >= 0; i-- {
		add(seen[i], putBack[RefOf(seen[i].ResourceRef)])
	}
	for _, d := range records {
		add(d, d.CorrectedTime == nil && putBack[RefOf(d.ResourceRef)])
	}
	if len(h.Drifts) > holdfastv1.MaxDriftRecords {
		h.Drifts = h.Drifts[:holdfastv1.MaxDriftRecords]
	}
	h.Fresh = min(len(seen), len(h.Drifts))
	return h, true
}

// Unresolved reports whether an object in state s differs from its declaration and waits for
// something (a manual request, a correction window, the cause of a refused correction to go):
// Drifted, Missing, Contested and Uncorrectable objects. Status counts them as drifted.
func Unresolved(s holdfastv1.ResourceState) bool {
	switch s {
	case holdfastv1.ResourceDrifted, holdfastv1.ResourceMissing, holdfastv1.ResourceContested, holdfastv1.ResourceUncorrectable:
		return true
	}
	return false
}

// Retry bounds the wait before a refused correction is tried again.
const (
	minRetry = 5 * time.Second
	maxRetry = 5 * time.Minute
)

// RetryAfter is how long to wait before trying again to correct a drift detected at detected
// whose correction was refused: as long as it has been open (so the waits double), at least
// 5s and at most 5m. It needs no count of attempts, so it survives a restart.
func RetryAfter(detected, now time.Time) time.Duration {
	return min(max(now.Sub(detected), minRetry), maxRetry)
}
