package drift

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	holdfastv1 "holdfast.dev/holdfast/api/v1alpha1"
	"holdfast.dev/holdfast/internal/fieldset"
)

// What counts as drift is decided in this file, and only here. The watches (a changed version
// of an object against the one before), the apply path (the live object against the
// declaration, when it is no longer as Holdfast left it) and so the comparison after an outage
// or a restart (which runs the apply path) all call Decide. The rule:
//
//   - An object exempted on the cluster (Exempt) is never drift; the callers leave it alone.
//   - A deleted object is always drift.
//   - A changed object drifted when a field Holdfast declared has another value (or is gone),
//     unless an ignore rule covers it (a JSON pointer, see Covered). Fields Holdfast never
//     declared — defaulting, status, other managers' fields and list items, metadata churn —
//     are not compared at all.
//   - A changed field that Holdfast's own field manager still holds with a value is claimed
//     (Verdict.Claimed), not drift by itself: Holdfast wrote it (a new declaration applied, its
//     own correction), or someone else did under Holdfast's field manager name, which anyone
//     may use. The name proves nothing: the caller says whether the write was Holdfast's own,
//     from its record of its own writes (OwnWrites on the watch path, the owned digest of the
//     last apply on the apply path), and ResolveClaim turns a write that was not into drift.
//   - The author is the field manager that now holds a changed field (see AuthorOf), and the
//     user the attribution policy stamped on the object for this change, if it did.
//   - The attribution stamps (StampPointers) are never drift, whoever declares them.

// Verdict is what Decide found about one managed object.
type Verdict struct {
	// Drifted is true when the object is gone or a field it declares counts as changed.
	Drifted bool
	// Deleted is true when the object is gone.
	Deleted bool
	// Fields are the changed fields that count, by path (none for a deletion). Secret values
	// are Redacted; long values are cut.
	Fields []FieldChange
	// Author made the change, as far as managedFields tell (unknown for a deletion); for a
	// claimed change, Holdfast's own apply entry.
	Author Author
	// Claimed are the changed fields that Holdfast's own field manager holds, when no other
	// field changed (Drifted is false then): Holdfast's own write, or someone else's under its
	// field manager name. See ResolveClaim.
	Claimed []FieldChange
	// ResourceVersion is the version of the object judged; empty for a missing object.
	ResourceVersion string
}

// ResolveClaim returns the verdict once the caller knows whether the write that made a claimed
// change was Holdfast's own: own, it is no drift; not own, the claimed fields are drift, made
// by whoever wrote as Holdfast's field manager (the user, if the attribution stamp names one).
// A verdict without claimed fields is returned as it is.
func (v Verdict) ResolveClaim(own bool) Verdict {
	switch {
	case len(v.Claimed) == 0:
		return v
	case own:
		return Verdict{ResourceVersion: v.ResourceVersion}
	}
	return Verdict{Drifted: true, Fields: v.Claimed, Author: v.Author, ResourceVersion: v.ResourceVersion}
}

// Declared is what an object is compared against: the declaration (Declaration), or, on the
// watch path, the values Holdfast owned in the version before (a Snapshot).
type Declared interface {
	// candidates returns the declared fields whose values differ in live, before the rules of
	// Decide drop any.
	candidates(live observed) []FieldChange
}

// observed is a live object with its managedFields parsed for Holdfast.
type observed struct {
	obj    *unstructured.Unstructured
	sets   fieldset.ManagedSets
	secret bool
}

// Declaration is the object as declared now (labelled and defaulted as applied), to compare a
// live object with.
func Declaration(desired *unstructured.Unstructured) Declared { return declaration{desired} }

type declaration struct{ obj *unstructured.Unstructured }

func (d declaration) candidates(live observed) []FieldChange { return Compare(d.obj, live.obj) }

// Decide says whether live (nil when the object is gone) drifted from what was declared,
// leaving out the fields the JSON pointers in ignored cover.
func Decide(declared Declared, live *unstructured.Unstructured, ignored []string) Verdict {
	if live == nil {
		return Verdict{Drifted: true, Deleted: true}
	}
	sets, err := fieldset.ParseManagedFields(live, fieldset.FieldManager)
	if err != nil {
		// Who owns what cannot be read, so neither can what Holdfast still holds: compare the
		// values alone.
		sets = fieldset.ManagedSets{Owned: &fieldpath.Set{}, Others: &fieldpath.Set{}}
	}
	v := decide(declared, observed{obj: live, sets: sets, secret: isSecret(live)}, ignored)
	v.ResourceVersion = live.GetResourceVersion()
	return v
}

func decide(declared Declared, live observed, ignored []string) Verdict {
	fields, claimed := splitClaimed(Without(Without(declared.candidates(live), ignored), StampPointers), live)
	switch {
	case len(fields) > 0:
		return Verdict{Drifted: true, Fields: fields, Author: AuthorOf(live.obj, fields)}
	case len(claimed) > 0:
		return Verdict{Claimed: claimed, Author: authorFrom(live.obj, live.sets.Entry)}
	}
	return Verdict{}
}

// splitClaimed separates the changes of fields Holdfast's field manager still holds, with a
// value, in the live object (claimed) from the others: another manager's Update or forced
// Apply takes the fields it changes, so a field Holdfast's manager still holds was written
// under that name — by Holdfast, or by someone using its name.
func splitClaimed(changes []FieldChange, live observed) (others, claimed []FieldChange) {
	if len(changes) == 0 || live.sets.Entry == nil {
		return changes, nil
	}
	mine := map[string]bool{}
	for _, f := range live.sets.ValuesOf(live.obj, live.sets.Owned) {
		if f.Present {
			mine[f.Path] = true
		}
	}
	for _, c := range changes {
		if mine[c.Path] {
			claimed = append(claimed, c)
		} else {
			others = append(others, c)
		}
	}
	return others, claimed
}

// Without returns the changes no JSON pointer covers.
func Without(changes []FieldChange, pointers []string) []FieldChange {
	if len(pointers) == 0 {
		return changes
	}
	out := changes[:0:0]
	for _, ch := range changes {
		if !Covered(ch.Path, pointers) {
			out = append(out, ch)
		}
	}
	return out
}

// Covered reports whether one of the JSON pointers covers the field at path (see
// fieldset.PointerCovers).
func Covered(path string, pointers []string) bool {
	for _, p := range pointers {
		if fieldset.PointerCovers(p, path) {
			return true
		}
	}
	return false
}

// Exempt reports whether someone on the cluster exempted a live object from drift handling
// (holdfastv1.DriftIgnoreAnnotation "true"): its changes are neither reported nor corrected.
func Exempt(live interface{ GetAnnotations() map[string]string }) bool {
	return live.GetAnnotations()[holdfastv1.DriftIgnoreAnnotation] == "true"
}
