package clusterservicestatus

import (
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/drift"
)

// maxRecordFields bounds the fields of one drift record (the API's MaxItems).
const maxRecordFields = 32

// objectDrift is what drift handling decided about one drifted object in this reconcile.
type objectDrift struct {
	state  holdfastv1.ResourceState
	detail *holdfastv1.DriftDetail
	// corrected: put back in this reconcile.
	corrected bool
	message   string
}

// driftDecisions collects, for one reconcile, the decision on every drifted object and the
// drifts found by comparison. Apply calls it concurrently.
type driftDecisions struct {
	mu      sync.Mutex
	objects map[apply.Ref]objectDrift
	// found are drift records a comparison found that no watch event reported.
	found []holdfastv1.DriftRecord
	// contested lists objects that became Contested in this reconcile.
	contested []holdfastv1.DriftRecord
}

func (d *driftDecisions) note(ref apply.Ref, od objectDrift) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.objects == nil {
		d.objects = map[apply.Ref]objectDrift{}
	}
	d.objects[ref] = od
}

func (d *driftDecisions) get(ref apply.Ref) (objectDrift, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	od, ok := d.objects[ref]
	return od, ok
}

// fightKey identifies one managed object of one status object.
type fightKey struct {
	status types.NamespacedName
	ref    apply.Ref
}

// fights remembers recent corrections per object, to notice another field manager reverting
// them again and again. It lives in memory: after a restart, counting starts again (objects
// already Contested stay so, from status). Objects not corrected within the longest window
// asked for are dropped, at most once per such window, so it holds only recent corrections.
type fights struct {
	mu          sync.Mutex
	corrections map[fightKey][]time.Time
	longest     time.Duration
	swept       time.Time
}

// correct records a correction at now and reports whether the object had already been
// corrected limit times within window before it: then it is contested and not corrected.
func (f *fights) correct(k fightKey, now time.Time, limit int, window time.Duration) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.corrections == nil {
		f.corrections = map[fightKey][]time.Time{}
	}
	f.longest = max(f.longest, window)
	if now.Sub(f.swept) >= f.longest {
		for other, times := range f.corrections {
			if len(times) == 0 || now.Sub(times[len(times)-1]) >= f.longest {
				delete(f.corrections, other)
			}
		}
		f.swept = now
	}
	recent := f.corrections[k][:0:0]
	for _, t := range f.corrections[k] {
		if now.Sub(t) < window {
			recent = append(recent, t)
		}
	}
	if len(recent) >= limit {
		f.corrections[k] = recent
		return false
	}
	f.corrections[k] = append(recent, now)
	return true
}

// forget drops the corrections of an object, after a manual request resumed it.
func (f *fights) forget(k fightKey) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.corrections, k)
}

// correctFunc returns apply's Correct callback for one service: it decides, for each drifted
// object, whether to put it back now, and notes the decision and the drift.
func (r *Reconciler) correctFunc(s *scope, svc string, pol *driftPolicy) func(desired, live *unstructured.Unstructured) bool {
	if !pol.detect {
		return nil // drift is simply corrected at full reconciles, as ever
	}
	statusKey := types.NamespacedName{Namespace: s.css.Namespace, Name: s.css.Name}
	return func(desired, live *unstructured.Unstructured) bool {
		ref := unversioned(apply.RefOf(desired))
		if pol.optOut {
			s.decisions.note(ref, objectDrift{state: holdfastv1.ResourceIgnored,
				message: fmt.Sprintf("service %q opted out of drift handling: changes on the cluster are kept", svc)})
			return false
		}
		var fields []drift.FieldChange
		if live != nil {
			fields = drift.Without(drift.Compare(desired, live), pol.ignoredPaths(desired))
			if len(fields) == 0 {
				// Only ignored fields (or nothing the declaration sets) differ: re-applying is
				// harmless, ignored fields are left to their owner.
				return true
			}
		}
		detail := s.driftDetail(ref, desired, live, fields)
		prev := s.previous[ref]
		manual := s.requested != ""
		key := fightKey{status: statusKey, ref: ref}
		switch {
		case manual:
			r.fights.forget(key)
		case prev.State == holdfastv1.ResourceContested:
			s.decisions.note(ref, objectDrift{state: holdfastv1.ResourceContested, detail: detail, message: prev.Message})
			return false
		case !pol.correctsNow(s.now):
			s.decisions.note(ref, objectDrift{state: reportedState(live), detail: detail,
				message: "drift reported; corrected on request (holdfast correct) or in a correction window"})
			return false
		case !r.fights.correct(key, s.now, pol.fightMax, pol.fightWindow):
			msg := fmt.Sprintf("corrected %d times in %s and changed back each time", pol.fightMax, pol.fightWindow)
			if detail.Manager != "" {
				msg += " by field manager " + detail.Manager
			}
			msg += "; not corrected until a manual request (holdfast correct)"
			s.decisions.note(ref, objectDrift{state: holdfastv1.ResourceContested, detail: detail, message: msg})
			s.decisions.mu.Lock()
			s.decisions.contested = append(s.decisions.contested, holdfastv1.DriftRecord{ResourceRef: fromRef(apply.RefOf(desired)), Service: svc, DriftDetail: *detail})
			s.decisions.mu.Unlock()
			return false
		}
		s.decisions.note(ref, objectDrift{state: holdfastv1.ResourceInSync, detail: detail, corrected: true})
		return true
	}
}

func reportedState(live *unstructured.Unstructured) holdfastv1.ResourceState {
	if live == nil {
		return holdfastv1.ResourceMissing
	}
	return holdfastv1.ResourceDrifted
}

// driftDetail returns what is known about the drift of ref: the newest drift a watch reported
// in this reconcile, else the one recorded before (the object stayed drifted), else a new one
// from comparing the declared object with the live one, which is also added to the history.
func (s *scope) driftDetail(ref apply.Ref, desired, live *unstructured.Unstructured, fields []drift.FieldChange) *holdfastv1.DriftDetail {
	for i := len(s.drifts) - 1; i >= 0; i-- {
		if unversioned(toRef(s.drifts[i].ResourceRef)) == ref {
			d := s.drifts[i].DriftDetail
			return &d
		}
	}
	if prev, ok := s.previous[ref]; ok && prev.LastDrift != nil {
		return prev.LastDrift
	}
	d := holdfastv1.DriftDetail{Type: holdfastv1.DriftDeleted, DetectedTime: metav1.NewMicroTime(s.now), Detection: holdfastv1.DriftDetectedByComparison}
	if live != nil {
		d.Type = holdfastv1.DriftChanged
		author := drift.AuthorOf(live, fields)
		d.Manager, d.Operation, d.Subresource = author.Manager, author.Operation, author.Subresource
		for i, f := range fields {
			if i == maxRecordFields {
				break
			}
			d.Fields = append(d.Fields, holdfastv1.FieldChange{Path: f.Path, Old: f.Old, New: f.New})
		}
	}
	s.decisions.mu.Lock()
	s.decisions.found = append(s.decisions.found, holdfastv1.DriftRecord{
		ResourceRef: fromRef(apply.RefOf(desired)), Service: desired.GetLabels()[holdfastv1.ServiceLabel], DriftDetail: d})
	s.decisions.mu.Unlock()
	return &d
}

// keepDrifts drops the drifts watches reported that the policy exempts: of services that opted
// out, and changes only to ignored fields. The rest keep only their fields not ignored.
func keepDrifts(s *scope, rendered []renderedService) []holdfastv1.DriftRecord {
	if len(s.drifts) == 0 {
		return nil
	}
	type declared struct {
		pol *driftPolicy
		obj *unstructured.Unstructured
	}
	byRef := map[apply.Ref]declared{}
	for _, rs := range rendered {
		pol := s.policy(rs.svc)
		for _, o := range rs.objects {
			ref := unversioned(apply.RefOf(o))
			byRef[ref] = declared{pol, o}
			if ref.Namespace == "" {
				ref.Namespace = rs.svc.Namespace // as apply defaults it
				byRef[ref] = declared{pol, o}
			}
		}
	}
	var out []holdfastv1.DriftRecord
	for _, d := range s.drifts {
		decl, ok := byRef[unversioned(toRef(d.ResourceRef))]
		if !ok {
			out = append(out, d)
			continue
		}
		if decl.pol.optOut {
			continue
		}
		if d.Type == holdfastv1.DriftChanged {
			ignored := decl.pol.ignoredPaths(decl.obj)
			var fields []holdfastv1.FieldChange
			for _, f := range d.Fields {
				if !drift.Covered(f.Path, ignored) {
					fields = append(fields, f)
				}
			}
			if len(fields) == 0 && len(d.Fields) > 0 {
				continue
			}
			d.Fields = fields
		}
		out = append(out, d)
	}
	return out
}
