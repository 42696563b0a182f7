package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/measure"
)

// Goals from issue 4.
const (
	detectionGoal  = 250 * time.Millisecond
	correctionGoal = 500 * time.Millisecond
)

type analysis struct {
	newRecords   int
	preRecords   []*seenRecord
	falseDrifts  []*seenRecord // records on objects never drifted
	extra        []*seenRecord // records on drifted objects that no drift explains
	unexpected   []string      // matched records whose content is not what the drift did
	notDetected  []*driftRun
	notCorrected []*driftRun
	failed       []*driftRun
	// driftsOf maps an object to its drifts, to describe extra records.
	driftsOf map[string][]*driftRun
	// lost are records overwritten in status.drifts; backwards counts driftCount decreases.
	lost      []*seenRecord
	backwards int
	// echoes are extra records detected within echoWindow of the controller's correction of
	// the object's previous drift.
	echoes int
	// twins are extra records of the same change as a matched record (twinOf), one found by
	// a comparison, the other by the watch; early are those of them whose detectedTime
	// precedes the drift's change request (a matched record never does: the matching skips it).
	twins, early int
	// byComparison counts the matched records a comparison found, not the watch.
	byComparison int
}

// echoWindow: an extra record this close to the previous drift's correctedTime is taken for the
// controller seeing its own correction.
const echoWindow = 50 * time.Millisecond

// twinWindow: an extra record of the same change as a matched one is detected at most this far
// from it.
const twinWindow = time.Second

// twinOf returns the drift whose matched record records the same change as the extra record r
// by the other means of detection (a comparison against the watch): the same type, within
// twinWindow, and the same new value of every field both list (a comparison may list more:
// fields the API server defaulted).
func (a *analysis) twinOf(r *seenRecord) *driftRun {
	for _, d := range a.driftsOf[objID(r.cluster, objKey{r.Kind, r.Name})] {
		m := d.record
		if m == nil || m.Type != r.Type || m.Detection == r.Detection {
			continue
		}
		if gap := r.DetectedTime.Sub(m.DetectedTime.Time); gap <= -twinWindow || gap >= twinWindow {
			continue
		}
		if sameNewValues(m.Fields, r.Fields) {
			return d
		}
	}
	return nil
}

func sameNewValues(x, y []holdfastv1.FieldChange) bool {
	if len(x) > len(y) {
		x, y = y, x
	}
	for _, f := range x {
		if !slices.ContainsFunc(y, func(g holdfastv1.FieldChange) bool { return g.Path == f.Path && g.New == f.New }) {
			return false
		}
	}
	return true
}

func objID(cluster string, k objKey) string { return cluster + " " + k.Kind + " " + k.Name }

// analyse matches drift records to drifts.
func (b *bench) analyse(runs []*driftRun, pre []*seenRecord) *analysis {
	a := &analysis{preRecords: pre, driftsOf: map[string][]*driftRun{}}
	preKeys := map[*seenRecord]bool{}
	for _, r := range pre {
		preKeys[r] = true
	}
	byObj := map[string][]*seenRecord{}
	for _, r := range b.records.all() {
		if preKeys[r] {
			continue
		}
		a.newRecords++
		id := objID(r.cluster, objKey{r.Kind, r.Name})
		byObj[id] = append(byObj[id], r)
	}
	for _, d := range runs {
		if d.err == nil {
			id := objID(d.cluster, d.obj)
			a.driftsOf[id] = append(a.driftsOf[id], d)
		}
	}
	for id, ds := range a.driftsOf {
		sort.Slice(ds, func(i, j int) bool { return ds[i].tSend.Before(ds[j].tSend) })
		for i, d := range ds {
			var until time.Time
			if i+1 < len(ds) {
				until = ds[i+1].tSend
			}
			want := holdfastv1.DriftChanged
			if d.kind == driftDelete {
				want = holdfastv1.DriftDeleted
			}
			for _, r := range byObj[id] { // sorted by detectedTime
				if r.used || r.Type != want || r.DetectedTime.Time.Before(d.tSend.Truncate(time.Microsecond)) {
					continue
				}
				if !until.IsZero() && !r.DetectedTime.Time.Before(until) {
					break
				}
				r.used = true
				d.record = r
				break
			}
			if d.record != nil {
				if problem := checkRecord(d); problem != "" {
					a.unexpected = append(a.unexpected, fmt.Sprintf("%s drift %d (%s %s): %s", d.cluster, d.seq, d.kind, d.obj, problem))
				}
			}
		}
	}
	for id, rs := range byObj {
		for _, r := range rs {
			if r.used {
				continue
			}
			if _, drifted := a.driftsOf[id]; drifted {
				a.extra = append(a.extra, r)
			} else {
				a.falseDrifts = append(a.falseDrifts, r)
			}
		}
	}
	byDetected := func(rs []*seenRecord) {
		sort.Slice(rs, func(i, j int) bool { return rs[i].DetectedTime.Before(&rs[j].DetectedTime) })
	}
	byDetected(a.extra)
	byDetected(a.falseDrifts)
	a.lost, a.backwards = b.records.lostRecords()
	for _, ds := range a.driftsOf {
		for _, r := range ds {
			if r.record == nil {
				continue
			}
			if r.record.Detection == holdfastv1.DriftDetectedByComparison {
				a.byComparison++
			}
		}
	}
	for _, r := range a.extra {
		if d := a.twinOf(r); d != nil {
			a.twins++
			if r.DetectedTime.Time.Before(d.tSend.Truncate(time.Microsecond)) {
				a.early++
			}
		}
		if prev := a.previous(r); prev != nil && prev.record != nil && prev.record.CorrectedTime != nil {
			if d := r.DetectedTime.Time.Sub(prev.record.CorrectedTime.Time); d > -echoWindow && d < echoWindow {
				a.echoes++
			}
		}
	}
	for _, d := range runs {
		switch {
		case d.err != nil:
			a.failed = append(a.failed, d)
		default:
			if d.record == nil {
				a.notDetected = append(a.notDetected, d)
			}
			if d.corrected.IsZero() {
				a.notCorrected = append(a.notCorrected, d)
			}
		}
	}
	return a
}

// checkRecord says what in a drift's record differs from what the drift did.
func checkRecord(d *driftRun) string {
	r := d.record
	var problems []string
	if r.CorrectedTime == nil {
		problems = append(problems, "not marked corrected")
	}
	if d.kind == driftDelete {
		if len(problems) == 0 {
			return ""
		}
		return strings.Join(problems, "; ")
	}
	if r.Manager != editor {
		problems = append(problems, fmt.Sprintf("manager %q", r.Manager))
	}
	want := map[string]string{driftEdit: "value", driftScale: "replicas", driftRelabel: "tier"}[d.kind]
	if d.kind == driftEdit && d.obj.Kind == kindSecret {
		want = "token"
	}
	found := false
	for _, f := range r.Fields {
		if strings.Contains(f.Path, want) {
			found = true
		}
	}
	if !found {
		problems = append(problems, fmt.Sprintf("fields %s lack %q", fieldsString(r.Fields), want))
	}
	if d.kind == driftScale && r.Subresource != "scale" {
		problems = append(problems, fmt.Sprintf("subresource %q", r.Subresource))
	}
	return strings.Join(problems, "; ")
}

func fieldsString(fs []holdfastv1.FieldChange) string {
	var parts []string
	for _, f := range fs {
		parts = append(parts, fmt.Sprintf("%s: %s -> %s", f.Path, f.Old, f.New))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func recordString(r *seenRecord) string {
	s := fmt.Sprintf("%s %s %s/%s, %s", r.cluster, r.Kind, r.Namespace, r.Name, r.Type)
	if len(r.Fields) > 0 {
		s += " " + fieldsString(r.Fields)
	}
	if r.Manager != "" {
		s += fmt.Sprintf(", manager %s (%s", r.Manager, r.Operation)
		if r.Subresource != "" {
			s += " " + r.Subresource
		}
		s += ")"
	}
	if r.Detection != "" {
		s += ", detected by " + string(r.Detection)
	}
	if r.CorrectedTime == nil {
		s += ", not marked corrected"
	}
	return s
}

type group struct {
	label string
	keep  func(*driftRun) bool
}

func (a *analysis) print(b *bench, runs []*driftRun) {
	groups := []group{{"all", func(*driftRun) bool { return true }}}
	for _, k := range driftKinds {
		groups = append(groups, group{k, func(d *driftRun) bool { return d.kind == k }})
	}
	for _, n := range b.Names {
		groups = append(groups, group{"all on " + n, func(d *driftRun) bool { return d.cluster == n }})
	}
	for _, k := range driftKinds {
		for _, ok := range []string{kindConfigMap, kindSecret, kindService, kindDeployment} {
			has := false
			for _, d := range runs {
				if d.kind == k && d.obj.Kind == ok {
					has = true
				}
			}
			if has {
				groups = append(groups, group{k + " " + ok, func(d *driftRun) bool { return d.kind == k && d.obj.Kind == ok }})
			}
		}
	}
	header := measure.LatencyHeader("drifts")
	detection, correction, marked, request, visible := measure.NewTable(header...), measure.NewTable(header...), measure.NewTable(header...), measure.NewTable(header...), measure.NewTable(header...)
	var allDet, allCorr []time.Duration
	for _, g := range groups {
		var det, corr, mark, req, vis []time.Duration
		for _, d := range runs {
			if !g.keep(d) || d.err != nil {
				continue
			}
			req = append(req, d.t0.Sub(d.tSend))
			if d.record != nil {
				det = append(det, d.record.DetectedTime.Time.Sub(d.t0))
				vis = append(vis, d.record.firstSeen.Sub(d.t0))
				if d.record.CorrectedTime != nil {
					mark = append(mark, d.record.CorrectedTime.Time.Sub(d.t0))
				}
			}
			if !d.corrected.IsZero() {
				corr = append(corr, d.corrected.Sub(d.t0))
			}
		}
		if g.label == "all" {
			allDet, allCorr = det, corr
		}
		detection.LatencyRow(g.label, det)
		correction.LatencyRow(g.label, corr)
		marked.LatencyRow(g.label, mark)
		request.LatencyRow(g.label, req)
		visible.LatencyRow(g.label, vis)
	}
	performed := len(runs) - len(a.failed)
	fmt.Printf("#### Detection latency: the drift's record's detectedTime − t0 (the change request returned)\n\n")
	fmt.Println(detection)
	fmt.Printf("#### Correction latency: t0 until this program's watch on the target sees the object back at its declared state\n\n")
	fmt.Println(correction)
	fmt.Printf("#### The record's correctedTime − t0 (when the controller considers the object corrected)\n\n")
	fmt.Println(marked)
	fmt.Printf("#### The record visible on the hub: this program's watch of the status object first shows it, − t0\n\n")
	fmt.Println(visible)
	fmt.Printf("#### For context: the change request itself (t0 − request sent)\n\n")
	fmt.Println(request)

	verdict := func(name string, ds []time.Duration, goal time.Duration, of int) string {
		if len(ds) == 0 {
			return fmt.Sprintf("%s: nothing measured", name)
		}
		p := measure.Percentile(ds, 99)
		met := "met"
		if p >= goal {
			met = "**not met**"
		}
		if len(ds) < of {
			met += fmt.Sprintf(" over the %d of %d drifts measured", len(ds), of)
		}
		return fmt.Sprintf("%s p99 %s against the goal < %s: %s", name, measure.Millis(p), goal, met)
	}
	fmt.Printf("Goals (issue 4): %s; %s.\n\n", verdict("detection", allDet, detectionGoal, performed), verdict("correction", allCorr, correctionGoal, performed))

	acc := measure.NewTable("check", "value")
	acc.Row("drifts performed (change request succeeded)", fmt.Sprintf("%d of %d", performed, len(runs)))
	acc.Row("drifts matched to a drift record", fmt.Sprintf("%d of %d", performed-len(a.notDetected), performed))
	acc.Row("drifts seen corrected on the target", fmt.Sprintf("%d of %d", performed-len(a.notCorrected), performed))
	acc.Row("matched records whose type, fields, manager or correctedTime differ from the drift", fmt.Sprint(len(a.unexpected)))
	acc.Row("extra records on drifted objects (no drift of this program explains them)", fmt.Sprint(len(a.extra)))
	acc.Row(fmt.Sprintf("… of which detected within %s of the controller's correction of the object's previous drift", echoWindow), fmt.Sprint(a.echoes))
	acc.Row(fmt.Sprintf("… of which the same change as a drift's matched record, found the other way (comparison or watch), within %s", twinWindow), fmt.Sprint(a.twins))
	acc.Row("… of which with a detectedTime before that drift's change request was sent", fmt.Sprint(a.early))
	acc.Row("matched records found by a comparison, not the watch", fmt.Sprint(a.byComparison))
	acc.Row("false drifts: records on objects never drifted, during the drift phase", fmt.Sprint(len(a.falseDrifts)))
	acc.Row("false drifts: records before the first drift (deployment and settling)", fmt.Sprint(len(a.preRecords)))
	named, editorNamed, others := attributed(runs)
	acc.Row("matched records naming a user (drift attribution), per kind", named)
	acc.Row("… naming the user who made the drift ("+editor+")", editorNamed)
	acc.Row("… naming another user", others)
	fmt.Printf("#### Accounting\n\n")
	fmt.Println(acc)

	list := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		fmt.Printf("%s (%d):\n\n", title, len(items))
		for i, s := range items {
			if i == 20 {
				fmt.Printf("- … and %d more\n", len(items)-20)
				break
			}
			fmt.Printf("- %s\n", s)
		}
		fmt.Println()
	}
	var items []string
	for _, d := range a.failed {
		items = append(items, fmt.Sprintf("%s drift %d (%s %s): %v", d.cluster, d.seq, d.kind, d.obj, d.err))
	}
	list("Drifts whose change request failed", items)
	items = nil
	for _, d := range a.notDetected {
		items = append(items, fmt.Sprintf("%s drift %d (%s %s) at %s, corrected %s", d.cluster, d.seq, d.kind, d.obj, d.t0.Format("15:04:05.000000"), correctedString(d)))
	}
	list("Drifts never detected (no matching record)", items)
	items = nil
	for _, d := range a.notCorrected {
		items = append(items, fmt.Sprintf("%s drift %d (%s %s) at %s, record: %s", d.cluster, d.seq, d.kind, d.obj, d.t0.Format("15:04:05.000000"), recordOrNone(d.record)))
	}
	list("Drifts never seen corrected", items)
	list("Matched records that differ from the drift", a.unexpected)
	items = nil
	for _, r := range a.extra {
		s := recordString(r) + "; " + a.relative(r)
		if d := a.twinOf(r); d != nil {
			s += fmt.Sprintf("; the same change as drift %d (%s), recorded by %s %s after its change request was sent", d.seq, d.kind,
				d.record.Detection, measure.Millis(d.record.DetectedTime.Time.Sub(d.tSend)))
			if r.DetectedTime.Time.Before(d.tSend) {
				s += fmt.Sprintf(", this one %s before it", measure.Millis(d.tSend.Sub(r.DetectedTime.Time)))
			}
		}
		items = append(items, s)
	}
	list("Extra records on drifted objects", items)
	items = nil
	for _, r := range a.falseDrifts {
		items = append(items, recordString(r)+", detected "+r.DetectedTime.Format("15:04:05.000000"))
	}
	list("False drifts during the drift phase", items)
	items = nil
	for _, r := range a.preRecords {
		items = append(items, recordString(r)+", detected "+r.DetectedTime.Format("15:04:05.000000"))
	}
	list("Records before the first drift", items)
	items = nil
	for _, r := range a.lost {
		s := recordString(r) + ", detected " + r.DetectedTime.Format("15:04:05.000000")
		if r.used {
			s += " (matched to a drift)"
		}
		items = append(items, s)
	}
	list("Records that left status.drifts before 20 newer ones pushed them out", items)

	fmt.Printf("One matched record of each kind of drift, as the status object shows it:\n\n")
	for _, k := range driftKinds {
		for _, d := range runs {
			if d.kind == k && d.record != nil {
				fmt.Printf("- %s (%s): %s; detected %s after t0, corrected %s after t0\n", k, d.obj, recordString(d.record),
					measure.Millis(d.record.DetectedTime.Time.Sub(d.t0)), markedString(d))
				break
			}
		}
	}
	fmt.Println()
}

func recordOrNone(r *seenRecord) string {
	if r == nil {
		return "none"
	}
	return recordString(r)
}

func correctedString(d *driftRun) string {
	if d.corrected.IsZero() {
		return "never"
	}
	return measure.Millis(d.corrected.Sub(d.t0)) + " after t0"
}

func markedString(d *driftRun) string {
	if d.record.CorrectedTime == nil {
		return "never"
	}
	return measure.Millis(d.record.CorrectedTime.Time.Sub(d.t0))
}

// previous is the latest drift of a record's object sent before the record was detected.
func (a *analysis) previous(r *seenRecord) *driftRun {
	var prev *driftRun
	for _, d := range a.driftsOf[objID(r.cluster, objKey{r.Kind, r.Name})] {
		if !d.tSend.After(r.DetectedTime.Time) {
			prev = d
		}
	}
	return prev
}

// relative places an extra record against the latest drift of its object before it.
func (a *analysis) relative(r *seenRecord) string {
	prev := a.previous(r)
	if prev == nil {
		return "detected " + r.DetectedTime.Format("15:04:05.000000") + ", before any drift of the object"
	}
	s := fmt.Sprintf("detected %s after t0 of drift %d (%s)", measure.Millis(r.DetectedTime.Time.Sub(prev.t0)), prev.seq, prev.kind)
	if !prev.corrected.IsZero() {
		s += fmt.Sprintf(", which was seen corrected %s after t0", measure.Millis(prev.corrected.Sub(prev.t0)))
	}
	if prev.record != nil && prev.record.CorrectedTime != nil {
		s += fmt.Sprintf(" (its record's correctedTime %s after t0)", measure.Millis(prev.record.CorrectedTime.Time.Sub(prev.t0)))
	}
	return s
}

var resourceOf = map[string]string{kindConfigMap: "configmaps", kindSecret: "secrets", kindService: "services", kindDeployment: "deployments"}

// printRequests reports the controller's requests during the drift phase and its writes per drift.
func (b *bench) printRequests(counts measure.RequestCounts, runs []*driftRun, window time.Duration) {
	fmt.Printf("#### Requests of the controller during the drift phase (%s), by verb\n\n", measure.Seconds(window))
	fmt.Println(counts.Table(b.Servers...))
	fmt.Println("Mutating requests during the drift phase, grouped:")
	fmt.Println()
	fmt.Println(counts.MutatingTable())

	drifts := map[string]int{} // cluster resource name -> drifts
	kinds := map[string][]string{}
	for _, d := range runs {
		if d.err == nil {
			id := d.cluster + " " + resourceOf[d.obj.Kind] + " " + d.obj.Name
			drifts[id]++
			kinds[id] = append(kinds[id], d.kind)
		}
	}
	writes := map[string]int{}
	reviews, total := 0, 0
	byVerb := map[string]int{}
	for _, n := range b.Names {
		for _, r := range counts.MutatingTo(n) {
			if r.Review() {
				reviews++
				continue
			}
			total++
			byVerb[r.Verb]++
			writes[n+" "+r.Resource+" "+r.Name]++
		}
	}
	performed := 0
	for _, v := range drifts {
		performed += v
	}
	t := measure.NewTable("writes to the targets", "value")
	var verbs []string
	for v, n := range byVerb {
		verbs = append(verbs, fmt.Sprintf("%d %s", n, v))
	}
	sort.Strings(verbs)
	t.Row("writes (mutating requests other than reviews)", fmt.Sprintf("%d (%s)", total, strings.Join(verbs, ", ")))
	t.Row("reviews (health probes, never persisted)", fmt.Sprint(reviews))
	t.Row("drifts performed", fmt.Sprint(performed))
	t.Row("writes per drift", fmt.Sprintf("%.2f", float64(total)/float64(max(performed, 1))))
	var more, fewer, stray []string
	for id, n := range drifts {
		switch w := writes[id]; {
		case w > n:
			more = append(more, fmt.Sprintf("%s: %d drifts (%s), %d writes", id, n, strings.Join(kinds[id], ", "), w))
		case w < n:
			fewer = append(fewer, fmt.Sprintf("%s: %d drifts (%s), %d writes", id, n, strings.Join(kinds[id], ", "), w))
		}
	}
	for id, w := range writes {
		if drifts[id] == 0 {
			stray = append(stray, fmt.Sprintf("%s: %d writes", id, w))
		}
	}
	sort.Strings(more)
	sort.Strings(fewer)
	sort.Strings(stray)
	t.Row("drifted objects with more writes than drifts", fmt.Sprint(len(more)))
	t.Row("drifted objects with fewer writes than drifts", fmt.Sprint(len(fewer)))
	t.Row("objects written but never drifted", fmt.Sprint(len(stray)))
	fmt.Printf("#### Writes to the targets per drift\n\n")
	fmt.Println(t)
	for _, l := range []struct {
		title string
		items []string
	}{{"Drifted objects with more writes than drifts", more}, {"Drifted objects with fewer writes than drifts", fewer}, {"Objects written but never drifted", stray}} {
		if len(l.items) == 0 {
			continue
		}
		fmt.Printf("%s (%d):\n\n", l.title, len(l.items))
		for i, s := range l.items {
			if i == 15 {
				fmt.Printf("- … and %d more\n", len(l.items)-15)
				break
			}
			fmt.Printf("- %s\n", s)
		}
		fmt.Println()
	}
}

// attributed counts the matched records that name a user, per kind of drift: all of them, those
// naming editor (who made every drift) and those naming anyone else.
func attributed(runs []*driftRun) (named, editorNamed, others string) {
	n, e, o, of := map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
	total := [3]int{}
	for _, d := range runs {
		if d.record == nil {
			continue
		}
		of[d.kind]++
		switch d.record.User {
		case "":
			continue
		case editor:
			e[d.kind]++
			total[1]++
		default:
			o[d.kind]++
			total[2]++
		}
		n[d.kind]++
		total[0]++
	}
	format := func(m map[string]int, sum int) string {
		var parts []string
		for _, k := range driftKinds {
			parts = append(parts, fmt.Sprintf("%s %d of %d", k, m[k], of[k]))
		}
		return fmt.Sprintf("%d (%s)", sum, strings.Join(parts, ", "))
	}
	return format(n, total[0]), format(e, total[1]), format(o, total[2])
}
