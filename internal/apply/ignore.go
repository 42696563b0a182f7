package apply

import (
	"reflect"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ParsePointer splits a JSON pointer (RFC 6901) into its unescaped segments. "" and "/" give
// none; ok is false when the pointer does not start with "/".
func ParsePointer(p string) ([]string, bool) {
	if p == "" {
		return nil, true
	}
	if !strings.HasPrefix(p, "/") {
		return nil, false
	}
	segs := strings.Split(p[1:], "/")
	for i, s := range segs {
		segs[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	if len(segs) == 1 && segs[0] == "" {
		return nil, true
	}
	return segs, true
}

// PointerCovers reports whether the field at path, in structured-merge-diff notation (as
// FieldValue.Path and drift field changes use, e.g. `.spec.containers[name="app"].image`), is the
// field a JSON pointer names or lies below it. A numeric or "*" pointer segment matches any list
// element, as list items are identified by key, not position, in such paths.
func PointerCovers(pointer, path string) bool {
	segs, ok := ParsePointer(pointer)
	if !ok {
		return false
	}
	rest := path
	for _, seg := range segs {
		if isIndex(seg) {
			if !strings.HasPrefix(rest, "[") {
				return false
			}
			end := closingBracket(rest)
			if end < 0 {
				return false
			}
			rest = rest[end+1:]
			continue
		}
		if !strings.HasPrefix(rest, "."+seg) {
			return false
		}
		rest = rest[len(seg)+1:]
		if rest != "" && rest[0] != '.' && rest[0] != '[' {
			return false
		}
	}
	return true
}

func isIndex(seg string) bool {
	if seg == "*" {
		return true
	}
	_, err := strconv.Atoi(seg)
	return err == nil
}

// closingBracket returns the index of the "]" closing the "[" at s[0], skipping quoted text.
func closingBracket(s string) int {
	inQuote := false
	for i := 1; i < len(s); i++ {
		switch {
		case inQuote && s[i] == '\\':
			i++
		case s[i] == '"':
			inQuote = !inQuote
		case !inQuote && s[i] == ']':
			return i
		}
	}
	return -1
}

// leaveOut removes from obj the fields named by pointers whose live value differs and that
// Holdfast does not own in live: another field manager set them, and they stay its. It returns
// the pointers it removed.
func leaveOut(obj, live *unstructured.Unstructured, pointers []string) []string {
	if len(pointers) == 0 {
		return nil
	}
	owned, _, err := OwnedFields(live, FieldManager)
	if err != nil {
		return nil // cannot tell who owns what: apply as declared
	}
	var dropped []string
	for _, p := range pointers {
		segs, ok := ParsePointer(p)
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

func ownsUnder(owned []FieldValue, pointer string) bool {
	for _, f := range owned {
		if f.Present && PointerCovers(pointer, f.Path) {
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
