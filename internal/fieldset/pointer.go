package fieldset

import (
	"strconv"
	"strings"
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
