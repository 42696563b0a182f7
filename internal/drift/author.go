package drift

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/fieldset"
)

// Author is who made a change, as far as the API server recorded it in managedFields.
type Author struct {
	// Manager is the field manager; "" when unknown (deletions are not attributed).
	Manager string
	// Operation is Update or Apply; Subresource is set for changes through one (scale, status).
	Operation, Subresource string
	// Time is the time of the manager's managedFields entry.
	Time metav1.Time
	// User is the requester the attribution policy stamped for this change (see StampedUser);
	// "" when unknown.
	User string
}

// StampPointers are the JSON pointers of the attribution stamps (holdfastv1.ChangedByAnnotation,
// holdfastv1.ChangedAtAnnotation): never drift, whoever declares them.
var StampPointers = []string{
	"/metadata/annotations/" + escapePointer(holdfastv1.ChangedByAnnotation),
	"/metadata/annotations/" + escapePointer(holdfastv1.ChangedAtAnnotation),
}

// escapePointer escapes a JSON pointer token (RFC 6901).
func escapePointer(token string) string {
	out := make([]byte, 0, len(token)+2)
	for i := 0; i < len(token); i++ {
		switch token[i] {
		case '~':
			out = append(out, '~', '0')
		case '/':
			out = append(out, '~', '1')
		default:
			out = append(out, token[i])
		}
	}
	return string(out)
}

// MaxStampSkew is how much later than its change's managedFields time an attribution stamp may
// be dated. Both are set by the target's API servers, and the stamp is the latest managedFields
// time at the moment of the change, normally the change's own entry; an API server of a
// highly available control plane whose clock runs ahead may date another entry a little later.
// A stamp dated later still was not written by this change (someone wrote the annotations
// themselves, or planted a time in managedFields), and names no one.
const MaxStampSkew = 2 * time.Second

// StampedUser returns the user the attribution policy stamped on obj when the stamp belongs to
// the change made at changed (the time of its author's managedFields entry), else "". Whether
// the policy was in force for the object at all is the caller's to know (TrustStamp): the
// annotations alone can be written by anyone who may update the object.
//
// The policy stamps, at every update by anyone but Holdfast, the requester's user name and the
// latest managedFields time the object has at that moment: the API server has already given the
// requester's entry the time of this very update (to the second). Updates the policy does not
// stamp (Holdfast's own, status and scale subresources, a cluster without the policy) leave the
// previous stamp in place, older than their own entry. So the stamp names this change's user
// when it is dated in the second of the author's entry, or at most MaxStampSkew after it; an
// older one is another change's, a later one no change's. Within one second the two cannot be
// told apart: an unstamped change in the same second as a stamped one would be given the
// stamped one's user (docs/drift.md, Attribution, limits).
func StampedUser(obj interface{ GetAnnotations() map[string]string }, changed metav1.Time) string {
	ann := obj.GetAnnotations()
	user, at := ann[holdfastv1.ChangedByAnnotation], ann[holdfastv1.ChangedAtAnnotation]
	if user == "" || at == "" || changed.IsZero() {
		return ""
	}
	stamped, err := time.Parse(time.RFC3339, at)
	if err != nil || stamped.Before(changed.Truncate(time.Second)) || stamped.After(changed.Add(MaxStampSkew)) {
		return ""
	}
	if len(user) > maxUser {
		user = user[:maxUser]
	}
	return user
}

// maxUser bounds a stamped user name in status (DriftDetail.User).
const maxUser = 256

// TrustStamp returns v with the stamped user kept only where the attribution policy was in
// force for the object (policyInForce: Holdfast's MutatingAdmissionPolicy active on the target
// for the object's service set, and the object carrying the labels it selects), so that the
// stamp was written by the target's API server for the change. Elsewhere the annotations are
// whatever someone wrote into them, and the author is the field manager only.
func (v Verdict) TrustStamp(policyInForce bool) Verdict {
	if !policyInForce {
		v.Author.User = ""
	}
	return v
}

// AuthorOf returns who made a change: the manager, other than Holdfast, whose managedFields now
// hold one of the changed paths, or else the one with the latest entry (its times are to the
// second, so on a tie a change through the status subresource is the less likely author).
func AuthorOf(newObj *unstructured.Unstructured, changed []FieldChange) Author {
	entries := newObj.GetManagedFields()
	paths := map[string]bool{}
	for _, c := range changed {
		paths[c.Path] = true
	}
	for i := range entries {
		if e := &entries[i]; e.Manager != fieldset.FieldManager && len(paths) > 0 && holdsAny(e, paths) {
			return authorFrom(newObj, e)
		}
	}
	var best *metav1.ManagedFieldsEntry
	for i := range entries {
		e := &entries[i]
		if e.Manager == fieldset.FieldManager || e.Time == nil {
			continue
		}
		if best == nil || best.Time.Before(e.Time) ||
			(best.Time.Equal(e.Time) && best.Subresource == "status" && e.Subresource != "status") {
			best = e
		}
	}
	if best == nil {
		return Author{}
	}
	return authorFrom(newObj, best)
}

func authorFrom(obj *unstructured.Unstructured, e *metav1.ManagedFieldsEntry) Author {
	a := Author{Manager: e.Manager, Operation: string(e.Operation), Subresource: e.Subresource}
	if e.Time != nil {
		a.Time = *e.Time
	}
	if e.Subresource == "" {
		a.User = StampedUser(obj, a.Time)
	}
	return a
}

// holdsAny reports whether the managedFields entry e holds one of paths (as leaves).
func holdsAny(e *metav1.ManagedFieldsEntry, paths map[string]bool) bool {
	if e.FieldsV1 == nil {
		return false
	}
	set, err := fieldset.ParseFieldsV1(e.FieldsV1)
	if err != nil {
		return false
	}
	found := false
	set.Leaves().Iterate(func(p fieldpath.Path) {
		found = found || paths[p.String()]
	})
	return found
}

// RestoredBy returns who put live back as declared after a drift that changed fields (none for
// a deletion): the manager, other than Holdfast, whose managedFields now hold one of them, else
// the one with the latest entry (AuthorOf). ok is false when Holdfast's own write did it, as far
// as managedFields tell: its entry holds every changed field, or, after a deletion, the object
// is of its apply (a correction whose status was never recorded).
func RestoredBy(live *unstructured.Unstructured, changed []FieldChange) (a Author, ok bool) {
	sets, err := fieldset.ParseManagedFields(live, fieldset.FieldManager)
	if err == nil && sets.Entry != nil {
		own := true
		for _, c := range changed {
			held := false
			sets.Owned.Leaves().Iterate(func(p fieldpath.Path) { held = held || p.String() == c.Path })
			own = own && held
		}
		if own {
			return Author{}, false
		}
	}
	return AuthorOf(live, changed), true
}
