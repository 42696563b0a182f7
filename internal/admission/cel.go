package admission

import (
	"sort"
	"strconv"
	"strings"
)

// celList is a CEL list literal of the strings, sorted and without repeats.
func celList(items []string) string {
	seen := map[string]bool{}
	var quoted []string
	for _, it := range items {
		if it != "" && !seen[it] {
			seen[it] = true
			quoted = append(quoted, strconv.Quote(it))
		}
	}
	sort.Strings(quoted)
	return "[" + strings.Join(quoted, ", ") + "]"
}

// hasKey is a CEL test that the map at path (a field that may be absent) has key.
func hasKey(path, key string) string {
	return "has(" + path + ") && " + strconv.Quote(key) + " in " + path
}
