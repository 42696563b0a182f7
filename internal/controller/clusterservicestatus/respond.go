package clusterservicestatus

import (
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/drift"
)

// During an apply (deploy or correctDrifts), apply hands each object drift.Decide judged to
// correctFunc: the service's drift policy responds (drift.Policy.Respond) and the answer is noted
// in scope.decisions, which settleCorrections holds against what the apply did, for the status.

// objectDrift is what drift handling decided about one drifted object in this reconcile.
type objectDrift struct {
	state  holdfastv1.ResourceState
	detail *holdfastv1.DriftDetail
	// corrected: put back in this reconcile (its state is InSync then, or Contested when it is
	// corrected with the fight backoff).
	corrected bool
	message   string
}

// keepsState reports whether the object's status entry takes the decided state rather than the
// apply's: it was not corrected, or it was corrected while Contested.
func (od objectDrift) keepsState() bool {
	return !od.corrected || od.state == holdfastv1.ResourceContested
}

// driftDecisions collects, for one reconcile, the decision on every drifted object and the
// drifts found by comparison. Apply calls it concurrently.
type driftDecisions struct {
	mu      sync.Mutex
	objects map[apply.Ref]objectDrift
	// found are drift records a comparison found that no watch event reported.
	found []holdfastv1.DriftRecord
	// contested lists objects that became Contested in this reconcile.
	contested []contestedObject
	// restored are the objects whose drift waited (Drifted, Missing, Contested, Uncorrectable)
	// and that this reconcile found back as declared without Holdfast's write, with who put
	// them back.
	restored map[apply.Ref]holdfastv1.ChangeAuthor
}

// contestedObject is an object that became Contested, with its drift and the policy's message.
type contestedObject struct {
	holdfastv1.DriftRecord
	message string
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

func (d *driftDecisions) restore(ref apply.Ref, by holdfastv1.ChangeAuthor) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.restored == nil {
		d.restored = map[apply.Ref]holdfastv1.ChangeAuthor{}
	}
	d.restored[ref] = by
}

func (d *driftDecisions) addContested(c contestedObject) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.contested = append(d.contested, c)
}

func (d *driftDecisions) add(list *[]holdfastv1.DriftRecord, rec holdfastv1.DriftRecord) {
	d.mu.Lock()
	defer d.mu.Unlock()
	*list = append(*list, rec)
}

// correctFunc returns apply's Correct callback for one service: it asks the service's drift
// policy what to do about each object drift.Decide judged, and notes the answer and the drift.
func (r *Reconciler) correctFunc(s *scope, svc string, pol *drift.Policy) func(desired, live *unstructured.Unstructured, v drift.Verdict) bool {
	if !pol.Detect {
		return nil // drift is simply corrected at full reconciles, as ever
	}
	return func(desired, live *unstructured.Unstructured, v drift.Verdict) bool {
		// The live object carries the labels the attribution policy selects as declared, or
		// else the change that removed them was stamped and later ones are not (too old).
		v = v.TrustStamp(attributionInForce(s.css, desired))
		ref := unversioned(apply.RefOf(desired))
		if prev := s.previous[driftRef(ref)]; !v.Drifted && live != nil && drift.Unresolved(prev.State) {
			// Put back as declared while the drift waited: by someone else, the drift ends,
			// restored by them. Holdfast applies again all the same, which changes no value
			// and takes its fields back, so that their next change is seen.
			if by, ok := restoredBy(live, prev.LastDrift, attributionInForce(s.css, desired)); ok {
				s.decisions.restore(ref, by)
			}
			return true
		}
		detail, isNew := s.driftDetail(ref, v, r.Clock.Now())
		prev := s.previous[driftRef(ref)]
		resp := pol.Respond(v, drift.Situation{
			Key:     s.objectKey(ref),
			Service: svc, Previous: prev.State, PreviousMessage: prev.Message,
			Manual: s.requested != "", Now: s.now, Manager: detail.Manager,
		}, r.fights)
		switch {
		case resp.Record:
			if isNew {
				s.decisions.add(&s.decisions.found, holdfastv1.DriftRecord{ResourceRef: fromRef(apply.RefOf(desired)),
					Service: desired.GetLabels()[holdfastv1.ServiceLabel], DriftDetail: *detail})
			}
			s.decisions.note(ref, objectDrift{state: resp.State, detail: detail, message: resp.Message, corrected: resp.Correct})
			if resp.Contested {
				s.decisions.addContested(contestedObject{message: resp.Message,
					DriftRecord: holdfastv1.DriftRecord{ResourceRef: fromRef(apply.RefOf(desired)), Service: svc, DriftDetail: *detail}})
			}
		case !resp.Correct:
			s.decisions.note(ref, objectDrift{state: resp.State, message: resp.Message})
		}
		return resp.Correct
	}
}

// restoredBy is who put live back as declared after drift (the fields it changed, when known),
// as drift.RestoredBy says, with the stamped user only where the attribution policy is in
// force; false when it was Holdfast's own write.
func restoredBy(live *unstructured.Unstructured, drifted *holdfastv1.DriftDetail, policyInForce bool) (holdfastv1.ChangeAuthor, bool) {
	var fields []drift.FieldChange
	if drifted != nil {
		for _, f := range drifted.Fields {
			fields = append(fields, drift.FieldChange{Path: f.Path})
		}
	}
	a, ok := drift.RestoredBy(live, fields)
	a = drift.Verdict{Author: a}.TrustStamp(policyInForce).Author
	return holdfastv1.ChangeAuthor{Manager: a.Manager, Operation: a.Operation, User: a.User}, ok
}

// objectKey identifies one of the status object's managed objects for fight counting.
func (s *scope) objectKey(ref apply.Ref) drift.ObjectKey {
	return drift.ObjectKey{Status: types.NamespacedName{Namespace: s.css.Namespace, Name: s.css.Name},
		Group: ref.Group, Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name}
}

// settleCorrections holds the decisions to correct against what the apply did: a correction
// the API server refused did not happen. The drift stays open (Uncorrectable, with the API
// server's reason; its record is not marked corrected), and the attempt is not counted as a
// fight.
func (s *scope) settleCorrections(res *apply.Result, fights *drift.Fights) {
	for _, o := range res.Objects {
		if !o.Drift || o.Action != apply.Failed {
			continue
		}
		ref := unversioned(o.Ref)
		od, ok := s.decisions.get(ref)
		if !ok || !od.corrected {
			continue
		}
		fights.Forgo(s.objectKey(ref), s.now)
		s.decisions.note(ref, objectDrift{state: holdfastv1.ResourceUncorrectable, detail: od.detail,
			message: "correction refused by the API server, retried with backoff: " + o.Message})
	}
}
