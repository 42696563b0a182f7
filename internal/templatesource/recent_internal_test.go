package templatesource

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRecentConfigMapsBytes checks the byte count RecentConfigMaps bounds itself with through
// new versions, evictions and refusals.
func TestRecentConfigMapsBytes(t *testing.T) {
	r := NewRecentConfigMaps(100)
	keep := func(name, rv string, value int) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
		r.keep(cm, map[string][]byte{"k": []byte(strings.Repeat("v", value))})
	}
	for _, step := range []struct {
		what         string
		do           func()
		count, bytes int64
	}{
		{"one ConfigMap: its key and value", func() { keep("a", "1", 39) }, 1, 40},
		{"a second", func() { keep("b", "1", 29) }, 2, 70},
		{"a new version of the first replaces it", func() { keep("a", "2", 9) }, 2, 40},
		{"a third that does not fit with the others evicts the least recently kept", func() { keep("c", "1", 69) }, 2, 80},
		{"one larger than the bound is not kept, and its older version goes", func() { keep("c", "2", 100) }, 1, 10},
	} {
		step.do()
		if n, b := r.size(); int64(n) != step.count || b != step.bytes {
			t.Errorf("%s: %d ConfigMaps of %d bytes kept, want %d of %d", step.what, n, b, step.count, step.bytes)
		}
	}
}
