package drift

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

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
			return authorFrom(e)
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
	return authorFrom(best)
}

func authorFrom(e *metav1.ManagedFieldsEntry) Author {
	a := Author{Manager: e.Manager, Operation: string(e.Operation), Subresource: e.Subresource}
	if e.Time != nil {
		a.Time = *e.Time
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
