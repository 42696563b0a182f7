package drift

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Declares reports whether the declared object names the field at path (a FieldChange path,
// e.g. `.data.app.properties`), so that a field gone from the cluster that the declaration no
// longer names is known to have gone with a new revision rather than by someone's hand. Paths
// into lists (`[...]`) are answered true: only fields reached through maps are told apart, and
// a change the answer cannot rule out stays a drift. Map keys may hold dots: every split of the
// path is tried.
func Declares(declared *unstructured.Unstructured, path string) bool {
	if !strings.HasPrefix(path, ".") || strings.Contains(path, "[") {
		return true
	}
	return declares(declared.Object, strings.Split(path[1:], "."))
}

func declares(m map[string]any, segs []string) bool {
	for i := 1; i <= len(segs); i++ {
		v, ok := m[strings.Join(segs[:i], ".")]
		if !ok {
			continue
		}
		if i == len(segs) {
			return true
		}
		if sub, ok := v.(map[string]any); ok && declares(sub, segs[i:]) {
			return true
		}
	}
	return false
}
