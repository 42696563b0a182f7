package drift

import (
	"encoding/json"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"holdfast.dev/holdfast/internal/apply"
)

// Redacted replaces every value shown from a Secret.
const Redacted = "<redacted>"

// maxValue bounds a value shown in a field change.
const maxValue = 256

// FieldChange is one field Holdfast applied whose value someone else changed.
type FieldChange struct {
	// Path in structured-merge-diff notation, e.g. `.spec.replicas`.
	Path string
	// Old and New are JSON; "" when the field was absent. Secret values are Redacted.
	Old, New string
}

// Author is who made a change, as far as the API server recorded it in managedFields.
type Author struct {
	// Manager is the field manager; "" when unknown (deletions are not attributed).
	Manager string
	// Operation is Update or Apply; Subresource is set for changes through one (scale, status).
	Operation, Subresource string
	// Time is the time of the manager's managedFields entry.
	Time metav1.Time
}

// Diff returns the fields Holdfast owned in oldObj whose values differ in newObj, by path.
func Diff(oldObj, newObj *unstructured.Unstructured) ([]FieldChange, error) {
	before, _, err := apply.OwnedFields(oldObj, apply.FieldManager)
	if err != nil {
		return nil, err
	}
	// Read the same paths in the new object: give it the old object's field set for Holdfast.
	probe := newObj.DeepCopy()
	var mine []metav1.ManagedFieldsEntry
	for _, e := range oldObj.GetManagedFields() {
		if e.Manager == apply.FieldManager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" {
			mine = append(mine, e)
		}
	}
	probe.SetManagedFields(mine)
	after, _, err := apply.OwnedFields(probe, apply.FieldManager)
	if err != nil {
		return nil, err
	}
	now := map[string]apply.FieldValue{}
	for _, f := range after {
		now[f.Path] = f
	}
	secret := newObj.GetKind() == "Secret" && newObj.GroupVersionKind().Group == ""
	var out []FieldChange
	for _, b := range before {
		a := now[b.Path]
		hide := secret && (strings.HasPrefix(b.Path, ".data") || strings.HasPrefix(b.Path, ".stringData"))
		ov, nv := show(b, hide), show(a, hide)
		if encode(b) == encode(a) {
			continue
		}
		out = append(out, FieldChange{Path: b.Path, Old: ov, New: nv})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func encode(f apply.FieldValue) string {
	if !f.Present {
		return ""
	}
	b, err := json.Marshal(f.Value)
	if err != nil {
		return "?"
	}
	return string(b)
}

func show(f apply.FieldValue, secret bool) string {
	v := encode(f)
	if v == "" {
		return ""
	}
	if secret {
		return Redacted
	}
	if len(v) > maxValue {
		v = v[:maxValue] + "…"
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
		if e := &entries[i]; e.Manager != apply.FieldManager && len(paths) > 0 && holdsAny(newObj, e, paths) {
			return authorFrom(e)
		}
	}
	var best *metav1.ManagedFieldsEntry
	for i := range entries {
		e := &entries[i]
		if e.Manager == apply.FieldManager || e.Time == nil {
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

// holdsAny reports whether the managedFields entry e holds one of paths in obj.
func holdsAny(obj *unstructured.Unstructured, e *metav1.ManagedFieldsEntry, paths map[string]bool) bool {
	if e.FieldsV1 == nil {
		return false
	}
	// Read e's field set as if it were Holdfast's, to list its leaf paths.
	probe := obj.DeepCopy()
	probe.SetManagedFields([]metav1.ManagedFieldsEntry{{
		Manager: apply.FieldManager, Operation: metav1.ManagedFieldsOperationApply,
		APIVersion: e.APIVersion, FieldsType: e.FieldsType, FieldsV1: e.FieldsV1,
	}})
	fields, _, err := apply.OwnedFields(probe, apply.FieldManager)
	if err != nil {
		return false
	}
	for _, f := range fields {
		if paths[f.Path] {
			return true
		}
	}
	return false
}
