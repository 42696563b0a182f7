package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/naming"
)

// Invariant checks, as counted.
const (
	cConverged   = "1. converged: matched cluster holds exactly the declared objects, current revision"
	cStatus      = "1. converged: its ClusterServiceStatus says so (Ready, all in sync, none drifted)"
	cHubStatus   = "1. converged: MultiClusterService counts the matched clusters Ready"
	cRecords     = "2. drift record marked corrected: the object was back by then"
	cExplained   = "2. drift record explained by a change this program made (no false drift)"
	cOnce        = "2. drift made by this program recorded once (not twice, not missed)"
	cAuthor      = "2. drift record of a field edit names its field manager (soak-editor)"
	cReported    = "2. Report mode: a drifted object is reported, not marked corrected"
	cNoExit      = "3. controller never exited on its own (per round)"
	cNoPanic     = "3. no panic in the controller's log (per round)"
	cMemory      = "3. controller peak RSS within max(2 × baseline, baseline + 150 MiB) (per round after 3)"
	cWithdrawn   = "4. unmatched cluster: objects, namespace and status object gone"
	cLogLeak     = "5. no planted Secret value in the controller's log (per round)"
	cStatusLeak  = "5. no planted Secret value in status objects and Events (per round)"
	cRequestDone = "1. Report round: the correction request handled by every matched cluster"
)

var checkOrder = []string{cConverged, cStatus, cHubStatus, cRequestDone, cRecords, cExplained, cOnce, cAuthor, cReported, cNoExit, cNoPanic, cMemory, cWithdrawn, cLogLeak, cStatusLeak}

// clusterResult is what one look at a target found wrong, by check.
type clusterResult struct {
	name    string
	matched bool
	// problems by check (cConverged, cStatus, cRequestDone or cWithdrawn); an empty list passed.
	problems map[string][]string
}

type fleetResult struct {
	clusters []clusterResult
	hub      []string
}

func (r fleetResult) ok() bool {
	for _, c := range r.clusters {
		for _, p := range c.problems {
			if len(p) > 0 {
				return false
			}
		}
	}
	return len(r.hub) == 0
}

func (r fleetResult) problems() []string {
	var out []string
	for _, c := range r.clusters {
		for _, check := range checkOrder {
			for _, p := range c.problems[check] {
				out = append(out, c.name+": "+p)
			}
		}
	}
	for _, p := range r.hub {
		out = append(out, "hub: "+p)
	}
	return out
}

// live reads a declared object from a target through the dynamic client, normalized; nil when
// it does not exist.
func (s *soak) live(ctx context.Context, t *target, r objRef) (map[string]any, string, error) {
	res := t.dyn.Resource(gvrs[r.Kind])
	var u *unstructured.Unstructured
	var err error
	if r.Kind == kindNamespace {
		u, err = res.Get(ctx, r.Name, metav1.GetOptions{})
	} else {
		u, err = res.Namespace(appNamespace).Get(ctx, r.Name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	obj, err := normalize(u.Object)
	return obj, u.GetResourceVersion(), err
}

// checkFleet looks at every target and the hub once. request is the correction request every
// matched cluster must have handled ("" for none).
func (s *soak) checkFleet(ctx context.Context, request string) fleetResult {
	var res fleetResult
	mcs := &holdfastv1.MultiClusterService{}
	if err := s.hub.Get(ctx, client.ObjectKey{Name: serviceSetName}, mcs); err != nil {
		res.hub = append(res.hub, "reading the MultiClusterService: "+err.Error())
		return res
	}
	decl := s.current()
	matched := 0
	for _, t := range s.targets {
		cr := clusterResult{name: t.name, matched: t.matched, problems: map[string][]string{}}
		if t.matched {
			matched++
			cr.problems[cConverged] = s.checkObjects(ctx, t, decl)
			cr.problems[cStatus], cr.problems[cRequestDone] = s.checkStatus(ctx, t, decl, mcs.Generation, request)
		} else {
			cr.problems[cWithdrawn] = s.checkWithdrawn(ctx, t)
		}
		res.clusters = append(res.clusters, cr)
	}
	if int(mcs.Status.MatchingClusters) != matched || int(mcs.Status.ReadyClusters) != matched {
		res.hub = append(res.hub, fmt.Sprintf("MultiClusterService status: %d matching, %d ready, %d failed; want %d matching and ready (observedGeneration %d of %d)",
			mcs.Status.MatchingClusters, mcs.Status.ReadyClusters, mcs.Status.FailedClusters, matched, mcs.Status.ObservedGeneration, mcs.Generation))
	}
	return res
}

// managedOnTarget lists the service set's objects on a target by Holdfast's labels.
func (s *soak) managedOnTarget(ctx context.Context, t *target) ([]objRef, error) {
	sel := labels.SelectorFromSet(labels.Set{holdfastv1.ManagedByLabel: holdfastv1.ManagedByValue, holdfastv1.OwnerLabel: naming.LabelValue(serviceSetName)}).String()
	var out []objRef
	for _, k := range kinds {
		res := t.dyn.Resource(gvrs[k])
		var items []string
		if k == kindNamespace {
			list, err := res.List(ctx, metav1.ListOptions{LabelSelector: sel})
			if err != nil {
				return nil, err
			}
			for _, it := range list.Items {
				items = append(items, it.GetName())
			}
		} else {
			list, err := res.Namespace(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: sel})
			if err != nil {
				return nil, err
			}
			for _, it := range list.Items {
				name := it.GetName()
				if it.GetNamespace() != appNamespace {
					name = it.GetNamespace() + "/" + name
				}
				items = append(items, name)
			}
		}
		for _, n := range items {
			out = append(out, objRef{k, n})
		}
	}
	return out, nil
}

func (s *soak) checkObjects(ctx context.Context, t *target, decl declaration) []string {
	var problems []string
	for _, r := range decl.refs() {
		obj, _, err := s.live(ctx, t, r)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s: reading: %v", r, err))
		case obj == nil:
			problems = append(problems, fmt.Sprintf("%s: missing", r))
		default:
			if d := differences(decl[r], obj); len(d) > 0 {
				problems = append(problems, fmt.Sprintf("%s differs: %s", r, describeDiffs(r, d)))
			} else if ts := deletionTimestamp(obj); ts != "" {
				problems = append(problems, fmt.Sprintf("%s is being deleted (since %s)", r, ts))
			}
		}
	}
	managed, err := s.managedOnTarget(ctx, t)
	if err != nil {
		return append(problems, "listing managed objects: "+err.Error())
	}
	for _, r := range managed {
		if _, ok := decl[r]; !ok {
			problems = append(problems, fmt.Sprintf("%s: managed by the service set but not declared", r))
		}
	}
	return problems
}

func deletionTimestamp(obj map[string]any) string {
	m, _ := obj["metadata"].(map[string]any)
	ts, _ := m["deletionTimestamp"].(string)
	return ts
}

func (s *soak) checkStatus(ctx context.Context, t *target, decl declaration, generation int64, request string) (status, handled []string) {
	css := &holdfastv1.ClusterServiceStatus{}
	if err := s.hub.Get(ctx, client.ObjectKey{Namespace: s.fleet.Namespace, Name: naming.StatusName(serviceSetName, t.name)}, css); err != nil {
		return []string{"reading its ClusterServiceStatus: " + err.Error()}, nil
	}
	st := css.Status
	n := int32(len(decl))
	if !meta.IsStatusConditionTrue(st.Conditions, holdfastv1.ReadyCondition) || st.ResourceCount != n || st.InSyncCount != n || st.DriftedCount != 0 ||
		st.ObservedServiceSetGeneration != generation {
		status = append(status, fmt.Sprintf("ClusterServiceStatus: %s; want Ready, %d resources all in sync, none drifted, service set generation %d (observed %d)%s",
			describeStatus(css), n, generation, st.ObservedServiceSetGeneration, notInSync(css)))
	}
	if request != "" && st.LastHandledReconcileAt != request {
		handled = append(handled, fmt.Sprintf("lastHandledReconcileAt %q, want %q", st.LastHandledReconcileAt, request))
	}
	return status, handled
}

func describeStatus(css *holdfastv1.ClusterServiceStatus) string {
	var conds []string
	for _, c := range css.Status.Conditions {
		s := c.Type + "=" + string(c.Status) + "/" + c.Reason
		if c.Status != metav1.ConditionTrue && c.Message != "" && c.Type == holdfastv1.ReadyCondition {
			s += " (" + clip(c.Message, 200) + ")"
		}
		conds = append(conds, s)
	}
	return fmt.Sprintf("%d resources, %d in sync, %d failed, %d drifted; %s", css.Status.ResourceCount, css.Status.InSyncCount,
		css.Status.FailedCount, css.Status.DriftedCount, strings.Join(conds, ", "))
}

func notInSync(css *holdfastv1.ClusterServiceStatus) string {
	var out []string
	for _, r := range css.Status.Resources {
		if r.State != holdfastv1.ResourceInSync {
			s := fmt.Sprintf("%s/%s %s", r.Kind, r.Name, r.State)
			if r.Message != "" {
				s += " (" + clip(r.Message, 160) + ")"
			}
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "; not in sync: " + strings.Join(out, ", ")
}

func (s *soak) checkWithdrawn(ctx context.Context, t *target) []string {
	var problems []string
	ns := &corev1.Namespace{}
	if err := t.c.Get(ctx, client.ObjectKey{Name: appNamespace}, ns); err == nil {
		problems = append(problems, fmt.Sprintf("namespace %s still there (phase %s)", appNamespace, ns.Status.Phase))
	} else if !apierrors.IsNotFound(err) {
		problems = append(problems, "reading namespace: "+err.Error())
	}
	managed, err := s.managedOnTarget(ctx, t)
	if err != nil {
		problems = append(problems, "listing managed objects: "+err.Error())
	}
	for _, r := range managed {
		problems = append(problems, fmt.Sprintf("%s still there", r))
	}
	css := &holdfastv1.ClusterServiceStatus{}
	if err := s.hub.Get(ctx, client.ObjectKey{Namespace: s.fleet.Namespace, Name: naming.StatusName(serviceSetName, t.name)}, css); err == nil {
		problems = append(problems, fmt.Sprintf("ClusterServiceStatus %s still there (%s)", css.Name, describeStatus(css)))
	} else if !apierrors.IsNotFound(err) {
		problems = append(problems, "reading ClusterServiceStatus: "+err.Error())
	}
	return problems
}

// waitConverged checks the fleet every 2 s until it passes or timeout passes; it returns the
// last result.
func (s *soak) waitConverged(ctx context.Context, timeout time.Duration, request string) (bool, fleetResult) {
	deadline := time.Now().Add(timeout)
	said := ""
	for {
		res := s.checkFleet(ctx, request)
		// What is still wrong goes to faults.log each time it changes, to see what took long.
		if now := strings.Join(res.problems(), "; "); now != said {
			s.logFault("waiting for convergence: %s", orNone(res.problems()))
			said = now
		}
		if res.ok() || !time.Now().Before(deadline) || ctx.Err() != nil {
			return res.ok(), res
		}
		sleep(ctx, 2*time.Second)
	}
}

// waitAllUp waits until no API server is stopped and the controller runs.
func (s *soak) waitAllUp(ctx context.Context) {
	for _, t := range s.targets {
		t.mu.Lock()
		done := t.done
		t.mu.Unlock()
		if done != nil {
			select {
			case <-done:
			case <-ctx.Done():
				return
			}
		}
		if t.isDown() {
			s.violation("the API server of %s could not be started again (see faults.log); the soak cannot go on reliably", t.name)
		}
	}
	s.hubMu.Lock()
	done := s.hubDone
	s.hubMu.Unlock()
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
			return
		}
	}
	if !s.restartAt.IsZero() {
		s.restartAt = time.Now() // a killed controller is due now
	}
	s.restartControllerIfDue()
}

// settlePhase ends a round: it brings everything back up and checks the invariants.
func (s *soak) settlePhase(ctx context.Context) error {
	s.waitAllUp(ctx)
	request := ""
	if s.action == holdfastv1.DriftActionReport {
		sleep(ctx, s.cfg.quiet)
		s.checkReported(ctx)
		v, err := s.request(ctx, &holdfastv1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Name: serviceSetName}})
		if err != nil {
			return fmt.Errorf("requesting a correction at the end of round %d: %w", s.rounds, err)
		}
		s.faults.done(fRoundRequest)
		s.logFault("%s: %s", fRoundRequest, v)
		request = v
	}
	start := time.Now()
	ok, res := s.waitConverged(ctx, s.cfg.settle, request)
	took := time.Since(start)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	extra := ""
	if !ok {
		// Slow or stuck? Keep looking for two more minutes, to say which.
		later, res2 := s.waitConverged(ctx, 2*time.Minute, request)
		if later {
			extra = fmt.Sprintf(" (it converged %s after the faults stopped)", time.Since(start).Round(time.Second))
		} else {
			extra = fmt.Sprintf(" (still not converged %s after the faults stopped: %s)", time.Since(start).Round(time.Second), strings.Join(res2.problems(), "; "))
		}
	} else {
		s.settles = append(s.settles, took)
	}
	for _, c := range res.clusters {
		checks := []string{cWithdrawn}
		if c.matched {
			checks = []string{cConverged, cStatus}
			if request != "" {
				checks = append(checks, cRequestDone)
			}
		}
		for _, check := range checks {
			if p := c.problems[check]; len(p) > 0 {
				s.checks.fail(check)
				s.violation("round %d (drift action %s), %s, not within %s%s: %s", s.rounds, s.action, c.name, s.cfg.settle, extra, strings.Join(p, "; "))
			} else {
				s.checks.pass(check)
			}
		}
	}
	if len(res.hub) > 0 {
		s.checks.fail(cHubStatus)
		s.violation("round %d, hub, not within %s%s: %s", s.rounds, s.cfg.settle, extra, strings.Join(res.hub, "; "))
	} else {
		s.checks.pass(cHubStatus)
	}
	s.records.pollOnce(ctx, s.hub, s.fleet.Namespace)
	s.checkRecords(time.Now().Add(-s.cfg.tolerance))
	s.checkExplained(time.Now().Add(-s.cfg.tolerance))
	// The changes of the rounds before: their records came before the last round converged.
	judgeBefore := time.Now().Add(-recordWindow - s.cfg.tolerance)
	if s.roundStart.Before(judgeBefore) {
		judgeBefore = s.roundStart
	}
	s.judgeRecordedOnce(judgeBefore)
	s.checkController()
	s.checkMemory()
	s.checkLeaks(ctx)
	state := "converged in " + took.Round(100*time.Millisecond).String()
	if !ok {
		state = "NOT converged within " + s.cfg.settle.String() + extra
	}
	var matched []string
	for _, t := range s.targets {
		if t.matched {
			matched = append(matched, t.name)
		}
	}
	fmt.Fprintf(os.Stderr, "%s round %d: %s; matched %v; revisions config %d, web %d; %d violations so far\n",
		time.Now().Format("15:04:05"), s.rounds, state, matched, s.revs[configTemplate], s.revs[webTemplate], len(s.violations))
	return nil
}

// matchesSomeRevision says whether a version of an object (nil: absent) is what some revision
// of its template declared, or would be absent in one.
func (s *soak) matchesRevision(r objRef, obj map[string]any, revs []int) bool {
	t := templateOf(r)
	for _, rev := range revs {
		d, declared := s.declaredAt(t, rev)[r]
		switch {
		case !declared && obj == nil:
			return true
		case declared && obj != nil && len(differences(d, obj)) == 0:
			return true
		}
	}
	return false
}

func (s *soak) allRevisions(template string) []int {
	out := make([]int, s.revs[template]+1)
	for i := range out {
		out[i] = i
	}
	return out
}

// checkReported, in Report mode after a quiet time, checks that every object carrying a drift
// (its content matches no revision ever declared) is reported as drifted and not as corrected.
func (s *soak) checkReported(ctx context.Context) {
	decl := s.current()
	for _, t := range s.targets {
		if !t.matched {
			continue
		}
		for _, r := range decl.refs() {
			obj1, rv1, err := s.live(ctx, t, r)
			if err != nil || s.matchesRevision(r, obj1, s.allRevisions(templateOf(r))) {
				continue
			}
			css := &holdfastv1.ClusterServiceStatus{}
			if err := s.hub.Get(ctx, client.ObjectKey{Namespace: s.fleet.Namespace, Name: naming.StatusName(serviceSetName, t.name)}, css); err != nil {
				s.checks.inconclusive(cReported)
				continue
			}
			obj2, rv2, err := s.live(ctx, t, r)
			if err != nil || rv1 != rv2 || (obj1 == nil) != (obj2 == nil) {
				s.checks.inconclusive(cReported) // changed while we looked
				continue
			}
			what := "missing"
			if obj1 != nil {
				what = "differs: " + describeDiffs(r, differences(decl[r], obj1))
			}
			var problems []string
			i := slices.IndexFunc(css.Status.Resources, func(e holdfastv1.ResourceStatus) bool {
				return e.Kind == r.Kind && e.Name == r.Name && (e.Namespace == appNamespace || r.Kind == kindNamespace)
			})
			if i < 0 {
				problems = append(problems, "it is not in the status object's inventory")
			} else if st := css.Status.Resources[i].State; st == holdfastv1.ResourceInSync {
				problems = append(problems, "its status entry says InSync")
			}
			for _, rec := range css.Status.Drifts { // newest first
				if rec.Kind == r.Kind && rec.Name == r.Name {
					if rec.CorrectedTime != nil {
						problems = append(problems, fmt.Sprintf("its newest drift record says corrected at %s (%s, detected %s)", stamp(rec.CorrectedTime.Time), rec.Type, stamp(rec.DetectedTime.Time)))
					}
					break
				}
			}
			if len(problems) > 0 {
				s.checks.fail(cReported)
				s.violation("round %d, Report mode, %s %s %s, but %s", s.rounds, t.name, r, what, strings.Join(problems, "; "))
			} else {
				s.checks.pass(cReported)
			}
		}
	}
}

// lastFault is the last change this program made to an object on a cluster before t (a
// withdrawal excepted): the drift a record detected at t is about.
// causeOf is the change of this program a record is about, nil when none is found. A record
// names the object's version it saw drifted: the change that made that version is the cause,
// whenever it was sent (a comparison may read a version a later change replaced by the time it
// records it, and a change sent just after a comparison read the object is not what it found).
// Else, for a deletion or where the version is not one this program wrote (a comparison may
// read a version kube-controller-manager wrote after the change, a Deployment's status), the
// last change that can cause it sent before detectedTime, and only when there is none the last
// one before causeBefore: a change sent just after a comparison read the object (a scale 170 ms
// after an edit the comparison found, in the soak of 2026-11-28 03:25) is the next drift.
func (s *soak) causeOf(rec seenRecord) *faultEvent {
	r := objRef{rec.rec.Kind, rec.rec.Name}
	wantDelete := rec.rec.Type == holdfastv1.DriftDeleted
	if rv, err := strconv.ParseInt(rec.rec.ResourceVersion, 10, 64); err == nil && rv > 0 && !wantDelete {
		s.eventsMu.Lock()
		for i := len(s.events) - 1; i >= 0; i-- {
			if e := s.events[i]; e.cluster == rec.cluster && e.ref == r && e.rv == rv && e.canCause(wantDelete) {
				s.eventsMu.Unlock()
				return &e
			}
		}
		s.eventsMu.Unlock()
	}
	if f := s.lastFault(rec.cluster, r, rec.rec.DetectedTime.Time, wantDelete); f != nil {
		return f
	}
	return s.lastFault(rec.cluster, r, causeBefore(rec), wantDelete)
}

func (s *soak) lastFault(cluster string, r objRef, t time.Time, wantDelete bool) *faultEvent {
	s.eventsMu.Lock()
	defer s.eventsMu.Unlock()
	for i := len(s.events) - 1; i >= 0; i-- {
		e := s.events[i]
		if e.cluster != cluster || e.kind == fUnmatch || e.at.After(t) {
			continue
		}
		if (e.whole || e.ref == r) && e.canCause(wantDelete) {
			return &e
		}
	}
	return nil
}

// canCause reports whether e can be the cause of a drift record of a deletion (wantDelete) or
// of a change: a deletion only of a deletion, a change of a change (or of its namespace's
// deletion). An edit made after a comparison found the object deleted is not what its record
// is about.
func (e faultEvent) canCause(wantDelete bool) bool {
	return e.deleted == wantDelete || (e.whole && !wantDelete)
}

// causeBefore is the latest time a change can have been sent and still be the one a record is
// about. A watch sees a change after it was made, so its detectedTime is later. A comparison's
// detectedTime is when its reconcile began, before it read the object: a change that landed
// meanwhile is found with an earlier time (seen up to about 30 ms before the change was sent
// in the soak of 2026-11-25), so it gets a margin.
// Never later than correctedTime, though: a change sent after it is the next drift.
func causeBefore(rec seenRecord) time.Time {
	if rec.rec.Detection != holdfastv1.DriftDetectedByComparison {
		return rec.rec.DetectedTime.Time
	}
	end := rec.rec.DetectedTime.Add(2 * time.Second)
	if c := rec.rec.CorrectedTime; c != nil && c.Time.Before(end) {
		end = c.Time
	}
	return end
}

// revisionsIn lists the revisions of a template that were current at some time in [from, to].
func (s *soak) revisionsIn(template string, from, to time.Time) []int {
	var out []int
	cur := -1
	for _, c := range s.revHistory {
		if c.template != template {
			continue
		}
		if !c.at.After(from) {
			cur = c.rev
			continue
		}
		if !c.at.After(to) {
			out = append(out, c.rev)
		}
	}
	if cur >= 0 {
		out = append(out, cur)
	}
	sort.Ints(out)
	return out
}

// checkRecords checks the drift records marked corrected before cutoff (see the command's doc,
// invariant 2).
func (s *soak) checkRecords(cutoff time.Time) {
	for _, rec := range s.records.due(cutoff) {
		verdict, detail := s.checkRecord(rec)
		s.count(cRecords, verdict, fmt.Sprintf("record check inconclusive: %s: %s", rec, detail),
			fmt.Sprintf("drift record %s: %s", rec, detail))
	}
}

// checkExplained checks that every drift record detected before cutoff is about a change this
// program made: the last change of a matching type (a deletion for Deleted, any other for
// Changed) to that object, or a namespace deletion, sent before detectedTime and not undone
// before it (no version of the object matching a declared revision arrived between the change
// and a second before detectedTime). Nothing else changes the managed objects: a record
// without such a cause is Holdfast taking its own write (a prune, a withdrawal) or another
// controller's for a drift.
func (s *soak) checkExplained(cutoff time.Time) {
	for _, rec := range s.records.detectedBefore(cutoff) {
		verdict, detail, cause := s.explain(rec)
		if cause != nil {
			s.attribute(rec, *cause, verdict, detail)
		}
		s.count(cExplained, verdict, fmt.Sprintf("cause check inconclusive: %s: %s", rec, detail),
			fmt.Sprintf("drift record %s: %s", rec, detail))
	}
}

// context names what this program did just before a false drift: a change of the object's
// template in the 5 s before t, an unmatch (withdrawal) of the cluster in the minute before.
func (s *soak) context(cluster string, r objRef, t time.Time) string {
	out := ""
	for i := len(s.revHistory) - 1; i >= 0; i-- {
		c := s.revHistory[i]
		if c.template == templateOf(r) && !c.at.After(t) && t.Sub(c.at) < 5*time.Second {
			out += fmt.Sprintf("; template %s got revision %d %s before", c.template, c.rev, t.Sub(c.at).Round(time.Millisecond))
			break
		}
	}
	s.eventsMu.Lock()
	defer s.eventsMu.Unlock()
	for i := len(s.events) - 1; i >= 0; i-- {
		e := s.events[i]
		if e.cluster == cluster && e.kind == fUnmatch && !e.at.After(t) && t.Sub(e.at) < time.Minute {
			out += fmt.Sprintf("; %s was unmatched (withdrawn) %s before", cluster, t.Sub(e.at).Round(time.Millisecond))
			break
		}
	}
	return out
}

// explain finds the change of this program a record is about (see checkExplained) and says
// whether the record is explained by it; cause is that change, nil when none was found.
func (s *soak) explain(rec seenRecord) (verdict, detail string, cause *faultEvent) {
	r := objRef{rec.rec.Kind, rec.rec.Name}
	if _, ok := gvrs[r.Kind]; !ok || !(rec.rec.Namespace == appNamespace || (r.Kind == kindNamespace && r.Name == appNamespace)) {
		return "fail", "not an object this soak declares", nil
	}
	detected := rec.rec.DetectedTime.Time
	wantDelete := rec.rec.Type == holdfastv1.DriftDeleted
	f := s.causeOf(rec)
	if f == nil {
		return "fail", fmt.Sprintf("no %s of it by this program before detectedTime (a false drift?)%s", map[bool]string{true: "deletion", false: "change"}[wantDelete], s.context(rec.cluster, r, detected)), nil
	}
	if s.tl.gapOverlaps(rec.cluster, r.Kind, f.at, detected) {
		return "inconclusive", "this program's watch listed again in the interval", f
	}
	obs := s.tl.observations(rec.cluster, r)
	threshold := f.rv
	if f.deleted {
		o, ok := deletionOf(obs, f.at)
		if !ok {
			return "inconclusive", "this program's watch did not see the deletion", f
		}
		threshold = o.rv
	}
	revs := s.revisionsIn(templateOf(r), f.at.Add(-30*time.Second), detected)
	for _, o := range obs {
		if !o.exists && s.deletedByUs(rec.cluster, r, f.at, o.at) {
			// This program's own later deletion, not a put-back: absent matches a revision that
			// does not declare the object, but nobody undid the change (a watch running behind a
			// flood delivers the change after the deletion, in the soak of 2026-11-28 03:59).
			continue
		}
		if o.rv > threshold && o.at.Before(detected.Add(-time.Second)) && s.matchesRevision(r, o.obj, revs) {
			return "fail", fmt.Sprintf("the last %s by this program (sent %s) was undone at %s (rv %d), before the drift was detected (a false drift?)%s",
				f.kind, stamp(f.at), stamp(o.at), o.rv, s.context(rec.cluster, r, detected)), f
		}
	}
	return "pass", "", f
}

// checkRecord checks one record marked corrected against this program's watch of the object.
// The drift it is about is the last change this program made to the object before
// detectedTime (none: a false drift, which checkExplained reports; then the whole history
// counts). The candidates are the versions of the object newer than that change, delivered no
// later than correctedTime + tolerance and older than the next change this program made after
// correctedTime. The record is truthful if the newest candidate is as a template revision
// current around then declared it (absent, for a revision that does not declare it), or if an
// earlier one was and a change of this program made it differ again before correctedTime.
func (s *soak) checkRecord(rec seenRecord) (verdict, detail string) {
	r := objRef{rec.rec.Kind, rec.rec.Name}
	if !(rec.rec.Namespace == appNamespace || (r.Kind == kindNamespace && r.Name == appNamespace)) {
		return "inconclusive", "not an object of this soak"
	}
	if _, ok := gvrs[r.Kind]; !ok {
		return "inconclusive", "a kind this program does not watch"
	}
	detected, corrected := rec.rec.DetectedTime.Time, rec.rec.CorrectedTime.Time
	limit := corrected.Add(s.cfg.tolerance)
	obs := s.tl.observations(rec.cluster, r)
	f := s.causeOf(rec)
	from := detected.Add(-time.Second)
	threshold := int64(0)
	cause := "no change by this program before detectedTime"
	if f != nil {
		from = f.at
		cause = fmt.Sprintf("%s sent %s", f.kind, stamp(f.at))
		if f.deleted {
			o, ok := deletionOf(obs, f.at)
			if !ok {
				return "inconclusive", cause + ", but this program's watch did not see the deletion"
			}
			threshold = o.rv
		} else {
			if f.rv <= 0 {
				return "inconclusive", cause + ", revision unknown"
			}
			threshold = f.rv
			cause += fmt.Sprintf(" (rv %d)", f.rv)
		}
	}
	if s.tl.gapOverlaps(rec.cluster, r.Kind, from, limit) {
		return "inconclusive", "this program's watch listed again in the interval"
	}
	// The next change of this program after correctedTime bounds the candidates: by its
	// revision when known, else by when it was sent.
	upperRV, upperAt := int64(1<<62), limit.Add(time.Nanosecond)
	ours := map[int64]bool{} // revisions this program's writes produced
	s.eventsMu.Lock()
	for _, e := range s.events {
		if e.cluster != rec.cluster || !(e.whole || e.ref == r) {
			continue
		}
		if e.rv > 0 {
			ours[e.rv] = true
		}
		if !e.at.After(corrected) {
			continue
		}
		if e.rv > 0 && !e.whole && !e.deleted {
			upperRV = min(upperRV, e.rv)
		} else if e.at.Before(upperAt) {
			upperAt = e.at
		}
	}
	s.eventsMu.Unlock()
	revs := s.revisionsIn(templateOf(r), from.Add(-30*time.Second), limit)
	var cands []observation
	for _, o := range obs {
		if o.rv > threshold && o.rv < upperRV && o.at.Before(upperAt) && !o.at.After(limit) {
			cands = append(cands, o)
		}
	}
	if len(cands) == 0 && f == nil {
		return "inconclusive", "this program's watch saw no version of the object by then"
	}
	if n := len(cands); n > 0 && s.matchesRevision(r, cands[n-1].obj, revs) {
		return "pass", ""
	}
	for i, o := range cands {
		if !s.matchesRevision(r, o.obj, revs) {
			continue
		}
		for _, later := range cands[i+1:] {
			if ours[later.rv] || (!later.exists && s.deletedByUs(rec.cluster, r, o.at, later.at)) {
				return "pass", "" // back, then drifted again by this program before correctedTime
			}
		}
	}
	// Not as declared by then: was it later?
	for _, o := range obs {
		if o.rv > threshold && o.at.After(limit) && s.matchesRevision(r, o.obj, revs) {
			return "fail", fmt.Sprintf("the drift (%s) was undone only at %s (rv %d), %s after correctedTime, beyond the %s tolerance",
				cause, stamp(o.at), o.rv, o.at.Sub(corrected).Round(time.Millisecond), s.cfg.tolerance)
		}
	}
	var seen []string
	for _, o := range cands {
		seen = append(seen, describeObservation(s, r, o, revs))
	}
	if len(seen) > 6 {
		seen = seen[len(seen)-6:]
	}
	return "fail", fmt.Sprintf("the object was not as template %s revisions %v declare it by correctedTime + %s (drift: %s); versions seen: %s",
		templateOf(r), revs, s.cfg.tolerance, cause, orNone(seen))
}

// deletionOf is the observed deletion a deletion this program sent at sent brought (of the
// object, or of its namespace): the object's absence already seen before sent (deleted earlier,
// by another change; the namespace's deletion then changes nothing of it), else the first
// deletion seen after. A later deletion (of the object Holdfast recreated meanwhile) is not it.
func deletionOf(obs []observation, sent time.Time) (observation, bool) {
	i := slices.IndexFunc(obs, func(o observation) bool { return !o.at.Before(sent) })
	if i < 0 {
		i = len(obs)
	}
	if i > 0 && !obs[i-1].exists {
		return obs[i-1], true
	}
	for _, o := range obs[i:] {
		if !o.exists {
			return o, true
		}
	}
	return observation{}, false
}

// deletedByUs says whether a deletion of the object seen at to, after a version seen at from, is
// this program's doing: its deletion of the object sent in between, or of its namespace, or an
// unmatch of the cluster (Holdfast withdraws), up to namespaceGrace before (the namespace
// controller deletes what a terminating namespace holds, Holdfast's writes in it meanwhile too).
func (s *soak) deletedByUs(cluster string, r objRef, from, to time.Time) bool {
	const namespaceGrace = 2 * time.Minute
	s.eventsMu.Lock()
	defer s.eventsMu.Unlock()
	for _, e := range s.events {
		if e.cluster != cluster || !e.deleted || !e.at.Before(to) {
			continue
		}
		if (e.ref == r && !e.whole && e.at.After(from.Add(-time.Second))) || (e.whole && e.at.After(from.Add(-namespaceGrace))) {
			return true
		}
	}
	return false
}

func describeObservation(s *soak, r objRef, o observation, revs []int) string {
	d := "deleted"
	if o.exists {
		d = "exists"
		if decl, ok := s.declaredAt(templateOf(r), revs[len(revs)-1])[r]; ok {
			if diffs := differences(decl, o.obj); len(diffs) > 0 {
				d += ", differs from revision " + fmt.Sprint(revs[len(revs)-1]) + ": " + describeDiffs(r, diffs)
			}
		}
	}
	return fmt.Sprintf("rv %d at %s %s", o.rv, stamp(o.at), d)
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, "; ")
}

// checkController checks invariant 3's exits: every exit this program did not cause.
func (s *soak) checkController() {
	exits := s.ctrl.takeUnexpected()
	for _, e := range exits {
		s.violation("controller %s", e)
	}
	if len(exits) > 0 {
		s.checks.fail(cNoExit)
		if !s.ctrl.isRunning() {
			s.restartControllerIfDue()
		}
	} else {
		s.checks.pass(cNoExit)
	}
}

// checkLeaks scans the new part of the controller's log (for panics and planted values) and the
// hub's status objects and Events (for planted values).
func (s *soak) checkLeaks(ctx context.Context) {
	findings, err := s.logs.scan(s.sec.issued)
	if err != nil {
		s.violation("reading the controller's log: %v", err)
	}
	panics, leaks := 0, 0
	for _, f := range findings {
		if f.what == "panic" {
			panics++
			s.violation("controller log: %s", f.line)
		} else {
			leaks++
			s.violation("controller log: %s: %s", f.what, f.line)
		}
	}
	if panics > 0 {
		s.checks.fail(cNoPanic)
	} else {
		s.checks.pass(cNoPanic)
	}
	if leaks > 0 {
		s.checks.fail(cLogLeak)
	} else {
		s.checks.pass(cLogLeak)
	}

	needles := leakNeedles(s.sec.issued)
	var found []string
	scan := func(what string, obj any) {
		b, err := json.Marshal(obj)
		if err != nil {
			return
		}
		for _, n := range needles {
			if strings.Contains(string(b), n.text) {
				found = append(found, what+" ("+n.form+")")
			}
		}
	}
	lists := []struct {
		what string
		list client.ObjectList
	}{
		{"ClusterServiceStatus", &holdfastv1.ClusterServiceStatusList{}},
		{"MultiClusterService", &holdfastv1.MultiClusterServiceList{}},
		{"Cluster", &holdfastv1.ClusterList{}},
		{"Event", &corev1.EventList{}},
	}
	for _, l := range lists {
		if err := s.hub.List(ctx, l.list); err != nil {
			s.violation("listing %s on the hub for the leak scan: %v", l.what, err)
			continue
		}
		items, err := meta.ExtractList(l.list)
		if err != nil {
			continue
		}
		for _, it := range items {
			o, _ := it.(client.Object)
			if o == nil {
				continue
			}
			scan(fmt.Sprintf("%s %s/%s", l.what, o.GetNamespace(), o.GetName()), o)
		}
	}
	if len(found) > 0 {
		s.checks.fail(cStatusLeak)
		s.violation("planted Secret value found on the hub in: %s", strings.Join(found, ", "))
	} else {
		s.checks.pass(cStatusLeak)
	}
}
