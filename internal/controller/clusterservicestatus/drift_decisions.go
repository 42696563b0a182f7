package clusterservicestatus

import (
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/apply"
	"holdfast.dev/holdfast/internal/drift"
	"holdfast.dev/holdfast/internal/metrics"
)

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
		if prev := s.previous[ref]; !v.Drifted && live != nil && drift.Unresolved(prev.State) {
			// Put back as declared while the drift waited: by someone else, the drift ends,
			// restored by them. Holdfast applies again all the same, which changes no value
			// and takes its fields back, so that their next change is seen.
			if by, ok := restoredBy(live, prev.LastDrift, attributionInForce(s.css, desired)); ok {
				s.decisions.restore(ref, by)
			}
			return true
		}
		detail, isNew := s.driftDetail(ref, v, r.Clock.Now())
		prev := s.previous[ref]
		resp := pol.Respond(v, drift.Situation{
			Key:     s.objectKey(ref),
			Service: svc, Previous: prev.State, PreviousMessage: prev.Message,
			Manual: s.requested != "", Now: s.now, Manager: detail.Manager,
		}, r.memory.fights)
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

// newlyIn lists the objects this reconcile left in one of states that were not there before
// with the same drift: what a Warning Event and a notification are sent for once per drift, not
// per reconcile.
func newlyIn(s *scope, states ...holdfastv1.ResourceState) []holdfastv1.ResourceStatus {
	var out []holdfastv1.ResourceStatus
	for _, rs := range s.resources {
		if !slices.Contains(states, rs.State) {
			continue
		}
		if p, ok := s.previous[unversioned(toRef(rs.ResourceRef))]; ok && p.State == rs.State && sameDrift(p.LastDrift, rs.LastDrift) {
			continue
		}
		out = append(out, rs)
	}
	return out
}

// retryUncorrectable returns when the reconcile should come back to retry refused corrections
// (drift.RetryAfter of the oldest), or 0 when there are none. Corrections a service's policy
// makes only on request (Report outside its windows) are not retried on their own.
func retryUncorrectable(s *scope) time.Duration {
	var after time.Duration
	for _, rs := range s.resources {
		if rs.State != holdfastv1.ResourceUncorrectable || rs.LastDrift == nil || !s.correctsNow(rs.Service) {
			continue
		}
		if d := drift.RetryAfter(rs.LastDrift.DetectedTime.Time, s.now); after == 0 || d < after {
			after = d
		}
	}
	return after
}

// driftDetail returns what is known about the drift of ref: the newest drift a watch reported
// in this reconcile, else the one recorded before (the object stayed drifted), else a new one
// from the verdict on the live object (isNew: it goes into the history if it counts), detected
// at compared, when the comparison was made: a reconcile can read an object changed after it
// began, so its start (s.now) could precede the change.
//
// A drift a record holds is not new, even when the object's status entry no longer says so: an
// apply that failed (the cluster unreachable) leaves the entry Failed, without its drift, and
// the object found still drifted afterwards is the same change (test/soak saw it recorded twice,
// by a watch and by the comparison after the cluster came back).
func (s *scope) driftDetail(ref apply.Ref, v drift.Verdict, compared time.Time) (detail *holdfastv1.DriftDetail, isNew bool) {
	for i := len(s.drifts) - 1; i >= 0; i-- {
		if unversioned(toRef(s.drifts[i].ResourceRef)) == ref {
			d := s.drifts[i].DriftDetail
			return &d, false
		}
	}
	if prev, ok := s.previous[ref]; ok && prev.LastDrift != nil {
		return prev.LastDrift, false
	}
	if rec := s.recordOfVersion(ref, v.ResourceVersion); rec != nil {
		d := rec.DriftDetail
		return &d, false
	}
	d := drift.DetailOf(v, compared, holdfastv1.DriftDetectedByComparison)
	return &d, true
}

// recordOfVersion returns the newest record of ref about version resourceVersion, nil if none
// (or the version is unknown, or no status object was read).
func (s *scope) recordOfVersion(ref apply.Ref, resourceVersion string) *holdfastv1.DriftRecord {
	if resourceVersion == "" || s.css == nil {
		return nil
	}
	records := s.css.Status.Drifts
	for i := range records { // newest first
		if rec := &records[i]; rec.ResourceVersion == resourceVersion && unversioned(toRef(rec.ResourceRef)) == ref {
			return rec
		}
	}
	return nil
}

// keepDrifts drops the drifts watches reported that the policy exempts: all of them outside
// ContinuousWithDriftDetection mode (another service set's watch on the same kind saw them:
// Continuous waits for a declaration change or a full reconcile), those of services that opted
// out, and changes only to ignored fields. It drops what Holdfast's own change of declaration
// did, which a watch compares with the declaration before: objects no longer declared (pruned)
// and fields gone that the declaration no longer names. The rest keep only their fields not
// ignored.
func keepDrifts(s *scope, rendered []renderedService) []holdfastv1.DriftRecord {
	if len(s.drifts) == 0 || s.mcs.Spec.SyncMode != holdfastv1.SyncModeContinuousWithDriftDetection {
		return nil
	}
	type declared struct {
		pol *drift.Policy
		obj *unstructured.Unstructured
	}
	byRef := map[apply.Ref]declared{}
	complete := true // every service rendered: what is not in byRef is not declared
	for _, rs := range rendered {
		if rs.err != nil {
			complete = false
		}
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
		if superseded(s.ownWrites, s.clusterKey(), d, s.css.Status.Drifts) {
			metrics.DriftEventIgnored(metrics.IgnoredSuperseded)
			continue
		}
		decl, ok := byRef[unversioned(toRef(d.ResourceRef))]
		switch {
		case !ok && complete:
			// Not declared any more: Holdfast pruned or let it go, its watch saw that.
			continue
		case !ok:
			out = append(out, d)
			continue
		}
		if decl.pol.OptOut {
			continue
		}
		if d.Type == holdfastv1.DriftChanged {
			ignored := decl.pol.IgnoredPaths(decl.obj)
			var fields []holdfastv1.FieldChange
			for _, f := range d.Fields {
				// A field gone that the declaration no longer names went with a new revision.
				if f.New == "" && !drift.Declares(decl.obj, f.Path) {
					continue
				}
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

// superseded reports whether a drift a watch reported is no new one: Holdfast wrote the object
// after the version reported (the watch runs behind: the version is gone, put back or replaced;
// or a comparison recorded the change and corrected it before the watch's report came), or one
// of the records holds the same or a later version of the object (a second watch of the same
// kind, a comparison that recorded it without correcting). One change, one record.
func superseded(own *drift.OwnWrites, cluster types.NamespacedName, d holdfastv1.DriftRecord, records []holdfastv1.DriftRecord) bool {
	if d.ResourceVersion == "" {
		return false
	}
	gvk := schema.GroupVersionKind{Group: d.Group, Version: d.Version, Kind: d.Kind}
	if own != nil && own.Superseded(cluster, gvk, d.Namespace, d.Name, d.ResourceVersion) {
		return true
	}
	ref := unversioned(toRef(d.ResourceRef))
	for _, p := range records {
		if unversioned(toRef(p.ResourceRef)) == ref &&
			(p.ResourceVersion == d.ResourceVersion || drift.NewerVersion(p.ResourceVersion, d.ResourceVersion)) {
			return true
		}
	}
	return false
}

// clusterKey is the key of the Cluster the status object is of.
func (s *scope) clusterKey() types.NamespacedName {
	return types.NamespacedName{Namespace: s.css.Namespace, Name: s.css.Spec.Cluster}
}

// correctsNow reports whether the drift policy of the named service corrects drift now on its
// own; false for a service the service set no longer declares.
func (s *scope) correctsNow(service string) bool {
	for _, svc := range s.mcs.Spec.Services {
		if svc.Name == service {
			return s.policy(svc).CorrectsNow(s.now)
		}
	}
	return false
}
