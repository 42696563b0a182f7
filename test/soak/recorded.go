package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// recordWindow is how long after a drift of this program, with the controller and every API
// server up and nothing else changing the object, its record must have been detected. A watch
// sees a change within milliseconds; a comparison (after a restart) within a reconcile.
const recordWindow = 15 * time.Second

// attrKey names what the records explained by one change of this program are about: the
// object it changed, or, for a namespace deletion, each object (and drift type) it took along.
type attrKey struct {
	seq       int
	ref       objRef
	driftType holdfastv1.DriftType
}

// attribution is the drift records that checkExplained found explained by one change.
type attribution struct {
	records []seenRecord // explained by it ("pass")
	unsure  []string     // explained by it, but inconclusively: why
	judged  string       // the recorded-once verdict, once given
}

// tally holds the attributions and how far the recorded-once check got through s.events.
type tally struct {
	byFault map[attrKey]*attribution
	judged  int // s.events before this index are judged
}

func newTally() *tally { return &tally{byFault: map[attrKey]*attribution{}} }

func keyOf(f faultEvent, rec seenRecord) attrKey {
	if f.whole {
		return attrKey{f.seq, objRef{rec.rec.Kind, rec.rec.Name}, rec.rec.Type}
	}
	return attrKey{seq: f.seq, ref: f.ref}
}

// attribute notes a record explained by change f (checkExplained's verdict), checks its author
// and, when the change was judged already (a record detected late), whether it is now recorded
// twice.
func (s *soak) attribute(rec seenRecord, f faultEvent, verdict, detail string) {
	k := keyOf(f, rec)
	a := s.tally.byFault[k]
	if a == nil {
		a = &attribution{}
		s.tally.byFault[k] = a
	}
	switch verdict {
	case "pass":
		a.records = append(a.records, rec)
		s.checkAuthor(rec, f)
	case "inconclusive":
		a.unsure = append(a.unsure, fmt.Sprintf("%s: %s", rec, detail))
	}
	if !f.whole && a.judged == "pass" && len(a.records) > 1 {
		if v, why := s.twice(f, k.ref, a.records); v == "fail" {
			s.checks.passed[cOnce]--
			s.checks.fail(cOnce)
			a.judged = "fail"
			s.violation("%s", why)
		}
	}
}

// checkAuthor checks that a record explained by an edit of this program names the field manager
// it was made with. A deletion (the API server does not record who deletes) and a namespace
// deletion have no author. A comparison (after a restart or an outage) reads the object's
// managedFields, where a later write or a merge with another change may hide the editor:
// inconclusive when it names another.
func (s *soak) checkAuthor(rec seenRecord, f faultEvent) {
	if f.whole || f.deleted || f.manager == "" || rec.rec.Type != holdfastv1.DriftChanged {
		return
	}
	switch {
	case rec.rec.Manager == f.manager:
		s.checks.pass(cAuthor)
	case rec.rec.Detection == holdfastv1.DriftDetectedByComparison:
		s.checks.inconclusive(cAuthor)
		s.logFault("author check inconclusive: %s: found by comparison, manager %q, the %s was made as %s", rec, rec.rec.Manager, f.kind, f.manager)
	default:
		s.checks.fail(cAuthor)
		s.violation("drift record %s names manager %q (operation %q, subresource %q), but the %s it is about (sent %s, rv %d) was made as field manager %s",
			rec, rec.rec.Manager, rec.rec.Operation, rec.rec.Subresource, f.kind, stamp(f.at), f.rv, f.manager)
	}
}

// judgeRecordedOnce gives the recorded-once verdict of every change this program made to a
// target before cutoff and not judged yet: recorded once passes; twice fails unless it may be
// two drifts (see twice); never fails only when a record was due (see expectRecord).
func (s *soak) judgeRecordedOnce(cutoff time.Time) {
	s.eventsMu.Lock()
	var due []faultEvent
	for s.tally.judged < len(s.events) && s.events[s.tally.judged].at.Before(cutoff) {
		due = append(due, s.events[s.tally.judged])
		s.tally.judged++
	}
	s.eventsMu.Unlock()
	for _, f := range due {
		switch {
		case f.kind == fUnmatch:
			// Holdfast's withdrawal, not a drift.
		case f.whole:
			s.judgeNamespaceDeletion(f)
		default:
			k := attrKey{seq: f.seq, ref: f.ref}
			a := s.tally.byFault[k]
			if a == nil {
				a = &attribution{}
				s.tally.byFault[k] = a
			}
			verdict, why := s.judgeOne(f, a)
			a.judged = verdict
			s.count(cOnce, verdict, fmt.Sprintf("recorded-once check inconclusive: %s %s %s sent %s%s: %s",
				f.kind, f.cluster, f.ref, stamp(f.at), rvOf(f), why), why)
		}
	}
}

// judgeNamespaceDeletion: a namespace deletion takes every object along, one record each. The
// cascade takes time, and Holdfast may recreate (and record) some meanwhile, so two records of
// one object are counted inconclusive, not failed; none is not counted (the objects may have
// been gone before).
func (s *soak) judgeNamespaceDeletion(f faultEvent) {
	for k, a := range s.tally.byFault {
		if k.seq != f.seq {
			continue
		}
		a.judged = "pass"
		if len(a.records) > 1 {
			a.judged = "inconclusive"
			s.checks.inconclusive(cOnce)
			s.logFault("recorded-once check inconclusive: %s %s sent %s: %d records of %s %s: %s", f.kind, f.cluster, stamp(f.at), len(a.records), k.ref, k.driftType, describeRecords(a.records))
		} else if len(a.records) == 1 {
			s.checks.pass(cOnce)
		}
	}
}

func (s *soak) judgeOne(f faultEvent, a *attribution) (verdict, why string) {
	switch {
	case len(a.records) == 1:
		return "pass", ""
	case len(a.records) > 1:
		return s.twice(f, f.ref, a.records)
	case len(a.unsure) > 0:
		return "inconclusive", "its only records were checked inconclusively: " + strings.Join(a.unsure, "; ")
	}
	return s.expectRecord(f)
}

// twice judges two or more records explained by one change: a violation ("recorded twice")
// unless they may be about two drifts: the records are of two status objects (the cluster was
// matched again in between), the object was put back before the later one was detected (the
// later may be about that version), or, for edits, the records name disjoint fields.
func (s *soak) twice(f faultEvent, r objRef, recs []seenRecord) (verdict, why string) {
	first, second := recs[0], recs[1]
	if first.rec.DetectedTime.After(second.rec.DetectedTime.Time) {
		first, second = second, first
	}
	if first.statusUID != second.statusUID {
		return "inconclusive", "records of two status objects (matched again in between): " + describeRecords(recs)
	}
	if !f.deleted && len(first.rec.Fields) > 0 && len(second.rec.Fields) > 0 && !sharesField(first.rec, second.rec) {
		return "inconclusive", "records of different fields: " + describeRecords(recs)
	}
	threshold := f.rv
	obs := s.tl.observations(f.cluster, r)
	if f.deleted {
		o, ok := deletionOf(obs, f.at)
		if !ok {
			return "inconclusive", "this program's watch did not see the deletion; records: " + describeRecords(recs)
		}
		threshold = o.rv
	}
	later := second.rec.DetectedTime.Time
	revs := s.revisionsIn(templateOf(r), f.at.Add(-30*time.Second), later)
	for _, o := range obs {
		if o.rv > threshold && !o.at.After(later) && s.matchesRevision(r, o.obj, revs) {
			return "inconclusive", fmt.Sprintf("the object was back as declared at %s (rv %d), before the later record was detected: %s", stamp(o.at), o.rv, describeRecords(recs))
		}
	}
	restart := ""
	if n := s.ctrl.startsIn(first.rec.DetectedTime.Time, later); n > 0 {
		restart = fmt.Sprintf("; the controller was started %d time(s) between the two detections", n)
	}
	return "fail", fmt.Sprintf("drift recorded twice: the %s of %s %s sent %s%s has %d records, %s; the object was not back as declared in between (this program's watch)%s",
		f.kind, f.cluster, r, stamp(f.at), rvOf(f), len(recs), describeRecords(recs), restart)
}

// rvOf names the revision a change produced, when known (not for a deletion).
func rvOf(f faultEvent) string {
	if f.rv <= 0 {
		return ""
	}
	return fmt.Sprintf(" (rv %d)", f.rv)
}

func sharesField(a, b holdfastv1.DriftRecord) bool {
	for _, x := range a.Fields {
		for _, y := range b.Fields {
			if x.Path == y.Path {
				return true
			}
		}
	}
	return false
}

func describeRecords(recs []seenRecord) string {
	var out []string
	for _, r := range recs {
		d := r.rec.Detection
		if d == "" {
			d = holdfastv1.DriftDetectedByWatch
		}
		by := ""
		if r.rec.Manager != "" {
			by = " by " + r.rec.Manager
		}
		out = append(out, fmt.Sprintf("%s %s%s detected %s (%s)", r.rec.Type, fieldsOf(r.rec), by, stamp(r.rec.DetectedTime.Time), d))
	}
	return strings.Join(out, " and ")
}

// expectRecord judges a change no record was explained by. It fails only when a record was
// certainly due: the object was as declared right before (not a second drift on a drifted
// object, which may merge into the first's record); for recordWindow after it nothing else
// changed the object, no template revision came, the cluster stayed matched, one controller
// incarnation ran from 10 s before until the end of the window, the cluster's and the hub's API
// servers were up, this program's watch of the kind listed nothing again, and every record of
// the cluster was seen by the polls. Any record of the object detected in the window (explained
// by another change) makes it inconclusive.
func (s *soak) expectRecord(f faultEvent) (verdict, why string) {
	end := f.at.Add(recordWindow)
	wantType := holdfastv1.DriftChanged
	if f.deleted {
		wantType = holdfastv1.DriftDeleted
	}
	for _, rec := range s.records.about(f.cluster, f.ref) {
		d := rec.rec.DetectedTime.Time
		if rec.rec.Type == wantType && !d.Before(f.at.Add(-2*time.Second)) && !d.After(end) {
			return "inconclusive", fmt.Sprintf("no record explained by it, but one of the object detected at %s (%s), explained by another change or checked inconclusively", stamp(d), rec.rec.Detection)
		}
	}
	if reason := s.recordMayBeMissing(f, end); reason != "" {
		return "inconclusive", "no record; " + reason
	}
	obs := s.tl.observations(f.cluster, f.ref)
	what := "this program's watch saw it stay drifted until the end of the window"
	threshold := f.rv
	if f.deleted {
		if o, ok := deletionOf(obs, f.at); ok {
			threshold = o.rv
		}
	}
	revs := s.revisionsIn(templateOf(f.ref), f.at.Add(-30*time.Second), end)
	for _, o := range obs {
		if o.rv > threshold && s.matchesRevision(f.ref, o.obj, revs) {
			what = fmt.Sprintf("this program's watch saw it back as declared at %s (rv %d), %s after it was sent", stamp(o.at), o.rv, o.at.Sub(f.at).Round(time.Millisecond))
			break
		}
	}
	return "fail", fmt.Sprintf("drift not recorded: the %s of %s %s sent %s%s has no drift record (none of the object detected from 2s before it until %s after), though the controller ran and every API server was up throughout and nothing else changed the object; %s",
		f.kind, f.cluster, f.ref, stamp(f.at), rvOf(f), recordWindow, what)
}

// recordMayBeMissing says why a change may legitimately have no record of its own ("" when a
// record was certainly due): see expectRecord.
func (s *soak) recordMayBeMissing(f faultEvent, end time.Time) string {
	r := f.ref
	if why := s.changedAround(f, end); why != "" {
		return why
	}
	for _, c := range s.revHistory {
		if c.template == templateOf(r) && c.at.After(f.at.Add(-5*time.Second)) && !c.at.After(end) {
			return fmt.Sprintf("template %s got revision %d at %s (a deploy may put the object back)", c.template, c.rev, stamp(c.at))
		}
	}
	if !s.ctrl.ranThrough(f.at.Add(-10*time.Second), end) {
		return "the controller did not run throughout (killed or started around it)"
	}
	if s.tl.gapOverlaps(f.cluster, r.Kind, f.at.Add(-30*time.Second), end) {
		return "this program's watch listed again around it"
	}
	if s.records.missedSome(f.cluster) {
		return "some records of the cluster left status.drifts before a poll saw them"
	}
	obs := s.tl.observations(f.cluster, r)
	threshold := f.rv
	if f.deleted {
		o, ok := deletionOf(obs, f.at)
		if !ok {
			return "this program's watch did not see the deletion"
		}
		threshold = o.rv
	} else if f.rv <= 0 {
		return "its revision is unknown"
	}
	i := slices.IndexFunc(obs, func(o observation) bool { return o.rv >= threshold })
	if i <= 0 || obs[i].rv != threshold || obs[i].at.Before(f.at) {
		// An edit that changed nothing keeps the revision of a version seen before it was sent.
		return "this program's watch saw no version of the object before it, or the change was a no-op"
	}
	before := obs[i-1]
	if !before.exists || deletionTimestamp(before.obj) != "" || !s.matchesRevision(r, before.obj, s.revisionsIn(templateOf(r), f.at.Add(-30*time.Second), f.at)) {
		return "the object was not as declared right before (a drift on a drifted object may merge into its record)"
	}
	return ""
}

// changedAround says what else this program did to the object, the cluster or the API servers
// around a change (until end), that may merge or hide its record; "" when nothing.
func (s *soak) changedAround(f faultEvent, end time.Time) string {
	s.eventsMu.Lock()
	defer s.eventsMu.Unlock()
	for _, e := range s.events {
		if e.cluster != f.cluster || e.seq == f.seq || e.at.After(end) {
			continue
		}
		if e.kind == fUnmatch && e.at.After(f.at.Add(-2*time.Minute)) {
			return fmt.Sprintf("the cluster was unmatched at %s", stamp(e.at))
		}
		if e.at.After(f.at) && (e.whole || e.ref == f.ref) {
			return fmt.Sprintf("the %s at %s changed the object again before the window ended (the two may merge)", e.kind, stamp(e.at))
		}
	}
	for _, o := range s.outages {
		if (o.cluster == f.cluster || o.cluster == "") && !o.from.After(end) && (o.to.IsZero() || o.to.After(f.at.Add(-5*time.Second))) {
			if o.cluster == "" {
				return fmt.Sprintf("the hub's API server was stopped at %s", stamp(o.from))
			}
			return fmt.Sprintf("its API server was stopped at %s", stamp(o.from))
		}
	}
	return ""
}
