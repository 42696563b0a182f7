package fieldset

import (
	"fmt"
	"io"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// FieldManager is the server-side apply field manager of every write Holdfast makes: the owner
// whose field set package apply writes and package drift reads.
const FieldManager = "holdfast"

// FieldValue is the value of one field a manager owns in an object.
type FieldValue struct {
	// Path is the field's path in structured-merge-diff notation, for example
	// `.spec.template.spec.containers[name="app"].image`.
	Path string
	// Value is the field's value; nil when Present is false. For a map-valued field, the keys
	// other managers own are left out.
	Value any
	// Present is false when the manager's field set names the field but the object lacks it.
	Present bool
}

// OwnedFields returns the values of the leaf fields manager owns through server-side apply in
// obj (its managedFields entry with operation Apply on the main resource), sorted by path, and
// the API version that entry was recorded at. It returns nothing when manager owns nothing.
//
// Only leaves are reported: a list item or struct that manager owns only through its children
// contributes those children, so fields that defaulting or other managers add beside them do
// not show. Values of Secret data are returned as they are; redact before showing them.
func OwnedFields(obj *unstructured.Unstructured, manager string) ([]FieldValue, string, error) {
	sets, err := ParseManagedFields(obj, manager)
	if err != nil || sets.Entry == nil {
		return nil, "", err
	}
	return sets.ValuesOf(obj, sets.Owned), sets.Entry.APIVersion, nil
}

// ManagedSets are the parsed managedFields of one object, as seen by one field manager.
type ManagedSets struct {
	// Entry is the manager's entry with operation Apply on the main resource; nil if it has none.
	Entry *metav1.ManagedFieldsEntry
	// Owned is Entry's field set; empty when Entry is nil.
	Owned *fieldpath.Set
	// Others is the union of every other entry's field set on the main resource.
	Others *fieldpath.Set
}

// ParseManagedFields parses the managedFields of obj for manager (see OwnedFields).
func ParseManagedFields(obj *unstructured.Unstructured, manager string) (ManagedSets, error) {
	sets := ManagedSets{Owned: &fieldpath.Set{}, Others: &fieldpath.Set{}}
	entries := obj.GetManagedFields()
	for i := range entries {
		e := &entries[i]
		if e.FieldsV1 == nil {
			continue
		}
		if e.Manager == manager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" {
			sets.Entry = e
			continue
		}
		if e.Subresource != "" {
			continue
		}
		set, err := ParseFieldsV1(e.FieldsV1)
		if err != nil {
			return ManagedSets{}, fmt.Errorf("parsing managedFields of %q: %w", e.Manager, err)
		}
		sets.Others = sets.Others.Union(set)
	}
	if sets.Entry == nil {
		return sets, nil
	}
	owned, err := ParseFieldsV1(sets.Entry.FieldsV1)
	if err != nil {
		return ManagedSets{}, fmt.Errorf("parsing managedFields of %q: %w", manager, err)
	}
	sets.Owned = owned
	return sets, nil
}

// ValuesOf returns the values in obj of the leaves of set, which need not be obj's own (drift
// reads the fields a previous version owned), sorted by path. Keys other managers own in obj are
// left out of map values, as in OwnedFields.
func (m ManagedSets) ValuesOf(obj *unstructured.Unstructured, set *fieldpath.Set) []FieldValue {
	return ownedValues(obj.Object, set, m.Others)
}

// ParseFieldsV1 parses a managedFields entry's field set.
func ParseFieldsV1(f *metav1.FieldsV1) (*fieldpath.Set, error) { return parseJSON(f.GetRawReader()) }

// ParseFieldSet parses a field set kept as its FieldsV1 JSON (see FieldsV1.GetRawString).
func ParseFieldSet(fieldsV1 string) (*fieldpath.Set, error) {
	return parseJSON(strings.NewReader(fieldsV1))
}

func parseJSON(r io.Reader) (*fieldpath.Set, error) {
	set := &fieldpath.Set{}
	if err := set.FromJSON(r); err != nil {
		return nil, err
	}
	return set, nil
}

// ownedValues walks the leaves of owned against content. others holds the fields other
// managers own; their keys are dropped from map-valued leaves (a map declared empty, which other
// managers then filled). Pure, so it is table-tested.
func ownedValues(content map[string]any, owned, others *fieldpath.Set) []FieldValue {
	var out []FieldValue
	owned.Leaves().Iterate(func(p fieldpath.Path) {
		v, ok := Lookup(content, p)
		fv := FieldValue{Path: p.String(), Present: ok}
		if ok {
			fv.Value = withoutOthers(v, p, others)
		}
		out = append(out, fv)
	})
	return out
}

// Lookup resolves p in v (an object's content): field names in maps, keys of associative lists
// matched against the items' key fields, set values, and indices of atomic lists.
func Lookup(v any, p fieldpath.Path) (any, bool) {
	cur := v
	for _, pe := range p {
		switch {
		case pe.FieldName != nil:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			if cur, ok = m[*pe.FieldName]; !ok {
				return nil, false
			}
		case pe.Key != nil:
			item, ok := findItem(cur, func(item any) bool { return MatchesKey(item, *pe.Key) })
			if !ok {
				return nil, false
			}
			cur = item
		case pe.Value != nil:
			want := *pe.Value
			item, ok := findItem(cur, func(item any) bool { return value.Equals(value.NewValueInterface(item), want) })
			if !ok {
				return nil, false
			}
			cur = item
		case pe.Index != nil:
			l, ok := cur.([]any)
			if !ok || *pe.Index < 0 || *pe.Index >= len(l) {
				return nil, false
			}
			cur = l[*pe.Index]
		default:
			return nil, false
		}
	}
	return cur, true
}

func findItem(list any, match func(any) bool) (any, bool) {
	l, ok := list.([]any)
	if !ok {
		return nil, false
	}
	for _, item := range l {
		if match(item) {
			return item, true
		}
	}
	return nil, false
}

// MatchesKey reports whether a list item has the key k (the key fields of an associative list
// item, as a managedFields path names it).
func MatchesKey(item any, k value.FieldList) bool {
	m, ok := item.(map[string]any)
	if !ok {
		return false
	}
	for _, f := range k {
		v, ok := m[f.Name]
		if !ok || !value.Equals(value.NewValueInterface(v), f.Value) {
			return false
		}
	}
	return true
}

// withoutOthers returns v, or for a map, a copy without the keys that others own at p.
func withoutOthers(v any, p fieldpath.Path, others *fieldpath.Set) any {
	m, ok := v.(map[string]any)
	if !ok || others.Empty() {
		return v
	}
	sub := others
	for _, pe := range p {
		sub = sub.WithPrefix(pe)
		if sub.Empty() {
			return v
		}
	}
	out := make(map[string]any, len(m))
	for k, kv := range m {
		pe := fieldpath.FieldNameElement(k)
		if sub.Members.Has(pe) || !sub.WithPrefix(pe).Empty() {
			continue
		}
		out[k] = kv
	}
	return out
}
