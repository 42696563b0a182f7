package drift

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
)

// Ref names an object the way drift records and status entries are matched to it: group, kind,
// namespace and name, without the version.
type Ref struct {
	Group, Kind, Namespace, Name string
}

// RefOf is the Ref of the object a record or a status entry names.
func RefOf(r holdfastv1.ResourceRef) Ref {
	return Ref{Group: r.Group, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
}

func refOfObject(o *unstructured.Unstructured) Ref {
	gvk := o.GroupVersionKind()
	return Ref{Group: gvk.Group, Kind: gvk.Kind, Namespace: o.GetNamespace(), Name: o.GetName()}
}

// Superseded reports whether a drift a watch reported is no new one: Holdfast wrote the object
// after the version reported (the watch runs behind: the version is gone, put back or replaced;
// or a comparison recorded the change and corrected it before the watch's report came), or one
// of the records holds the same or a later version of the object (a second watch of the same
// kind, a comparison that recorded it without correcting). One change, one record. own may be
// nil (the records alone are asked); cluster is the Cluster own's writes are asked about.
func Superseded(own *OwnWrites, cluster types.NamespacedName, d holdfastv1.DriftRecord, records []holdfastv1.DriftRecord) bool {
	if d.ResourceVersion == "" {
		return false
	}
	gvk := schema.GroupVersionKind{Group: d.Group, Version: d.Version, Kind: d.Kind}
	if own != nil && own.Superseded(cluster, gvk, d.Namespace, d.Name, d.ResourceVersion) {
		return true
	}
	ref := RefOf(d.ResourceRef)
	for _, p := range records {
		if RefOf(p.ResourceRef) == ref &&
			(p.ResourceVersion == d.ResourceVersion || NewerVersion(p.ResourceVersion, d.ResourceVersion)) {
			return true
		}
	}
	return false
}

// DeclaredService is one service's declarations as a reconcile has them, which KeepReported judges
// the reported drifts against.
type DeclaredService struct {
	// Policy is the service's drift policy.
	Policy *Policy
	// Namespace is the namespace apply gives the service's objects declared without one.
	Namespace string
	Objects   []*unstructured.Unstructured
	// Failed: the service did not render, so Objects need not be all it declares.
	Failed bool
}

// KeepReported returns the drifts watches reported (reported, oldest first) that remain to be
// handled, and how many it dropped as Superseded (own's writes to cluster, or records, the status
// object's drift history, hold them already). It drops all of them outside
// ContinuousWithDriftDetection mode (another service set's watch on the same kind saw them:
// Continuous waits for a declaration change or a full reconcile), those of services that opted
// out, and changes only to ignored fields. It drops what Holdfast's own change of declaration
// did, which a watch compares with the declaration before: objects no longer declared (pruned,
// known only when no service failed) and fields gone that the declaration no longer names. The
// rest keep only their fields not ignored.
func KeepReported(reported []holdfastv1.DriftRecord, mode holdfastv1.SyncMode, declared []DeclaredService,
	own *OwnWrites, cluster types.NamespacedName, records []holdfastv1.DriftRecord) (kept []holdfastv1.DriftRecord, superseded int) {
	if len(reported) == 0 || mode != holdfastv1.SyncModeContinuousWithDriftDetection {
		return nil, 0
	}
	type declaration struct {
		pol *Policy
		obj *unstructured.Unstructured
	}
	byRef := map[Ref]declaration{}
	complete := true // every service rendered: what is not in byRef is not declared
	for _, d := range declared {
		if d.Failed {
			complete = false
		}
		for _, o := range d.Objects {
			ref := refOfObject(o)
			byRef[ref] = declaration{d.Policy, o}
			if ref.Namespace == "" {
				ref.Namespace = d.Namespace // as apply defaults it
				byRef[ref] = declaration{d.Policy, o}
			}
		}
	}
	for _, d := range reported {
		if Superseded(own, cluster, d, records) {
			superseded++
			continue
		}
		decl, ok := byRef[RefOf(d.ResourceRef)]
		switch {
		case !ok && complete:
			// Not declared any more: Holdfast pruned or let it go, its watch saw that.
			continue
		case !ok:
			kept = append(kept, d)
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
				if f.New == "" && !Declares(decl.obj, f.Path) {
					continue
				}
				if !Covered(f.Path, ignored) {
					fields = append(fields, f)
				}
			}
			if len(fields) == 0 && len(d.Fields) > 0 {
				continue
			}
			d.Fields = fields
		}
		kept = append(kept, d)
	}
	return kept, superseded
}

// NewReported returns the drifts watches reported (reported, oldest first) that are new, and
// how many it left out as Superseded. Left out are those a record holds already (records, the
// status object's drift history as it is now: the status object a reconcile began with may have
// been read before the previous reconcile's records were there; Holdfast's own writes are not
// asked again: a reconcile's corrections are newer than the drifts they correct). Left out too
// are deletions that are none, or none new:
//   - of an object the status object never applied (its entry desires nothing): it did not
//     drift from anything deployed. That is how a deletion Holdfast began itself ends when a
//     cluster is unmatched and matched again at once: the namespace the withdrawal deleted is
//     still terminating when the new status object deploys, which does not take it for applied
//     (apply.ErrBeingDeleted), and goes only later;
//   - of an object whose deletion is recorded already and that was not put back since: a
//     comparison found it gone before the watch event arrived (test/soak saw both recorded
//     while a terminating namespace refused the correction).
//
// previous holds the status entries from before the reconcile, of the reported objects at
// least; without them (nil: no deploy or correction ran) no deletion is left out.
func NewReported(reported, records []holdfastv1.DriftRecord, previous map[Ref]holdfastv1.ResourceStatus) (fresh []holdfastv1.DriftRecord, superseded int) {
	for _, d := range reported {
		if Superseded(nil, types.NamespacedName{}, d, records) {
			superseded++
			continue
		}
		if previous == nil {
			fresh = append(fresh, d)
			continue
		}
		prev := previous[RefOf(d.ResourceRef)]
		stillGone := prev.LastDrift != nil && prev.LastDrift.Type == holdfastv1.DriftDeleted && prev.State != holdfastv1.ResourceInSync
		if d.Type == holdfastv1.DriftDeleted && (prev.Desired == "" || stillGone) {
			continue
		}
		fresh = append(fresh, d)
	}
	return fresh, superseded
}

// DeletesContainer reports whether one of the drifts is the deletion of a Namespace or a CRD:
// what was in it went with it, and watches may never report it (the watch of a CRD's kind ends
// with the CRD), so only a full reconcile puts everything back.
func DeletesContainer(drifts []holdfastv1.DriftRecord) bool {
	for _, d := range drifts {
		if d.Type == holdfastv1.DriftDeleted && Contains(d.Group, d.Kind) {
			return true
		}
	}
	return false
}
