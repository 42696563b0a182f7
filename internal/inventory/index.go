package inventory

import (
	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/drift"
)

// Index is an inventory's entries by object, whatever the API version an entry names it at (an
// object applied at another version is the same object): what a reconcile looks an object's
// previous entry up in. drift.Ref is the key the drift record rules use too.
type Index map[drift.Ref]holdfastv1.ResourceStatus

// IndexOf indexes entries by object.
func IndexOf(entries []holdfastv1.ResourceStatus) Index {
	out := make(Index, len(entries))
	for _, rs := range entries {
		out[drift.RefOf(rs.ResourceRef)] = rs
	}
	return out
}

// Of returns the entry of the object ref names, and whether there is one.
func (ix Index) Of(ref holdfastv1.ResourceRef) (holdfastv1.ResourceStatus, bool) {
	rs, ok := ix[drift.RefOf(ref)]
	return rs, ok
}

// Replace returns entries with those of the same objects as updates replaced, in place, and
// updates of other objects added at the end. entries is not modified.
func Replace(entries, updates []holdfastv1.ResourceStatus) []holdfastv1.ResourceStatus {
	pending := IndexOf(updates)
	out := make([]holdfastv1.ResourceStatus, 0, len(entries)+len(updates))
	for _, rs := range entries {
		ref := drift.RefOf(rs.ResourceRef)
		if u, ok := pending[ref]; ok {
			rs = u
			delete(pending, ref)
		}
		out = append(out, rs)
	}
	for _, u := range updates {
		if _, ok := pending[drift.RefOf(u.ResourceRef)]; ok {
			out = append(out, u)
		}
	}
	return out
}
