package drift

import (
	"encoding/json"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"holdfast.dev/holdfast/internal/fieldset"
)

// Compare returns the declared fields whose live values differ, for drift found by comparing
// the cluster with the declaration rather than by a watch event (after an outage or a restart):
// Old is the declared value, New the live one ("" when absent). Object metadata other than
// labels and annotations, and status, are not compared. Lists of objects with a name are
// matched by name; other lists are compared whole. Secret data is redacted.
func Compare(desired, live *unstructured.Unstructured) []FieldChange {
	secret := desired.GetKind() == "Secret" && desired.GroupVersionKind().Group == ""
	c := comparison{secret: secret}
	for k, v := range desired.Object {
		switch k {
		case "apiVersion", "kind", "status":
			continue
		case "metadata":
			m, _ := v.(map[string]any)
			lm, _ := live.Object["metadata"].(map[string]any)
			for _, mk := range []string{"labels", "annotations"} {
				if dv, ok := m[mk]; ok {
					lv, lok := lm[mk]
					c.walk(".metadata."+mk, dv, lv, lok)
				}
			}
			continue
		}
		lv, ok := live.Object[k]
		c.walk("."+k, v, lv, ok)
	}
	sort.Slice(c.out, func(i, j int) bool { return c.out[i].Path < c.out[j].Path })
	return c.out
}

type comparison struct {
	secret bool
	out    []FieldChange
}

func (c *comparison) walk(path string, want, have any, present bool) {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if present && ok {
			for k, v := range w {
				hv, hok := h[k]
				c.walk(path+"."+k, v, hv, hok)
			}
			return
		}
	case []any:
		h, ok := have.([]any)
		if present && ok && namedItems(w) && namedItems(h) {
			byName := map[string]any{}
			for _, item := range h {
				byName[item.(map[string]any)["name"].(string)] = item
			}
			for _, item := range w {
				name := item.(map[string]any)["name"].(string)
				hv, hok := byName[name]
				c.walk(fmt.Sprintf("%s[name=%q]", path, name), item, hv, hok)
			}
			return
		}
	}
	if present && equalJSON(want, have) {
		return
	}
	// As the watches show values: redacted Secret data, long values cut.
	c.out = append(c.out, FieldChange{Path: path,
		Old: display(encodeValue(fieldset.FieldValue{Path: path, Value: want, Present: true}, c.secret)),
		New: display(encodeValue(fieldset.FieldValue{Path: path, Value: have, Present: present}, c.secret))})
}

// namedItems reports whether every item is an object with a string name.
func namedItems(items []any) bool {
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return false
		}
		if _, ok := m["name"].(string); !ok {
			return false
		}
	}
	return len(items) > 0
}

// equalJSON compares two values as JSON, so that int64(2) and float64(2) are equal.
func equalJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}
