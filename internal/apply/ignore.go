package apply

import (
	"reflect"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"holdfast.dev/holdfast/internal/fieldset"
)

// leaveOut removes from obj the fields named by pointers whose live value differs and that
// Holdfast does not own in live: another field manager set them, and they stay its. It returns
// the pointers it removed.
func leaveOut(obj, live *unstructured.Unstructured, pointers []string) []string {
	if len(pointers) == 0 {
		return nil
	}
	owned, _, err := fieldset.OwnedFields(live, fieldset.FieldManager)
	if err != nil {
		return nil // cannot tell who owns what: apply as declared
	}
	var dropped []string
	for _, p := range pointers {
		segs, ok := fieldset.ParsePointer(p)
		if !ok || len(segs) == 0 {
			continue
		}
		want, ok := lookupPointer(obj.Object, segs)
		if !ok {
			continue
		}
		if have, ok := lookupPointer(live.Object, segs); ok && reflect.DeepEqual(want, have) {
			continue
		}
		if ownsUnder(owned, p) {
			continue // Holdfast still sets it: the declaration decides
		}
		if removePointer(obj.Object, segs) {
			dropped = append(dropped, p)
		}
	}
	return dropped
}

func ownsUnder(owned []fieldset.FieldValue, pointer string) bool {
	for _, f := range owned {
		if f.Present && fieldset.PointerCovers(pointer, f.Path) {
			return true
		}
	}
	return false
}

func lookupPointer(v any, segs []string) (any, bool) {
	for _, seg := range segs {
		switch t := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = t[seg]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(t) {
				return nil, false
			}
			v = t[i]
		default:
			return nil, false
		}
	}
	return v, true
}

func removePointer(root map[string]any, segs []string) bool {
	parent, ok := lookupPointer(root, segs[:len(segs)-1])
	if !ok {
		return false
	}
	last := segs[len(segs)-1]
	switch t := parent.(type) {
	case map[string]any:
		if _, ok := t[last]; !ok {
			return false
		}
		delete(t, last)
		return true
	case []any:
		i, err := strconv.Atoi(last)
		if err != nil || i < 0 || i >= len(t) {
			return false
		}
		// Replace the list in its parent: slices cannot shrink in place through an interface.
		shorter := append(append([]any{}, t[:i]...), t[i+1:]...)
		if len(segs) == 1 {
			return false
		}
		grand, _ := lookupPointer(root, segs[:len(segs)-2])
		switch g := grand.(type) {
		case map[string]any:
			g[segs[len(segs)-2]] = shorter
			return true
		case []any:
			j, _ := strconv.Atoi(segs[len(segs)-2])
			g[j] = shorter
			return true
		}
	}
	return false
}
